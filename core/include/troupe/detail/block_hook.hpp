#pragma once
// Hooks for runtimes built on core whose own threads may block inside user
// code (the actor executor's workers), so they can react when one does.
//
// set_block_hook: a per-kernel-thread hook that park() calls when an OS
// thread is about to sleep (after its brief permit poll, before the futex).
// The executor's kernel-thread workers use it to hand the work queued
// behind a blocked behaviour to other workers.
//
// set_user_thread_hooks: the same for a *user thread* (the executor's
// experimental user-thread workers, docs/scheduler.md): a hook before it
// parks, and two around every switch so the runtime can keep its own
// kernel-thread-local state (the running worker) right while the user
// thread migrates between processors.
namespace troupe::detail {

using block_hook_fn = void (*)(void* arg) noexcept;

/// Installs `fn(arg)` for the calling kernel thread (nullptr removes it).
/// The hook runs on the blocking thread; it must not park.
void set_block_hook(block_hook_fn fn, void* arg) noexcept;

/// Installs `fn(arg)` for the calling kernel thread (nullptr removes it):
/// this_thread::yield() calls it on an OS thread before it yields. A yield
/// inside user code says "let others run": the executor's workers hand out
/// what the running behaviour has staged, so a behaviour that yields until
/// another actor has acted cannot wait on its own staged send. It must not
/// park.
void set_yield_hook(block_hook_fn fn, void* arg) noexcept;

/// Hooks attached to one user thread. Each is nothrow and must not park;
/// switched_in and switched_out must both be set.
struct user_thread_hooks {
    /// On the kernel thread about to run the user thread, just before it
    /// resumes (every time, including after a yield).
    block_hook_fn switched_in = nullptr;
    /// On that kernel thread just after the user thread left it (parked,
    /// yielded or finished).
    block_hook_fn switched_out = nullptr;
    /// On the user thread itself in park(), when no permit is banked and it
    /// is about to switch out (not in yield). It may yield.
    block_hook_fn about_to_park = nullptr;
    /// On the user thread itself in this_thread::yield(), before it
    /// switches out (set_yield_hook's counterpart). It must not park.
    block_hook_fn about_to_yield = nullptr;
};

/// Attaches `hooks` (static storage; nullptr detaches) with `arg` to the
/// calling user thread: calls the previous hooks' switched_out and the new
/// ones' switched_in at once, on this kernel thread. Does nothing when
/// called from an OS thread. Nothrow, never blocks.
void set_user_thread_hooks(const user_thread_hooks* hooks, void* arg) noexcept;

}  // namespace troupe::detail
