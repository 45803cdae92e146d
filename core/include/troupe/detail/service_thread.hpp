#pragma once
// Internal: starting a runtime's own service kernel thread (the watch
// thread, the trace's flusher, the I/O pollers and blocking-call helpers).
#include <cstddef>

namespace troupe::detail {

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
