#pragma once
// Drives the select_node protocol directly, as waituntil does, for the
// protocol tests of core and of each selectable resource.
#include <atomic>
#include <cstdint>

#include "fixture.hpp"
#include "troupe/context.hpp"
#include "troupe/select.hpp"

namespace troupe_test {

using status_word = std::atomic<std::uintptr_t>;

/// The exclusive-mode status value meaning "won by node n".
inline std::uintptr_t won_by(const troupe::select_node& n) {
    return reinterpret_cast<std::uintptr_t>(&n);
}

// An exclusive-or wait over two clauses, as waituntil's pure-or shape does
// it: register in order, stop at the first immediate win, otherwise park for
// exactly one winner; then on_selected on the winner, unregister all.
// Returns the winning index.
template <class A, class B>
int select_either(A&& a, B&& b) {
    status_word status{0};
    troupe::select_node na{troupe::this_context(), status};
    troupe::select_node nb{troupe::this_context(), status};
    int winner = -1;
    bool registered_b = false;
    if (a.register_select(na)) {
        winner = 0;
    } else {
        registered_b = true;
        if (b.register_select(nb)) winner = 1;
    }
    if (winner < 0) {
        troupe::park();  // exactly one resource wins and unparks us
        const auto s = status.load();
        winner = s == won_by(na) ? 0 : s == won_by(nb) ? 1 : -1;
    }
    REQUIRE(winner >= 0);
    struct cleanup {
        A& a;
        B& b;
        troupe::select_node& na;
        troupe::select_node& nb;
        bool registered_b;
        ~cleanup() {
            CHECK_FALSE(a.unregister_select(na));  // exclusive: never a body to run late
            if (registered_b) CHECK_FALSE(b.unregister_select(nb));
        }
    } c{a, b, na, nb, registered_b};
    const bool body = winner == 0 ? a.on_selected(na) : b.on_selected(nb);
    CHECK(body);
    return winner;
}

}  // namespace troupe_test
