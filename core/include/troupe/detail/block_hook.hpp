#pragma once
// A per-kernel-thread hook that park() calls when an OS thread is about to
// sleep (after its brief permit poll, before the futex). For runtimes built
// on top of core whose own kernel threads may block inside user code: the
// actor executor's workers use it to hand the work queued behind a blocked
// behaviour to other workers. Not for user threads (a parked user thread
// frees its processor anyway).
namespace troupe::detail {

using block_hook_fn = void (*)(void* arg) noexcept;

/// Installs `fn(arg)` for the calling kernel thread (nullptr removes it).
/// The hook runs on the blocking thread; it must not park.
void set_block_hook(block_hook_fn fn, void* arg) noexcept;

}  // namespace troupe::detail
