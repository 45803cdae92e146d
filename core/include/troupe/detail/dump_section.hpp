#pragma once
// Internal: a section that a module above core adds to troupe::dump (the
// actor systems add theirs), so core's registry calls it without knowing
// the module.
#include <iosfwd>

namespace troupe::detail {

/// One section of the dump. `write` runs under the registry's lock, on the
/// dumping thread: it must not block on anything a blocked thread may hold
/// (short spinlocks only) and must not create or join threads.
struct dump_section {
    void (*write)(void* arg, std::ostream& os) = nullptr;
    void* arg = nullptr;
    dump_section* prev = nullptr;  // the registry's links
    dump_section* next = nullptr;
};

/// Adds `s` to every later dump until remove_dump_section(s). Nothrow.
void add_dump_section(dump_section& s) noexcept;
/// Removes `s`; once it returns, no dump is inside `s.write`. Nothrow.
void remove_dump_section(dump_section& s) noexcept;

}  // namespace troupe::detail
