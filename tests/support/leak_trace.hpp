#pragma once
// Allocation tracing behind leak_check's TROUPE_LEAK_TRACE=1 diagnostics
// (leak_trace.cpp). Called by the replaced allocation functions only.
namespace troupe_test::detail {
bool trace_enabled() noexcept;
unsigned long trace_sequence() noexcept;
void trace_allocation(void* p) noexcept;
void trace_release(void* p) noexcept;
/// Prints the call stacks of traced blocks made at or after `seq` and
/// still held.
void trace_dump_since(unsigned long seq) noexcept;
}  // namespace troupe_test::detail
