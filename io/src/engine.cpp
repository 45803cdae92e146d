// The I/O engine: the descriptor table, the readiness protocol (queue,
// wake, close), the epoll and io_uring back ends and the poller thread.
// (About 700 lines: the back ends drive the table through the readiness
// protocol's generation and close invariants, stated once, here.)
#include "engine.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

#include "troupe/config.hpp"
#include "troupe/context.hpp"
#include "troupe/detail/service_thread.hpp"
#include "troupe/detail/timer.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/detail/wake_source.hpp"
#include "troupe/knobs.hpp"

#if defined(TROUPE_HAS_IO_URING)
#include <liburing.h>
#endif

namespace troupe::io {

namespace {
std::string message(const char* op, int fd) {
    std::string m = "troupe::io: ";
    m += op;
    if (fd >= 0) m += " on fd " + std::to_string(fd);
    return m;
}
}  // namespace

error::error(int errno_value, const char* operation, int fd)
    : std::system_error(errno_value, std::generic_category(), message(operation, fd)),
      operation_(operation),
      fd_(fd) {}

error::error(std::error_code code, const char* operation, int fd, const std::string& what)
    : std::system_error(code, what), operation_(operation), fd_(fd) {}

timeout_error::timeout_error(const char* operation, int fd)
    : error(std::make_error_code(std::errc::timed_out), operation, fd,
            message(operation, fd) + ": the deadline passed") {}

closed_error::closed_error(const char* operation, int fd)
    : error(std::make_error_code(std::errc::bad_file_descriptor), operation, fd,
            message(operation, fd) +
                ": the descriptor was closed (io::close) before or while the call waited") {}

bool io_uring_built() noexcept {
#if defined(TROUPE_HAS_IO_URING)
    return true;
#else
    return false;
#endif
}

const char* engine_name() { return detail::the_engine().name(); }

namespace detail {

[[noreturn]] void throw_errno(int err, const char* op, int fd) {
    if (err == EMFILE || err == ENFILE) {
        std::string m = message(op, fd) + ": " + std::strerror(err) +
                        (err == EMFILE ? " (the process's RLIMIT_NOFILE is reached: raise it with "
                                         "`ulimit -n` or setrlimit(RLIMIT_NOFILE))"
                                       : " (the system-wide limit fs.file-max is reached)");
        throw error(std::error_code(err, std::generic_category()), op, fd, m);
    }
    throw error(err, op, fd);
}

// ---------------------------------------------------------------------------
// The descriptor table: chunks of records, made on first use of a number
// and never freed (records are reused by later registrations of the same
// number; their generation tells registrations apart). malloc'ed, not
// operator new'd: it is a process-wide cache like the stack pool.

namespace {
constexpr int chunk_bits = 10;
constexpr std::size_t chunk_size = std::size_t{1} << chunk_bits;
constexpr std::size_t max_chunks = 4096;  // 4 Mi descriptors
std::atomic<poll_desc*> chunks[max_chunks];
std::mutex chunk_mutex;

poll_desc* chunk_of(int fd, bool make) {
    const std::size_t c = std::size_t(fd) >> chunk_bits;
    if (c >= max_chunks) {
        if (!make) return nullptr;
        throw error(std::make_error_code(std::errc::value_too_large), "register", fd,
                    message("register", fd) + ": descriptor numbers above " +
                        std::to_string(max_chunks * chunk_size) + " are not supported");
    }
    // acquire: the records' construction happens before their use.
    poll_desc* chunk = chunks[c].load(std::memory_order_acquire);
    if (chunk || !make) return chunk;
    std::lock_guard g{chunk_mutex};
    chunk = chunks[c].load(std::memory_order_acquire);
    if (chunk) return chunk;
    void* mem = std::calloc(chunk_size, sizeof(poll_desc));
    if (!mem) throw std::bad_alloc();
    chunk = static_cast<poll_desc*>(mem);
    for (std::size_t i = 0; i < chunk_size; ++i) {
        ::new (&chunk[i]) poll_desc();
        chunk[i].fd = int((c << chunk_bits) + i);
    }
    chunks[c].store(chunk, std::memory_order_release);
    return chunk;
}
}  // namespace

poll_desc* find_desc(int fd) noexcept {
    if (fd < 0) return nullptr;
    poll_desc* chunk = chunk_of(fd, false);
    return chunk ? &chunk[std::size_t(fd) & (chunk_size - 1)] : nullptr;
}

std::pair<poll_desc*, std::uint32_t> attach(int fd) {
    if (fd < 0) throw error(EBADF, "register", fd);
    poll_desc& pd = chunk_of(fd, true)[std::size_t(fd) & (chunk_size - 1)];
    std::uint64_t s = pd.state.load(std::memory_order_acquire);
    if ((s & poll_desc::open_bit) && !(s & poll_desc::closing_bit))
        return {&pd, poll_desc::gen_of(s)};
    engine& e = the_engine();
    std::lock_guard g{pd.lock};
    s = pd.state.load(std::memory_order_acquire);
    if (s & poll_desc::closing_bit) throw closed_error("register", fd);
    if (s & poll_desc::open_bit) return {&pd, poll_desc::gen_of(s)};
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw_errno(errno, "register", fd);
    const int fl = ::fcntl(fd, F_GETFL);
    if (fl < 0) throw_errno(errno, "register", fd);
    if (!(fl & O_NONBLOCK) && ::fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
        throw_errno(errno, "register", fd);
    const std::uint32_t gen = poll_desc::gen_of(s) + 1;
    pd.is_socket = S_ISSOCK(st.st_mode);
    pd.always_ready = S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode);
    if (!pd.always_ready) {
        try {
            e.watch(pd, gen);
        } catch (const error& x) {
            // epoll refuses what cannot wait (EPERM): it is always ready.
            if (x.code().value() != EPERM) throw;
            pd.always_ready = true;
        }
    }
    // release: the registration (flags, engine) happens before a call that
    // sees the open bit uses it.
    pd.state.store((std::uint64_t(gen) << 32) | poll_desc::open_bit, std::memory_order_release);
    return {&pd, gen};
}

op_ref::op_ref(poll_desc& pd, std::uint32_t gen, const char* op) : pd_(pd) {
    std::uint64_t s = pd.state.load(std::memory_order_acquire);
    for (;;) {
        if (poll_desc::gen_of(s) != gen || !(s & poll_desc::open_bit) ||
            (s & poll_desc::closing_bit))
            throw closed_error(op, pd.fd);
        // acquire: see the registration; a close that sets closing after
        // this CAS waits for our release before it closes the number.
        if (pd.state.compare_exchange_weak(s, s + 1, std::memory_order_acquire,
                                           std::memory_order_acquire))
            return;
    }
}

op_ref::~op_ref() {
    // acq_rel: our use of the descriptor happens before the close that the
    // last release performs.
    const std::uint64_t s = pd_.state.fetch_sub(1, std::memory_order_acq_rel) - 1;
    if ((s & poll_desc::closing_bit) && (s & poll_desc::ref_mask) == 0) finish_close(pd_);
}

namespace {
// Claims, for a readiness event, the nodes of `q`: a call's node (its
// wait) always (the call retries its system call, so a stale event costs
// one EAGAIN); a waituntil clause's node only if the descriptor is ready
// now (poll): a chosen clause runs its operation at once, so an event
// left over from data already read (edges are hints) must not choose it.
// Nodes not claimed stay queued, in order, for the next event.
void claim_ready(poll_desc& pd, node_queue& q, node_queue& wake, short events) noexcept {
    node_queue keep;
    int level = -1;  // -1: not asked yet
    while (select_node* n = q.pop_front()) {
        if (n->record<io_record>().clause) {
            if (level < 0) {
                ::pollfd p{pd.fd, events, 0};
                level = ::poll(&p, 1, 0) > 0 ? 1 : 0;
            }
            if (level == 0) {
                keep.push_back(*n);
                continue;
            }
        }
        if (!n->try_claim()) continue;  // its statement was won elsewhere
        n->record<io_record>().reason = wake_reason::ready;
        wake.defer_wake(*n);
    }
    while (select_node* n = keep.pop_front()) q.push_back(*n);
}
}  // namespace

void dispatch(poll_desc& pd, std::uint32_t gen, bool readable, bool writable) noexcept {
    node_queue wake;
    pd.lock.lock();
    const std::uint64_t s = pd.state.load(std::memory_order_relaxed);
    if (poll_desc::gen_of(s) != gen || !(s & poll_desc::open_bit)) {
        pd.lock.unlock();
        return;  // an event of an earlier registration of this number
    }
    if (readable) {
        pd.rseq.fetch_add(1, std::memory_order_relaxed);
        claim_ready(pd, pd.readers, wake, POLLIN);
    }
    if (writable) {
        pd.wseq.fetch_add(1, std::memory_order_relaxed);
        claim_ready(pd, pd.writers, wake, POLLOUT);
    }
    pd.lock.unlock();
    wake.unpark_all();
}

void finish_close(poll_desc& pd) noexcept {
    // All under the lock: the engine's re-arm of an ended watch (io_uring)
    // checks the state under it too, so either it re-armed before (and the
    // unwatch removes that watch) or it sees the record closed; and a
    // registration of the number (after ::close returned it to the kernel)
    // waits for the reset.
    std::lock_guard g{pd.lock};
    const std::uint32_t gen = poll_desc::gen_of(pd.state.load(std::memory_order_acquire));
    if (!pd.always_ready) the_engine().unwatch(pd, gen);
    pd.state.store(std::uint64_t(gen) << 32, std::memory_order_release);
    ::close(pd.fd);
}

namespace {

std::string describe_wait(const void* resource) {
    const auto* w = static_cast<const wait_info*>(resource);
    std::string s = "fd " + std::to_string(w->fd) + ", " + w->op;
    if (w->bytes) s += ", " + std::to_string(w->bytes) + " bytes";
    ::sockaddr_storage ss{};
    ::socklen_t len = sizeof ss;
    if (::getpeername(w->fd, reinterpret_cast<::sockaddr*>(&ss), &len) == 0) {
        try {
            s += ", peer " + address::from(reinterpret_cast<::sockaddr*>(&ss), len).to_string();
        } catch (...) {}
    }
    return s;
}

const troupe::detail::wait_describer io_describer{&describe_wait, nullptr, "held by"};

// A timer that only claims its node (no record): a file operation's deadline.
void on_claim_timer(troupe::detail::timer_node& t) noexcept {
    auto* n = static_cast<select_node*>(t.arg);
    if (n->try_claim()) n->wake();
}

constexpr auto unsat = std::uintptr_t(select_status::unsat);

// Whether the node that won `status` (one of the waiter's own nodes) made
// its last touch of it: the waiter may leave.
bool winner_released(const std::atomic<std::uintptr_t>& status) noexcept {
    const std::uintptr_t st = status.load(std::memory_order_acquire);
    return st > std::uintptr_t(select_status::run) &&
           reinterpret_cast<const select_node*>(st)->released();
}

void on_timer(troupe::detail::timer_node& t) noexcept {
    // Under the timer lock, which the waiter's cancel takes before it
    // leaves: the node is alive here.
    auto* n = static_cast<select_node*>(t.arg);
    if (!n->try_claim()) return;
    n->record<io_record>().reason = wake_reason::timeout;
    n->wake();
}

std::int64_t steady_ns(deadline::clock::time_point t) noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
}  // namespace

void throw_cancelled(const char* op, int fd) {
    throw troupe::cancelled(message(op, fd) +
                            ": cancelled (stop requested before the operation completed; "
                            "nothing was transferred)");
}

void trace_wait(const wait_info& info, std::uint64_t t0) noexcept {
    if (t0 != 0) troupe::detail::trace::io_wait(info.op, info.fd, info.bytes, t0);
}

wake_reason wait_ready(poll_desc& pd, std::uint32_t gen, bool write, std::uint32_t seen,
                       const deadline& d, const stop_token& tok, const wait_info& info) noexcept {
    if (tok.stop_requested()) return wake_reason::cancelled;
    if (d.is_set() && d.at() <= deadline::clock::now()) return wake_reason::timeout;
    std::atomic<std::uintptr_t> status{0};
    context& me = this_context();
    // n: the descriptor's node (the poller, the timer and close claim it);
    // sn: the stop's node. Both on one exclusive status word: one winner.
    select_node n(me, status), sn(me, status);
    io_record rec;
    n.attach(rec);
    node_queue& q = write ? pd.writers : pd.readers;
    std::atomic<std::uint32_t>& seq = write ? pd.wseq : pd.rseq;
    pd.lock.lock();
    const std::uint64_t s = pd.state.load(std::memory_order_relaxed);
    if (poll_desc::gen_of(s) != gen || (s & poll_desc::closing_bit)) {
        pd.lock.unlock();
        return wake_reason::closed;
    }
    // The poller bumps `seq` under this lock: unchanged means no event came
    // since the caller's try, so the next one will find the node queued.
    if (seq.load(std::memory_order_relaxed) != seen) {
        pd.lock.unlock();
        return wake_reason::ready;
    }
    q.push_back(n);
    pd.lock.unlock();
    troupe::detail::timer_node t;
    if (d.is_set()) {
        t.deadline = d.at();
        t.fire = &on_timer;
        t.arg = &n;
        try {
            troupe::detail::timer_arm(t);
        } catch (...) {
            // No memory for the timer: wait without it would ignore the
            // deadline; report a timeout instead once the node is ours.
            pd.lock.lock();
            const bool removed = q.remove(n);
            pd.lock.unlock();
            if (removed) return wake_reason::timeout;
            t.fire = nullptr;
        }
    }
    // A token registers only while nothing won yet (a won word needs no
    // stop; its wake is owed). Claimed at registration (a stop requested
    // since the check above): no unpark comes, so no park.
    bool stop_registered = false, stopped_now = false;
    if (tok.stop_possible() && status.load(std::memory_order_acquire) == unsat) {
        stop_registered = true;
        stopped_now = tok.register_select(sn);
    }
    if (!stopped_now) {
        const char* kind = write ? "io wait (write)" : "io wait (read)";
        troupe::detail::wait_scope ws(kind, info.op, &info, &io_describer,
                                      d.is_set() ? steady_ns(d.at()) : 0);
        time_wait_now();  // engine.hpp: why now
        const std::uint64_t t0 = troupe::detail::trace::on() ? troupe::detail::trace::now() : 0;
        // Exactly one unpark comes (the winner's): park at least once to
        // take it even if the release is already visible (leaving with it
        // banked would end an unrelated later park early); a stray earlier
        // permit cannot end the wait (the release is re-checked).
        do {
            troupe::detail::trace::note_park(kind);
            park();
        } while (!winner_released(status));
        trace_wait(info, t0);
    }
    if (t.fire) troupe::detail::timer_cancel(t);
    if (stop_registered) tok.unregister_select(sn);
    // Still queued if the timer or the stop won: unlink before the node
    // goes away.
    pd.lock.lock();
    q.remove(n);
    pd.lock.unlock();
    if (status.load(std::memory_order_acquire) == reinterpret_cast<std::uintptr_t>(&sn))
        return wake_reason::cancelled;
    return rec.reason;
}

// ---------------------------------------------------------------------------
// Waituntil readiness clauses

bool ready_clause::register_select(select_node& n) {
    auto [pd, gen] = attach(fd_);
    pd_ = pd;
    gen_ = gen;
    n.attach(rec_);
    std::atomic<std::uint32_t>& seq = write_ ? pd->wseq : pd->rseq;
    node_queue& q = write_ ? pd->writers : pd->readers;
    for (;;) {
        const std::uint32_t seen = seq.load(std::memory_order_acquire);
        if (pd->always_ready) return n.try_claim();
        ::pollfd p{fd_, short(write_ ? POLLOUT : POLLIN), 0};
        int r = ::poll(&p, 1, 0);
        if (r > 0) return n.try_claim();
        std::lock_guard g{pd->lock};
        const std::uint64_t s = pd->state.load(std::memory_order_relaxed);
        if (poll_desc::gen_of(s) != gen || (s & poll_desc::closing_bit)) {
            if (!n.try_claim()) return false;
            rec_.reason = wake_reason::closed;
            return true;
        }
        if (seq.load(std::memory_order_relaxed) != seen) continue;  // an event came: look again
        q.push_back(n);
        return false;
    }
}

bool ready_clause::unregister_select(select_node& n) noexcept {
    if (!pd_) return false;
    std::lock_guard g{pd_->lock};
    (write_ ? pd_->writers : pd_->readers).remove(n);
    return false;
}

bool ready_clause::on_selected(select_node&) {
    if (rec_.reason == wake_reason::closed) {
        if (std::uncaught_exceptions() > 0) return false;
        throw closed_error(write_ ? "wait_writable" : "wait_readable", fd_);
    }
    return true;
}

// ---------------------------------------------------------------------------
// Back ends

namespace {

void block_signals_and_start(void* (*fn)(void*), void* arg) {
    const int rc = troupe::detail::start_service_thread(fn, arg);
    if (rc != 0) throw error(rc, "start the io poller thread", -1);
}

// A poll's key: the descriptor in the low 32 bits, the generation's low 30
// bits above (bits 62 and 63 tag io_uring completions).
constexpr std::uint32_t gen_mask = 0x3fffffffu;
std::uint64_t key(int fd, std::uint32_t gen) noexcept {
    return (std::uint64_t(gen & gen_mask) << 32) | std::uint32_t(fd);
}
void dispatch_key(std::uint64_t k, bool r, bool w) noexcept {
    const int fd = int(std::uint32_t(k));
    if (poll_desc* pd = find_desc(fd)) {
        // Only the low 30 bits of the generation travel in the key.
        const std::uint32_t gen = poll_desc::gen_of(pd->state.load(std::memory_order_acquire));
        if ((gen & gen_mask) == (std::uint32_t(k >> 32) & gen_mask)) dispatch(*pd, gen, r, w);
    }
}

class epoll_engine final : public engine {
public:
    epoll_engine() {
        ep_ = ::epoll_create1(EPOLL_CLOEXEC);
        if (ep_ < 0) throw_errno(errno, "epoll_create1", -1);
        block_signals_and_start(&run, this);
    }
    const char* name() const noexcept override { return "epoll"; }
    void watch(poll_desc& pd, std::uint32_t gen) override {
        ::epoll_event ev{};
        ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
        ev.data.u64 = key(pd.fd, gen);
        if (::epoll_ctl(ep_, EPOLL_CTL_ADD, pd.fd, &ev) == 0) return;
        // Still registered: the number was closed with ::close while another
        // descriptor kept the file open (dup). Take the registration over.
        if (errno == EEXIST && ::epoll_ctl(ep_, EPOLL_CTL_MOD, pd.fd, &ev) == 0) return;
        throw error(errno, "register (epoll_ctl)", pd.fd);
    }
    void unwatch(poll_desc& pd, std::uint32_t) noexcept override {
        ::epoll_event ev{};
        ::epoll_ctl(ep_, EPOLL_CTL_DEL, pd.fd, &ev);
    }

private:
    static void* run(void* self) {
        troupe::detail::name_this_kernel_thread("troupe-io");
        troupe::detail::trace::label_thread("io poller (epoll)", troupe::detail::trace::no_index,
                                            nullptr);
        auto* e = static_cast<epoll_engine*>(self);
        ::epoll_event evs[256];
        for (;;) {
            const int n = ::epoll_wait(e->ep_, evs, 256, -1);
            for (int i = 0; i < n; ++i) {
                const std::uint32_t m = evs[i].events;
                dispatch_key(evs[i].data.u64, m & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR),
                             m & (EPOLLOUT | EPOLLHUP | EPOLLERR));
            }
        }
        return nullptr;
    }
    int ep_ = -1;
};

#if defined(TROUPE_HAS_IO_URING)
// io_uring: one multishot poll per descriptor gives the same edges as
// epoll's EPOLLET; regular-file reads and writes are submitted as
// operations and their submitter parks until the completion.
class uring_engine final : public engine {
public:
    // Throws the errno of io_uring_queue_init (ENOSYS, EPERM, ...).
    uring_engine() {
        ::io_uring_params p{};
        p.flags = IORING_SETUP_CQSIZE;
        p.cq_entries = 65536;
        const int rc = ::io_uring_queue_init_params(4096, &ring_, &p);
        if (rc < 0) throw error(-rc, "io_uring_queue_init", -1);
        try {
            block_signals_and_start(&run, this);
        } catch (...) {
            ::io_uring_queue_exit(&ring_);
            throw;
        }
    }
    const char* name() const noexcept override { return "io_uring"; }
    // The poll is armed by the poller thread, not here. A poll's wake-ups
    // run as task work on the thread that submitted it: armed by a
    // processor, every readiness event first woke that processor (asleep
    // on its futex) to post the completion, then the poller, then the
    // processor again for the unpark (4.0 context switches per echo at 1
    // connection on a quiet machine against epoll's 3.1). Here we queue the
    // key and submit a no-op whose completion (posted at once, by this
    // submission) tells the poller to arm what is queued. No edge is lost
    // meanwhile: a poll reports the descriptor's state when it is armed,
    // and the arm wakes both directions (rearm).
    void watch(poll_desc& pd, std::uint32_t gen) override {
        std::lock_guard g{sq_};
        pd.arm_gen = gen;  // queued already: an earlier registration, closed since
        if (!pd.arm_queued) {
            pd.arm_queued = true;
            pd.arm_next = arms_;
            arms_ = &pd;
        }
        if (arm_requested_) return;  // the poller has not taken the last batch yet
        arm_requested_ = true;
        ::io_uring_sqe* sqe = get_sqe();
        ::io_uring_prep_nop(sqe);
        ::io_uring_sqe_set_data64(sqe, arm_tag);
        submit();
    }
    void unwatch(poll_desc& pd, std::uint32_t gen) noexcept override {
        std::lock_guard g{sq_};
        remove_poll(key(pd.fd, gen));
    }
    bool async_files() const noexcept override { return true; }
    // The completion, the timer and the stop race for one exclusive status
    // word (nodes cn, tn, sn). The completion winning ends the wait. The
    // timer or the stop winning makes the waiter submit an ASYNC_CANCEL of
    // the operation and wait again, for the completion (the kernel holds the
    // buffer until it comes): that second wait is a handshake on
    // `rec.late` (0: the waiter has not looked yet, 1: it parks for the
    // completion, 2: completed), so the completion unparks it exactly once,
    // and only if it parks (each phase owes one unpark, never two at once).
    long file_op(bool write, int fd, void* buf, std::size_t n, ::off_t offset, const deadline& d,
                 const stop_token& tok, wake_reason& ended) noexcept override {
        ended = wake_reason::none;
        std::atomic<std::uintptr_t> status{unsat};
        context& me = this_context();
        select_node cn(me, status), tn(me, status), sn(me, status);
        file_record rec;
        rec.node = &cn;
        rec.waiter = &me;
        {
            std::lock_guard g{sq_};
            ::io_uring_sqe* sqe = get_sqe();
            if (write) ::io_uring_prep_write(sqe, fd, buf, unsigned(n), std::uint64_t(offset));
            else ::io_uring_prep_read(sqe, fd, buf, unsigned(n), std::uint64_t(offset));
            ::io_uring_sqe_set_data(sqe, &rec);
            // release: the record's writes happen before the poller's (the
            // kernel's hand-over is invisible to TSan; this makes it seen).
            rec.submitted.store(true, std::memory_order_release);
            submit();
        }
        wait_info info{fd, write ? "file write" : "file read", n};
        outside_calls.fetch_add(1, std::memory_order_relaxed);
        troupe::detail::timer_node t;
        bool claimed_now = false;  // won without a wake (no unpark owed)
        if (d.is_set()) {
            t.deadline = d.at();
            t.fire = &on_claim_timer;
            t.arg = &tn;
            try {
                troupe::detail::timer_arm(t);
            } catch (...) {
                // No memory for the timer: the deadline counts as passed.
                t.fire = nullptr;
                claimed_now = tn.try_claim();
            }
        }
        bool stop_registered = false;
        if (!claimed_now && tok.stop_possible() &&
            status.load(std::memory_order_acquire) == unsat) {
            stop_registered = true;
            claimed_now = tok.register_select(sn);
        }
        {
            troupe::detail::wait_scope ws("io wait (file)", info.op, &info, &io_describer,
                                          d.is_set() ? steady_ns(d.at()) : 0);
            time_wait_now();  // engine.hpp: why now
            const std::uint64_t t0 = troupe::detail::trace::on() ? troupe::detail::trace::now() : 0;
            if (!claimed_now) {
                do {  // takes the winner's one unpark (see wait_ready)
                    troupe::detail::trace::note_park("io wait (file)");
                    park();
                } while (!winner_released(status));
            }
            const std::uintptr_t st = status.load(std::memory_order_acquire);
            if (st != reinterpret_cast<std::uintptr_t>(&cn)) {
                ended = st == reinterpret_cast<std::uintptr_t>(&sn) ? wake_reason::cancelled
                                                                    : wake_reason::timeout;
                {
                    std::lock_guard g{sq_};
                    ::io_uring_sqe* sqe = get_sqe();
                    ::io_uring_prep_cancel64(sqe, reinterpret_cast<std::uintptr_t>(&rec), 0);
                    ::io_uring_sqe_set_data64(sqe, ignore_tag);
                    submit();
                }
                // acq_rel: see the result the completion wrote before its 2.
                if (rec.late.exchange(1, std::memory_order_acq_rel) != 2) {
                    do {
                        troupe::detail::trace::note_park("io wait (file)");
                        park();
                    } while (rec.late.load(std::memory_order_acquire) != 2);
                }
            }
            trace_wait(info, t0);
        }
        if (t.fire) troupe::detail::timer_cancel(t);
        if (stop_registered) tok.unregister_select(sn);
        outside_calls.fetch_sub(1, std::memory_order_relaxed);
        return rec.res;
    }

private:
    static constexpr std::uint64_t poll_tag = std::uint64_t(1) << 63;
    static constexpr std::uint64_t remove_tag = std::uint64_t(1) << 62;

