// Ranks that end. A world being destroyed says goodbye to every other rank:
// a frame shipped after everything it sent there (per-pair FIFO), carrying
// how many collectives it entered. A rank that receives it marks the sender
// ended and fails, at once and naming it, every ask and lookup awaiting it;
// later asks, lookups and sends to it fail before anything is queued; and a
// collective the ended rank never entered (a barrier, a stop round) fails
// instead of waiting for it. Collectives are numbered from 1 on every rank
// (the k-th ones match, MPI's rule), so the count tells exactly which ones
// the ended rank took part in: those complete, the later ones never do.
#include <string>

#include "engine.hpp"

namespace troupe::remote::detail {

rank_lost engine::lost_error(int r, const std::string& what) const {
    return rank_lost(r, rank_lost::reason::ended,
                     "troupe::remote: rank " + std::to_string(rank) + ": " + what + " needs rank " +
                         std::to_string(r) +
                         ", which has ended (its world was destroyed: it returned from main, "
                         "early or late, or unwound); it answers no more");
}

void engine::say_goodbye(std::uint64_t collectives) noexcept {
    ending_.store(true, std::memory_order_seq_cst);
    for (int r = 0; r < size; ++r) {
        if (r == rank) continue;
        try {
            byte_buffer b;
            begin_frame(b, frame_kind::goodbye, "", 0, 0, 0);
            byte_writer w{b};
            put(w, collectives);
            end_frame(b);
            ship(r, b);
        } catch (...) {
            // That rank ended too (rank_lost), or no memory for a frame of
            // 48 bytes: it learns nothing, as if this rank had crashed.
        }
    }
}

void engine::handle_goodbye(const frame_header&, byte_reader& payload, int from) {
    std::uint64_t collectives = 0;
    try {
        get(payload, collectives);
    } catch (const std::exception& e) {
        report(from, "",
               "troupe::remote: rank " + std::to_string(rank) +
                   " received a malformed goodbye from rank " + std::to_string(from) + ": " +
                   e.what());
        return;
    }
    if (from == rank || ended(from)) return;
    // seq_cst: the other half of register_ask's and lookup's Dekker pair
    // (they register, then load ended_; we store, then scan).
    ended_[static_cast<std::size_t>(from)].store(static_cast<std::int64_t>(collectives),
                                                 std::memory_order_seq_cst);
    fail_awaiting(from);
    if (options_.on_rank_lost && !ending_.load(std::memory_order_seq_cst)) {
        try {
            options_.on_rank_lost(lost_error(from, "this rank"));
        } catch (...) {}
    }
}

void engine::fail_awaiting(int r) {
    // Asks: each slot is taken as a reply would take it (handle_reply), so
    // that a destructor racing with the failure waits for it (completing_).
    for (;;) {
        troupe::detail::request_tag* q = nullptr;
        ask_complete_fn fn = nullptr;
        std::string_view name;
        bool found = false;
        asks_lock_.lock();
        for (std::uint32_t idx = 0; idx < asks_.size(); ++idx) {
            ask_slot& s = asks_[idx];
            if ((!s.q && !s.abandoned) || s.to != r) continue;
            q = s.q;
            fn = s.fn;
            name = s.name;
            s.q = nullptr;
            s.abandoned = false;
            s.next_free = free_ask_;
            free_ask_ = idx + 1;
            if (q) completing_.store(q, std::memory_order_release);  // see handle_reply
            found = true;
            break;
        }
        asks_lock_.unlock();
        if (!found) break;
        if (!q) continue;  // abandoned: uncounted already, nobody waits
        awaiting_.fetch_sub(1, std::memory_order_seq_cst);
        try {
            byte_buffer b;
            byte_writer w{b};
            put(w, std::string{rank_ended_marker});
            put(w, std::string{lost_error(r, "ask \"" + std::string{name} + "\"").what()});
            byte_reader rd{b.data(), b.size()};
            fn(*q, frame_kind::reply_error, rd, r);
        } catch (...) {
            // No memory for the error: the request stays unanswered (its
            // asker waits, as for any reply that could not be built).
        }
        completing_.store(nullptr, std::memory_order_release);  // q may go now
    }
    // Lookups.
    std::vector<pending_lookup> failed;
    {
        std::lock_guard g{lookups_mutex_};
        for (auto it = lookups_.begin(); it != lookups_.end();) {
            if (it->second.to != r) {
                ++it;
                continue;
            }
            failed.push_back(std::move(it->second));
            it = lookups_.erase(it);
        }
    }
    for (pending_lookup& l : failed) {
        awaiting_.fetch_sub(1, std::memory_order_seq_cst);
        lookup_answer a;
        a.lost = lost_error(r, "lookup of \"" + l.name + "\"").what();
        l.done(a);
    }
}

std::uint64_t engine::begin_collective(const char* what) {
    const std::uint64_t k = collectives_.load(std::memory_order_relaxed) + 1;
    if (const int r = collective_blocked(k); r >= 0) throw lost_error(r, what);
    collectives_.store(k, std::memory_order_relaxed);
    return k;
}

int engine::collective_blocked(std::uint64_t k) const noexcept {
    for (int r = 0; r < size; ++r) {
        const std::int64_t n = ended_[static_cast<std::size_t>(r)].load(std::memory_order_seq_cst);
        if (n >= 0 && static_cast<std::uint64_t>(n) < k) return r;
    }
    return -1;
}

}  // namespace troupe::remote::detail
