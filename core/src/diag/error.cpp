// Misuse reporting: one handler, a per-kind action for the default one.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "troupe/error.hpp"

namespace troupe {

namespace {

constexpr std::size_t kind_count = 4;

// The default handler's action per kind (see the table in error.hpp).
std::atomic<misuse_action> actions[kind_count] = {
    misuse_action::abort,      // error
    misuse_action::continue_,  // released_waiters
    misuse_action::continue_,  // lost_message
    misuse_action::continue_,  // repaired
};

std::size_t index_of(misuse_kind k) noexcept {
    const auto i = static_cast<std::size_t>(k);
    return i < kind_count ? i : 0;
}

// The default handler's body, with the report's kind.
void default_report(std::string_view message, misuse_kind kind) {
    const misuse_action a = actions[index_of(kind)].load(std::memory_order_relaxed);
    std::fprintf(stderr, "troupe: misuse: %.*s; %s\n", static_cast<int>(message.size()),
                 message.data(), a == misuse_action::abort ? "aborting" : "continuing");
    std::fflush(stderr);
    if (a == misuse_action::abort) std::abort();
}

// As installed (its signature carries only the text): reports reach it
// through report_misuse, which calls default_report with the kind instead.
void default_handler(std::string_view message) { default_report(message, misuse_kind::error); }

std::atomic<misuse_handler> handler{&default_handler};

}  // namespace

misuse_handler set_misuse_handler(misuse_handler h) noexcept {
    return handler.exchange(h ? h : &default_handler);
}

misuse_action set_misuse_action(misuse_kind kind, misuse_action action) noexcept {
    return actions[index_of(kind)].exchange(action, std::memory_order_relaxed);
}

misuse_action get_misuse_action(misuse_kind kind) noexcept {
    return actions[index_of(kind)].load(std::memory_order_relaxed);
}

const char* to_string(misuse_kind kind) noexcept {
    switch (kind) {
    case misuse_kind::error: return "error";
    case misuse_kind::released_waiters: return "released_waiters";
    case misuse_kind::lost_message: return "lost_message";
    case misuse_kind::repaired: return "repaired";
    }
    return "?";
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

void report_misuse(const std::string& message, misuse_kind kind) {
    const misuse_handler h = handler.load();
    if (h == &default_handler) default_report(message, kind);
    else h(message);
}

}  // namespace detail
}  // namespace troupe
