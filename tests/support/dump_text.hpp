#pragma once
// Reading troupe::dump's text in tests (tests/core/dump_test.cpp,
// tests/integration/dump_test.cpp, the remote dump, deadline and cycle
// tests).
#include <sstream>
#include <string>

#include "fixture.hpp"
#include "troupe/dump.hpp"

namespace troupe_test {

/// The dump of this process, now.
inline std::string dump_now() {
    std::ostringstream os;
    troupe::dump(os);
    return os.str();
}

/// Whether `text` contains `what`.
inline bool has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
}

/// The dump's line for the thread named `name` ("" if none).
inline std::string line_of(const std::string& dump, const std::string& name) {
    std::istringstream in(dump);
    for (std::string l; std::getline(in, l);)
        if (has(l, "'" + name + "'") && has(l, ": ")) return l;
    return "";
}

/// Yields until the dump's line for `name` contains `what` (an event: the
/// thread reaching its wait); returns that line.
inline std::string wait_for_line(const std::string& name, const std::string& what) {
    std::string l;
    wait_until([&] {
        l = line_of(dump_now(), name);
        return has(l, what);
    });
    return l;
}

}  // namespace troupe_test
