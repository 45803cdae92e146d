// Ranks that end. A world being destroyed says goodbye to every other rank:
// a frame shipped after everything it sent there (per-pair FIFO), carrying
// how many collectives it entered. A rank that receives it marks the sender
// ended and fails, at once and naming it, every ask and lookup awaiting it;
// later asks, lookups and sends to it fail before anything is queued; and a
// collective the ended rank never entered (a barrier, a stop round) fails
// instead of waiting for it. Collectives are numbered from 1 on every rank
// (the k-th ones match, MPI's rule), so the count tells exactly which ones
// the ended rank took part in: those complete, the later ones never do.
#include <string>

#include "engine.hpp"

namespace troupe::remote::detail {

void engine::say_goodbye(std::uint64_t collectives) noexcept {
    ending_.store(true, std::memory_order_seq_cst);
    for (int r = 0; r < size; ++r) {
        if (r == rank) continue;
        try {
            byte_buffer b;
            begin_frame(b, frame_kind::goodbye, "", 0, 0, 0);
            byte_writer w{b};
            put(w, collectives);
            end_frame(b);
            ship(r, b);
        } catch (...) {
            // That rank ended too (rank_lost), or no memory for a frame of
            // 48 bytes: it learns nothing, as if this rank had crashed.
        }
    }
}

void engine::handle_goodbye(const parsed_frame&, byte_reader& payload, int from) {
    std::uint64_t collectives = 0;
    try {
        get(payload, collectives);
    } catch (const std::exception& e) {
        report_malformed(from, "goodbye", e);
        return;
    }
    if (from == rank || ended(from)) return;
    // seq_cst: the other half of register_ask's and lookup's Dekker pair
    // (they register, then load the rank's state; we store, then scan).
    peers_.set_ended(from, collectives);
    fail_awaiting(from);
    // Monitors of its actors fire, "rank N lost" (after its downs: they were
    // shipped before the goodbye, so its actors that ended first say how).
    watches_.end_rank(from);
    if (options_.on_rank_lost && !ending_.load(std::memory_order_seq_cst)) {
        try {
            options_.on_rank_lost(lost_error(from, "this rank"));
        } catch (...) {}
    }
}

void engine::fail_awaiting(int r) {
    // Asks: each is taken as a reply would take it (handle_reply), so that
    // a destructor racing with the failure waits for it.
    for (;;) {
        ask_table::completion c = asks_.take_to(r);
        if (!c.found) break;
        if (!c.q) continue;  // abandoned: uncounted already, nobody waits
        try {
            byte_buffer b;
            byte_writer w{b};
            reply_error_record e;
            e.code = error_code::rank_ended;
            e.what = lost_error(r, "ask \"" + std::string{c.name} + "\"").what();
            put_reply_error(w, e);
            byte_reader rd{b.data(), b.size()};
            c.fn(*c.q, frame_kind::reply_error, rd, r);
        } catch (...) {
            // No memory for the error: the request stays unanswered (its
            // asker waits, as for any reply that could not be built).
        }
    }
    for (lookup_table::pending& l : lookups_.take_to(r)) {
        lookup_answer a;
        a.lost = lost_error(r, "lookup of \"" + l.name + "\"").what();
        l.done(a);
    }
}

std::uint64_t engine::begin_collective(const char* what) {
    const std::uint64_t k = collectives_.load(std::memory_order_relaxed) + 1;
    if (const int r = collective_blocked(k); r >= 0) throw lost_error(r, what);
    collectives_.store(k, std::memory_order_relaxed);
    return k;
}

}  // namespace troupe::remote::detail
