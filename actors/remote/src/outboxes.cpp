// The send side: outboxes, direct sends, batches in flight (invariants in
// outboxes.hpp).
#include "outboxes.hpp"

#include <stdexcept>
#include <string>
#include <thread>

#include "troupe/defaults/remote.hpp"
#include "troupe/detail/futex.hpp"

namespace troupe::remote::detail {

namespace cfg = troupe::defaults::remote;

namespace {

// Takes an outbox lock from a sending thread without ever switching user
// threads. The frame being shipped may live in the calling kernel thread's
// scratch buffer (scratch()). troupe::spinlock's slow path yields a user
// thread's processor: another user thread on this kernel thread could then
// build its own frame in the same buffer, and the first, resumed (perhaps on
// another kernel thread), would ship that frame instead of its own: one
// message twice, the other never.
// Invariant: nothing between begin_frame and the append can switch the
// calling user thread out. Holders keep the lock for an append, a swap or
// one MPI call and never park or yield meanwhile, so spinning (then
// yielding the kernel thread to the OS) always ends.
void lock_no_switch(troupe::spinlock& l) noexcept {
    for (int spins = 0; !l.try_lock(); ++spins) {
        if (spins < 64) troupe::detail::cpu_relax();
        else std::this_thread::yield();  // the kernel thread, never the user thread
    }
}

}  // namespace

outboxes::outboxes(int rank, int size, MPI_Comm comm, const peer_states& peers, engine_waker& waker,
                   traffic_counts& traffic, loop_back_fn loop_back, void* loop_back_arg)
    : rank_(rank),
      size_(size),
      comm_(comm),
      peers_(peers),
      waker_(waker),
      traffic_(traffic),
      loop_back_(loop_back),
      loop_back_arg_(loop_back_arg),
      out_(new outbox[static_cast<std::size_t>(size)]) {}

void outboxes::finish() noexcept {
    for (int r = 0; r < size_; ++r) {
        outbox& o = out_[static_cast<std::size_t>(r)];
        if (o.direct_req == MPI_REQUEST_NULL) continue;
        if (!peers_.ended(r)) {
            MPI_Wait(&o.direct_req, MPI_STATUS_IGNORE);
        } else {
            // Nobody receives it any more: let MPI forget it and keep its
            // buffer (MPI may still read it).
            MPI_Request_free(&o.direct_req);
            (void)new byte_buffer(std::move(o.direct_buf));
        }
    }
    for (in_flight& f : flying_) {  // batches to ended ranks (the others completed)
        MPI_Request_free(&f.req);
        (void)new byte_buffer(std::move(f.buf));
    }
    flying_.clear();
}

void outboxes::ship(int to, const byte_buffer& frame) {
    std::size_t queued = 0;
    if (!ship_or_full(to, frame, queued))
        throw std::length_error("troupe::remote: " + std::to_string(queued) +
                                " bytes wait unsent for rank " + std::to_string(to) +
                                "; this frame would take the batch over the " +
                                std::to_string(batch_limit_.load(std::memory_order_relaxed)) +
                                "-byte limit of one MPI message");
}

bool outboxes::ship_or_full(int to, const byte_buffer& frame, std::size_t& queued) {
    if (to < 0 || to >= size_)
        throw std::out_of_range("troupe::remote: rank " + std::to_string(to) +
                                " does not exist (the job has " + std::to_string(size_) +
                                " ranks)");
    if (peers_.ended(to)) throw peers_.lost_error(to, "a message for it");
    outbox& o = out_[static_cast<std::size_t>(to)];
    lock_no_switch(o.lock);  // not o.lock.lock(): see lock_no_switch
    if (cfg::direct_send && to != rank_ && o.buf.empty()) {
        bool posted;
        try {
            posted = post_direct(o, to, frame);
        } catch (...) {
            o.lock.unlock();
            throw;
        }
        if (posted) {
            o.lock.unlock();
            // Dekker with the engine's park (as for outbox frames, with a
            // flag): either it stays awake and polls closely (a reply may
            // come back; an incomplete send needs testing), or it is asleep
            // and we wake it.
            waker_.kick();
            return true;
        }
    }
    if (o.buf.size() + frame.size() > batch_limit_.load(std::memory_order_relaxed)) {
        queued = o.buf.size();
        o.lock.unlock();
        return false;
    }
    try {
        o.buf.append(frame.data(), frame.size());
    } catch (...) {
        o.lock.unlock();
        throw;
    }
    ++o.frames;
    o.bytes.store(o.buf.size(), std::memory_order_seq_cst);
    o.lock.unlock();
    waker_.wake();  // after the append: the other half of the park's recheck
    return true;
}

bool outboxes::post_direct(outbox& o, int to, const byte_buffer& frame) {
    // Under o.lock with o.buf empty: nothing shipped to `to` before us is
    // still unposted, so posting now keeps the order.
    if (o.direct_req != MPI_REQUEST_NULL) {
        int done = 0;
        MPI_Test(&o.direct_req, &done, MPI_STATUS_IGNORE);
        if (!done) return false;  // its buffer is still MPI's: use the outbox
        o.direct_busy.store(false, std::memory_order_seq_cst);
        direct_pending_.fetch_sub(1, std::memory_order_relaxed);
    }
    o.direct_buf.clear();
    o.direct_buf.append(frame.data(), frame.size());                // may throw: nothing posted
    traffic_.batches_sent.fetch_add(1, std::memory_order_seq_cst);  // before it is posted
    traffic_.frames_sent.fetch_add(1, std::memory_order_relaxed);
    MPI_Isend(o.direct_buf.data(), static_cast<int>(o.direct_buf.size()), MPI_BYTE, to, data_tag,
              comm_, &o.direct_req);
    int done = 0;
    MPI_Test(&o.direct_req, &done, MPI_STATUS_IGNORE);  // small frames complete at once (eager)
    if (!done) {
        // The engine tests it from now on (complete_direct).
        direct_pending_.fetch_add(1, std::memory_order_relaxed);
        o.direct_busy.store(true, std::memory_order_seq_cst);
    }
    return true;
}

bool outboxes::complete_direct() {
    bool did = false;
    for (int r = 0; r < size_; ++r) {
        outbox& o = out_[static_cast<std::size_t>(r)];
        if (!o.direct_busy.load(std::memory_order_relaxed)) continue;  // a hint; set under the lock
        o.lock.lock();
        if (o.direct_req != MPI_REQUEST_NULL) {
            int done = 0;
            MPI_Test(&o.direct_req, &done, MPI_STATUS_IGNORE);
            if (done) {
                o.direct_busy.store(false, std::memory_order_seq_cst);
                direct_pending_.fetch_sub(1, std::memory_order_relaxed);
                did = true;
            }
        }
        o.lock.unlock();
    }
    return did;
}

void outboxes::send_raw(int to, const void* bytes, std::size_t n) {
    std::lock_guard g{raw_lock_};
    traffic_.batches_sent.fetch_add(1, std::memory_order_seq_cst);
    MPI_Send(bytes, static_cast<int>(n), MPI_BYTE, to, data_tag, comm_);
}

bool outboxes::busy() noexcept {
    for (int r = 0; r < size_; ++r) {
        const outbox& o = out_[static_cast<std::size_t>(r)];
        if (peers_.ended(r)) continue;  // nobody receives there any more
        if (o.bytes.load(std::memory_order_seq_cst) != 0 ||
            o.direct_busy.load(std::memory_order_seq_cst))
            return true;
    }
    return flying_count_.load(std::memory_order_seq_cst) != 0;
}

bool outboxes::any_queued() noexcept {
    for (int r = 0; r < size_; ++r) {
        outbox& o = out_[static_cast<std::size_t>(r)];
        o.lock.lock();
        const bool some = !o.buf.empty();
        o.lock.unlock();
        if (some) return true;
    }
    return false;
}

byte_buffer outboxes::take_spare() {
    if (spares_.empty()) return byte_buffer{};
    byte_buffer b = std::move(spares_.back());
    spares_.pop_back();
    return b;
}

bool outboxes::flush() {
    bool did = false;
    for (int r = 0; r < size_; ++r) {
        outbox& o = out_[static_cast<std::size_t>(r)];
        if (o.bytes.load(std::memory_order_relaxed) == 0) continue;  // a hint; see outbox
        if (r != rank_ && peers_.ended(r)) {
            // Frames queued before its goodbye was seen: nobody receives
            // them (the asks among them failed with rank_lost).
            o.lock.lock();
            o.buf.clear();
            o.frames = 0;
            o.bytes.store(0, std::memory_order_seq_cst);
            o.lock.unlock();
            continue;
        }
        if (r != rank_ && flying_.size() >= cfg::max_in_flight) continue;
        byte_buffer b = take_spare();
        // Room for the batch before the lock (no throw under it).
        if (r != rank_ && flying_.size() == flying_.capacity())
            flying_.reserve(2 * flying_.size() + 4);
        std::uint64_t frames;
        o.lock.lock();
        o.buf.swap(b);
        frames = o.frames;
        o.frames = 0;
        // Counted as sent before the outbox reads empty.
        traffic_.batches_sent.fetch_add(1, std::memory_order_seq_cst);
        if (r != rank_) {
            // Posted under the lock: a direct send shipped after these
            // frames is posted after them (per-pair FIFO).
            flying_.push_back(in_flight{MPI_REQUEST_NULL, std::move(b), r});
            flying_count_.fetch_add(1, std::memory_order_seq_cst);  // to a live rank (above)
            in_flight& f = flying_.back();
            MPI_Isend(f.buf.data(), static_cast<int>(f.buf.size()), MPI_BYTE, r, data_tag, comm_,
                      &f.req);
        }
        o.bytes.store(0, std::memory_order_seq_cst);
        o.lock.unlock();
        traffic_.frames_sent.fetch_add(frames, std::memory_order_relaxed);
        did = true;
        if (r == rank_) {  // loop back without MPI
            loop_back_(loop_back_arg_, b.data(), b.size());
            b.clear();
            spares_.push_back(std::move(b));
        }
    }
    return did;
}

bool outboxes::complete_sends() {
    bool did = false;
    std::size_t keep = 0, live = 0;
    for (std::size_t i = 0; i < flying_.size(); ++i) {
        int done = 0;
        MPI_Test(&flying_[i].req, &done, MPI_STATUS_IGNORE);
        if (done) {
            flying_[i].buf.clear();
            spares_.push_back(std::move(flying_[i].buf));
            did = true;
        } else {
            if (!peers_.ended(flying_[i].to)) ++live;
            if (keep != i) flying_[keep] = std::move(flying_[i]);
            ++keep;
        }
    }
    flying_.resize(keep);
    // Sends to ended ranks may never complete (nobody receives them): they
    // keep neither the engine hot nor the world's drain waiting.
    flying_count_.store(live, std::memory_order_seq_cst);
    return did;
}

}  // namespace troupe::remote::detail