    // Submits the removal of the poll `k` (sq_ held); its completion comes
    // back tagged, so a removal that did not take can be repeated.
    void remove_poll(std::uint64_t k) noexcept {
        ::io_uring_sqe* sqe = get_sqe();
        ::io_uring_prep_poll_remove(sqe, poll_tag | k);
        ::io_uring_sqe_set_data64(sqe, remove_tag | k);
        submit();
    }
    static constexpr std::uint64_t ignore_tag = 1;  // no record is at an odd address
    static constexpr std::uint64_t arm_tag = 3;     // watch's no-op: arm what arms_ holds
    struct file_record {
        select_node* node = nullptr;  // the completion's node (cn)
        context* waiter = nullptr;
        long res = 0;
        std::atomic<bool> submitted{false};
        std::atomic<int> late{0};  // after a lost race: see file_op
    };

    ::io_uring_sqe* get_sqe() noexcept {
        for (;;) {
            if (::io_uring_sqe* s = ::io_uring_get_sqe(&ring_)) return s;
            ::io_uring_submit(&ring_);  // the ring is full: make room
        }
    }
    void submit() noexcept {
        while (::io_uring_submit(&ring_) == -EINTR) {}
    }

    void complete(::io_uring_cqe* c) noexcept {
        const std::uint64_t ud = ::io_uring_cqe_get_data64(c);
        if (ud == ignore_tag) return;
        if (ud == arm_tag) {
            arm_queued();
            return;
        }
        if (ud & remove_tag) {
            // EALREADY: the poll was completing an event and was not
            // cancelled; it would go on holding the (closed) descriptor's
            // file open (the peer would never see it closed). Again.
            if (c->res == -EALREADY) {
                std::lock_guard g{sq_};
                remove_poll(ud & ~remove_tag);
            }
            return;
        }
        if (ud & poll_tag) {
            const std::uint64_t k = ud & ~poll_tag;
            if (c->res >= 0) {
                const unsigned m = unsigned(c->res);
                dispatch_key(k, m & (POLLIN | POLLRDHUP | POLLHUP | POLLERR),
                             m & (POLLOUT | POLLHUP | POLLERR));
            }
            if (!(c->flags & IORING_CQE_F_MORE) && c->res != -ECANCELED) rearm(k);
            return;
        }
        auto* rec = reinterpret_cast<file_record*>(ud);
        (void)rec->submitted.load(std::memory_order_acquire);  // pairs with file_op's store
        rec->res = c->res;
        if (rec->node->try_claim()) {
            rec->node->unpark_waiter();  // last touch of the record
            return;
        }
        // The deadline or the stop won first: the waiter cancels and waits
        // for this completion. Read the waiter before the exchange (after
        // it the record may be gone); unpark only if it parks (it saw 0 and
        // stored 1 first), else it sees 2 and does not park.
        context* const w = rec->waiter;
        troupe::detail::wake_guard g{*w};  // it may see 2 and leave before our unpark
        if (rec->late.exchange(2, std::memory_order_acq_rel) == 1) unpark(*w);
    }

