// A behaviour that blocks its worker (a future's get, a lock, a channel,
// ask): its staged sends go out and a parked worker is woken to take what
// queues up behind it. Core calls in through its hooks: the block hook of
// a kernel-thread worker, the switch and park hooks of a user-thread one,
// which also carry the worker's thread-local state with its user thread.
#include "executor.hpp"
#include "troupe/context.hpp"
#include "troupe/detail/block_hook.hpp"

namespace troupe::detail {

void worker::flush_before_blocking() {
    // What waits on the depth-first stack may be what the behaviour waits
    // for: hand it to the mailboxes, where other workers may take it.
    spill_depth_first();
    flush_stages();
    // Not rate-limited (unlike wake_helper): a worker that parked before
    // this batch began parked without a timeout and would never come to
    // steal what is queued behind the blocked behaviour. The fence orders
    // our batch_began store before the `sleepers` load (the Dekker pair
    // with park_idle, see another_in_batch).
    if (!exec.stealing) return;
    full_fence();
    if (exec.any_parked()) exec.wake_one_parked(index);
}

void worker::block_in_behaviour() {
    spill_depth_first();  // as flush_before_blocking
    flush_stages();       // may yield (a mailbox lock): before the flag
    if (!exec.stealing) return;
    // Dekker pair with park_idle (announce, then blocked_victim_with_work's
    // flag load): our flag store comes before our sleepers load (both
    // seq_cst), so either a parking worker sees us blocked and checks our
    // mailboxes, or we see it announced here and wake one.
    blocked.store(true, std::memory_order_seq_cst);
    if (exec.any_parked()) exec.wake_one_parked(index);
}

// A behaviour that yields is waiting for others by polling (a loop on
// this_thread::yield until another actor has acted). Its sends must not
// wait for the batch's end, or it may poll for the effect of its own
// staged send forever; and a worker that parked before this batch began
// slept without a timeout, so only a wake brings it to steal what queues
// up here (it then keeps looking, with a timed park, while we are in a
// batch: park_idle). One wake per batch: a polling loop yields often, and
// the woken worker needs no second call.
void worker::yield_in_behaviour() {
    spill_depth_first();  // as flush_before_blocking
    flush_stages();
    if (!exec.stealing || yield_woke_) return;
    yield_woke_ = true;
    full_fence();  // as flush_before_blocking: batch_began before the sleepers load
    if (exec.any_parked()) exec.wake_one_parked(index);
}

namespace {
// core's block hook (troupe/detail/block_hook.hpp): park() calls it when a
// behaviour of this worker is about to put the worker's kernel thread to
// sleep (a future's get, a lock, a channel, ask).
void about_to_block(void* self) noexcept {
    auto* w = static_cast<worker*>(self);
    if (w->in_batch()) w->flush_before_blocking();
}

// User-thread workers (troupe/detail/block_hook.hpp, user_thread_hooks):
// the worker's kernel-thread-local state follows its user thread.
void worker_switched_in(void* self) noexcept {
    auto* w = static_cast<worker*>(self);
    tls_worker = w;
    (void)exchange_request_scope(w->saved_scope);
    // Running again: no longer blocked (relaxed load: only we set it).
    if (w->blocked.load(std::memory_order_relaxed))
        w->blocked.store(false, std::memory_order_seq_cst);
}
void worker_switched_out(void* self) noexcept {
    auto* w = static_cast<worker*>(self);
    tls_worker = nullptr;
    w->saved_scope = exchange_request_scope(nullptr);
}
void worker_about_to_park(void* self) noexcept {
    auto* w = static_cast<worker*>(self);
    if (w->in_batch()) w->block_in_behaviour();
}
// core's yield hooks (OS-thread and user-thread workers alike).
void about_to_yield(void* self) noexcept {
    auto* w = static_cast<worker*>(self);
    if (w->in_batch()) w->yield_in_behaviour();
}
const user_thread_hooks user_worker_hooks{&worker_switched_in, &worker_switched_out,
                                          &worker_about_to_park, &about_to_yield};
}  // namespace

void worker::enter_thread() noexcept {
    // release: a report that reads the context sees it constructed.
    ctx.store(&this_context(), std::memory_order_release);
    if (exec.user_threads) {
        // Parks with troupe's park (its processor runs other threads); the
        // hooks keep tls_worker and the request scope with this user thread
        // wherever it runs, and mark it blocked when a behaviour parks it.
        idle_group::bind_context(idle_, this_context());
        set_user_thread_hooks(&user_worker_hooks, this);
    } else {
        tls_worker = this;
        set_block_hook(&about_to_block, this);
        set_yield_hook(&about_to_yield, this);
    }
}

void worker::leave_thread() noexcept {
    ctx.store(nullptr, std::memory_order_release);
    if (exec.user_threads) {
        set_user_thread_hooks(nullptr, nullptr);  // clears tls_worker (switched_out)
    } else {
        set_block_hook(nullptr, nullptr);
        set_yield_hook(nullptr, nullptr);
        tls_worker = nullptr;
    }
}

}  // namespace troupe::detail
