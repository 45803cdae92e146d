// Misuse reporting.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "troupe/error.hpp"

namespace troupe {

namespace {
void default_handler(std::string_view message) {
    std::fprintf(stderr, "troupe: misuse: %.*s\n", static_cast<int>(message.size()), message.data());
    std::abort();
}
std::atomic<misuse_handler> handler{&default_handler};
}  // namespace

misuse_handler set_misuse_handler(misuse_handler h) noexcept {
    return handler.exchange(h ? h : &default_handler);
}

namespace detail {

std::string describe(const char* kind, const char* name, const void* address) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", address);
    std::string s = kind;
    if (name && *name) {
        s += " '";
        s += name;
        s += "' (";
        s += addr;
        s += ")";
    } else {
        s += " ";
        s += addr;
    }
    return s;
}

void report_misuse(const std::string& message) { handler.load()(message); }

}  // namespace detail
}  // namespace troupe