    // The poller thread: arms the polls watch() queued (see watch).
    void arm_queued() noexcept {
        poll_desc* pd;
        {
            std::lock_guard g{sq_};
            pd = arms_;
            arms_ = nullptr;
            arm_requested_ = false;
        }
        while (pd) {
            std::uint64_t k;
            poll_desc* next;
            {
                // A watch of the same record may queue it again from here on.
                std::lock_guard g{sq_};
                k = key(pd->fd, pd->arm_gen);
                next = pd->arm_next;
                pd->arm_queued = false;
            }
            rearm(k);
            pd = next;
        }
    }

    // Arms the poll of `k` (its first arm, or again after a multishot poll
    // ended on its own: an overflowing completion queue, an error) if the
    // registration is current, and wakes both directions (what ended it
    // may have been an edge). The poller thread only (see watch).
    void rearm(std::uint64_t k) noexcept {
        const int fd = int(std::uint32_t(k));
        poll_desc* pd = find_desc(fd);
        if (!pd) return;
        std::uint32_t gen;
        {
            // Under the record's lock, as finish_close: a watch is never
            // re-armed on a number that is being closed (it would hold the
            // file open, or watch the number's next descriptor).
            std::lock_guard g{pd->lock};
            const std::uint64_t s = pd->state.load(std::memory_order_acquire);
            gen = poll_desc::gen_of(s);
            if (!(s & poll_desc::open_bit) || (s & poll_desc::closing_bit) ||
                (gen & gen_mask) != std::uint32_t(k >> 32))
                return;
            std::lock_guard q{sq_};
            ::io_uring_sqe* sqe = get_sqe();
            ::io_uring_prep_poll_multishot(sqe, fd, POLLIN | POLLOUT | POLLRDHUP);
            ::io_uring_sqe_set_data64(sqe, poll_tag | k);
            submit();
        }
        dispatch(*pd, gen, true, true);
    }

