#pragma once
// Internal: starting a runtime's own service kernel thread (the watch
// thread, the trace's flusher, the I/O pollers and blocking-call helpers).
#include <cstddef>
#include <thread>

namespace troupe::detail {

/// Names a runtime kernel thread as `top -H`, `ps -L`, `perf` and gdb's
/// `info threads` show it (the kernel's comm; without a name every thread
/// shows the program's). `name` is cut to 15 bytes, the kernel's limit.
/// The runtime's threads are named "troupe-" and what they are:
/// troupe-proc-N (processor N of a cluster), troupe-actor-N (actor worker
/// N), troupe-timer, troupe-actimer, troupe-watch, troupe-trace,
/// troupe-remote, troupe-io, troupe-io-help. Best effort: a failure
/// leaves the name as it was. Never blocks; nothrow.
void name_kernel_thread(std::thread& t, const char* name) noexcept;
/// The same with the name `prefix` followed by `index` (troupe-proc-3).
void name_kernel_thread(std::thread& t, const char* prefix, std::size_t index) noexcept;
/// The same for the calling kernel thread (a service thread names itself:
/// it is detached, so only it knows it is still alive).
void name_this_kernel_thread(const char* name) noexcept;

/// Starts a detached kernel thread that runs `fn(arg)`, with every signal
/// blocked in it (a signal meant for the program, or the dump signal, is
/// delivered to one of the program's threads instead), and a stack of
/// `stack_size` bytes when nonzero (else the system's default). Made with
/// pthread_create, not std::thread, so it holds no C++ heap block for its
/// life (the tests' leak check counts those). The caller's signal mask is
/// unchanged on return. Returns 0, or pthread_create's error number (no
/// thread started). Never blocks; nothrow.
int start_service_thread(void* (*fn)(void*), void* arg, std::size_t stack_size = 0) noexcept;

}  // namespace troupe::detail