    static void* run(void* self) {
        troupe::detail::name_this_kernel_thread("troupe-io");
        troupe::detail::trace::label_thread("io poller (io_uring)", troupe::detail::trace::no_index,
                                            nullptr);
        auto* e = static_cast<uring_engine*>(self);
        for (;;) {
            ::io_uring_cqe* c = nullptr;
            if (::io_uring_wait_cqe(&e->ring_, &c) < 0) continue;  // EINTR
            unsigned head, seen = 0;
            io_uring_for_each_cqe(&e->ring_, head, c) {
                e->complete(c);
                ++seen;
            }
            ::io_uring_cq_advance(&e->ring_, seen);
        }
        return nullptr;
    }

    ::io_uring ring_{};
    std::mutex sq_;               // submissions come from any thread; guards arms_ too
    poll_desc* arms_ = nullptr;   // records watch() queued for the poller (arm_next)
    bool arm_requested_ = false;  // a no-op with arm_tag is in flight
};
#endif

std::atomic<engine*> the_one{nullptr};
// The engine lives in static storage and is never destroyed: its poller
// thread runs until the process exits, and calls may come from threads that
// outlive static destructors. Not operator new'd (a process-wide cache).
union engine_storage {
    alignas(epoll_engine) unsigned char epoll[sizeof(epoll_engine)];
#if defined(TROUPE_HAS_IO_URING)
    alignas(uring_engine) unsigned char uring[sizeof(uring_engine)];
#endif
} storage;
std::once_flag start_once;

engine* start_engine() {
    const char* want = knobs::value(knobs::io);
    bool uring = io_uring_built();
    if (want && *want) {
        if (std::strcmp(want, "epoll") == 0) {
            uring = false;
        } else if (std::strcmp(want, "uring") == 0 || std::strcmp(want, "io_uring") == 0) {
            if (!uring)
                std::fprintf(stderr,
                             "troupe: TROUPE_IO=%s, but this build has no io_uring (built with "
                             "-Dio_uring=disabled or without liburing); using epoll\n",
                             want);
        } else {
            std::fprintf(stderr,
                         "troupe: TROUPE_IO=%s names no engine (uring or epoll); using %s\n", want,
                         uring ? "io_uring" : "epoll");
        }
    }
#if defined(TROUPE_HAS_IO_URING)
    if (uring) {
        try {
            return ::new (static_cast<void*>(storage.uring)) uring_engine();
        } catch (const error& x) {
            std::fprintf(stderr, "troupe: io_uring is unavailable (%s); using epoll\n",
                         std::strerror(x.code().value()));
        }
    }
#endif
    (void)uring;
    return ::new (static_cast<void*>(storage.epoll)) epoll_engine();
}

// The everyone-asleep check's view of the engine: the poller and the
// helpers are troupe's own threads, and a thread queued on a descriptor (or
// in a call on a helper, or a submitted file operation) will be woken from
// outside.
std::size_t source_threads() noexcept {
    return (the_one.load(std::memory_order_acquire) ? 1 : 0) + blocking_helpers();
}
bool source_pending() noexcept {
    if (outside_calls.load(std::memory_order_relaxed) != 0) return true;
    for (auto& slot : chunks) {
        poll_desc* chunk = slot.load(std::memory_order_acquire);
        if (!chunk) continue;
        for (std::size_t i = 0; i < chunk_size; ++i) {
            poll_desc& pd = chunk[i];
            if (!(pd.state.load(std::memory_order_relaxed) & poll_desc::open_bit)) continue;
            std::lock_guard g{pd.lock};
            if (!pd.readers.empty() || !pd.writers.empty()) return true;
        }
    }
    return false;
}
const troupe::detail::wake_source io_source{&source_threads, &source_pending};

}  // namespace

engine& the_engine() {
    if (engine* e = the_one.load(std::memory_order_acquire)) return *e;
    std::call_once(start_once, [] {
        the_one.store(start_engine(), std::memory_order_release);
        troupe::detail::add_wake_source(&io_source);
    });
    return *the_one.load(std::memory_order_acquire);
}

}  // namespace detail
}  // namespace troupe::io
