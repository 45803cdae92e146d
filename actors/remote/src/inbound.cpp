// Inbound: receiving batches and handling their frames, on the progress
// token's holder (one pass at a time).
//
// Invariants:
//   - Bad input never reaches an actor and never stops the rank: a
//     malformed frame drops the rest of its batch (the frames before it are
//     handled), any other bad frame is dropped alone; each is reported once
//     (engine::report), and an ask among them fails at the asker with an
//     error reply instead of leaving it waiting.
//   - A batch counts as received (traffic.batches_received) only after its
//     frames are handled: until then, for termination, it is in flight.
//   - A user handler (on_error, on_gone) or a report runs with no part's
//     lock held (a handler may publish or send).
#include <cstdio>
#include <optional>

#include "engine.hpp"
#include "troupe/defaults/remote.hpp"

namespace troupe::remote::detail {

namespace cfg = troupe::defaults::remote;

namespace {
std::string quoted(std::string_view s) {
    std::string q;
    q.reserve(s.size() + 2);
    q += '"';
    q += s;
    q += '"';
    return q;
}
}  // namespace

bool engine::receive() {
    for (int i = 0; i < cfg::receives_per_pass; ++i) {
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        MPI_Improbe(MPI_ANY_SOURCE, data_tag, comm, &flag, &msg, &st);
        if (!flag) return i > 0;
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        rbuf_.resize_uninitialised(static_cast<std::size_t>(n));
        MPI_Mrecv(rbuf_.data(), n, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        parse(rbuf_.data(), static_cast<std::size_t>(n), st.MPI_SOURCE);
        traffic.batches_received.fetch_add(1, std::memory_order_seq_cst);
    }
    return true;
}

void engine::loop_back(void* self, const char* p, std::size_t n) {
    auto& e = *static_cast<engine*>(self);
    e.parse(p, n, e.rank);
    e.traffic.batches_received.fetch_add(1, std::memory_order_seq_cst);
}

void engine::parse(const char* p, std::size_t n, int from) {
    batch_parser batch{p, n};
    parsed_frame f;
    while (batch.next(f)) {
        traffic.frames_received.fetch_add(1, std::memory_order_relaxed);
        handle(f, from);
    }
    if (batch.fault() != frame_fault::none)
        report(from, std::string{batch.fault_name()},
               "troupe::remote: rank " + std::to_string(rank) + " received " +
                   batch.describe("rank " + std::to_string(from)));
}

void engine::handle(const parsed_frame& f, int from) {
    byte_reader payload{f.payload, f.h.payload_len};
    if (!known_kind(f.h.kind)) {
        report(from, std::string{f.name},
               "troupe::remote: rank " + std::to_string(rank) +
                   " received a frame of unknown kind " + std::to_string(f.h.kind) + " from rank " +
                   std::to_string(from) + " (this program knows kinds 1 to " +
                   std::to_string(static_cast<int>(frame_kind::probe)) + "); it is dropped");
        return;
    }
    switch (static_cast<frame_kind>(f.h.kind)) {
    case frame_kind::tell:
    case frame_kind::ask: handle_message(f, payload, from); return;
    case frame_kind::reply_value:
    case frame_kind::reply_error: handle_reply(f, payload, from); return;
    case frame_kind::lookup: handle_lookup(f, payload, from); return;
    case frame_kind::lookup_reply: handle_lookup_reply(f, payload, from); return;
    case frame_kind::goodbye: handle_goodbye(f, payload, from); return;
    case frame_kind::watch: handle_watch(f, payload, from); return;
    case frame_kind::down: handle_down(f, payload, from); return;
    case frame_kind::probe: handle_probe(f, payload, from); return;
    }
}

void engine::handle_message(const parsed_frame& f, byte_reader& payload, int from) {
    const frame_header& h = f.h;
    const std::string_view name = f.name;
    const bool is_ask = static_cast<frame_kind>(h.kind) == frame_kind::ask;
    // Fails the asker's request with `e` (its future throws instead of
    // waiting forever).
    auto fail_ask = [&](const reply_error_record& e) {
        try {
            byte_buffer& b = scratch();
            begin_frame(b, frame_kind::reply_error, name, h.type_key, h.token, 0);
            byte_writer w{b};
            put_reply_error(w, e);
            end_frame(b);
            ship(from, b);
        } catch (...) {}
    };
    const std::string here = "troupe::remote: rank " + std::to_string(rank);
    // What went wrong, if anything, decided under the name table's lock
    // and reported after it (a report runs the user's handler).
    std::string bad;
    std::optional<name_table::published> gone;
    {
        // Held from finding the actor to handing it the message, so that
        // ~actor (unpublish) waits for the delivery.
        auto held = names_.hold();
        name_table::published* p = names_.find(h.target);
        const pair_info* pi = p ? find_pair(p->type_key, h.type_key) : nullptr;
        if (!p) {
            bad = here + " received message " + quoted(name) + " from rank " +
                  std::to_string(from) + " for actor id " + std::to_string(h.target) +
                  ", which it never published";
        } else if (!pi || pi->msg_name != name || pi->actor_type != p->type) {
            if (!registered_type(name))
                bad = here + " received a message of unknown name " + quoted(name) + " from rank " +
                      std::to_string(from) + " for actor " + quoted(p->name) + " (type " + p->type +
                      "); no message type is registered under that name in this program";
            else
                bad = here + " cannot deliver message " + quoted(name) + " (type " +
                      *registered_type(name) + ") from rank " + std::to_string(from) +
                      " to actor " + quoted(p->name) + " of type " + p->type +
                      ": this program never sends that message to that actor type (call "
                      "troupe::remote::accept<" +
                      p->type + ", " + *registered_type(name) + ">())";
        } else if (!p->a || p->a->finished()) {
            // Destroyed (unpublished by ~actor) or finished: not bad input.
            ++p->dropped;
            gone = *p;
        } else {
            try {
                pi->fn(delivery{this, from, h.token}, *p->a, payload);
            } catch (const truncated_payload& e) {
                bad = here + " received a malformed message " + quoted(name) + " from rank " +
                      std::to_string(from) + " for actor " + quoted(p->name) + ": " + e.what();
            } catch (const std::exception& e) {
                bad = here + " could not deliver message " + quoted(name) + " from rank " +
                      std::to_string(from) + " to actor " + quoted(p->name) + ": " + e.what();
            }
        }
    }
    if (gone) {
        if (!is_ask) {
            report_gone(*gone, from, name);
            return;
        }
        reply_error_record e;
        e.code = error_code::actor_gone;
        e.what = here + ": the ask " + quoted(name) + " from rank " + std::to_string(from) +
                 " went to actor " + quoted(gone->name) + " (type " + gone->type + "), which " +
                 (gone->a ? "has finished" : "was destroyed") +
                 " (published there, and gone); the ask is dropped";
        e.actor_name = gone->name;
        e.actor_type = gone->type;
        fail_ask(e);
        return;
    }
    if (bad.empty()) return;
    report(from, std::string{name}, bad);
    if (is_ask) {
        reply_error_record e;
        e.code = error_code::network_error;
        e.what = bad;
        fail_ask(e);
    }
}

void engine::report_malformed(int from, const char* what, const std::exception& e) {
    report(from, "",
           "troupe::remote: rank " + std::to_string(rank) + " received a malformed " + what +
               " from rank " + std::to_string(from) + ": " + e.what());
}

void engine::report_gone(const name_table::published& p, int from, std::string_view name) {
    const std::string what = "troupe::remote: rank " + std::to_string(rank) + " dropped message " +
                             quoted(name) + " from rank " + std::to_string(from) + " for actor " +
                             quoted(p.name) + " (type " + p.type + "), which " +
                             (p.a ? "has finished" : "was destroyed") +
                             " (published there, and gone; the sender is not at fault)";
    actor_gone e{rank, p.name, p.type, std::string{name}, what};
    if (options_.on_gone) {
        try {
            options_.on_gone(e);
        } catch (...) {}
        return;
    }
    if (p.dropped == 1) {  // once per actor; ~engine sums up the rest
        std::fprintf(stderr, "%s\n", e.what());
        std::fflush(stderr);
    }
}

void engine::handle_reply(const parsed_frame& f, byte_reader& payload, int from) {
    const std::string_view name = f.name;
    ask_table::completion c = asks_.take(f.h.target);
    // The asker destroyed its request before the reply came (an ask given
    // up in a waituntil with a timeout): nothing waits for it.
    if (c.found && !c.q) return;
    // From a rank that has ended: its goodbye failed every ask awaiting it
    // (and freed their slots), and replies it shipped after its goodbye
    // find nothing. Not bad input.
    if (!c.q && ended(from)) return;
    if (!c.q) {
        report(from, std::string{name},
               "troupe::remote: rank " + std::to_string(rank) + " received a reply (" +
                   quoted(name) + ") from rank " + std::to_string(from) +
                   " to an ask it is not waiting for (id " + std::to_string(f.h.target) + ")");
        return;
    }
    try {
        c.fn(*c.q, static_cast<frame_kind>(f.h.kind), payload, from);
    } catch (const already_answered&) {
        c.done();
        // Not the other rank's fault: this rank answered the request itself
        // (a reply, or a second send of it) while the ask was out. Loud, but
        // not bad input: the job goes on and the first answer stands.
        std::fprintf(stderr,
                     "troupe::remote: rank %d: the reply to \"%.*s\" from rank %d came for a "
                     "request already answered on this rank (replied to while it was asked on "
                     "another rank?); the reply is dropped, the first answer stands\n",
                     rank, static_cast<int>(name.size()), name.data(), from);
        std::fflush(stderr);
        return;
    } catch (const std::exception& e) {
        c.done();
        report(from, std::string{name},
               "troupe::remote: rank " + std::to_string(rank) + " received a malformed reply to " +
                   quoted(name) + " from rank " + std::to_string(from) + ": " + e.what());
        return;
    }
    // c's destructor ends the write: the request may go from then on.
}

void engine::handle_lookup(const parsed_frame& f, byte_reader& payload, int from) {
    // This rank said goodbye (its actors are gone or going): the asker
    // fails the lookup with rank_lost when the goodbye, shipped before any
    // answer, reaches it; an answer would say less ("publishes none").
    if (ending_.load(std::memory_order_seq_cst)) return;
    std::string name;
    try {
        get(payload, name);
    } catch (const std::exception& e) {
        report_malformed(from, "lookup", e);
        return;
    }
    const lookup_answer a = names_.answer(name);
    const std::uint8_t found = a.found ? 1 : a.gone ? 2 : 0;
    byte_buffer& b = scratch();
    begin_frame(b, frame_kind::lookup_reply, "", 0, f.h.token, 0);
    byte_writer w{b};
    put(w, found);
    put(w, a.id);
    put(w, a.type);
    put(w, a.published);
    end_frame(b);
    try {
        ship(from, b);
    } catch (const rank_lost&) {
        // The asker has ended: nobody waits for the answer.
    }
}

void engine::handle_lookup_reply(const parsed_frame& f, byte_reader& payload, int from) {
    lookup_answer a;
    std::uint8_t found = 0;
    try {
        get(payload, found);
        get(payload, a.id);
        get(payload, a.type);
        get(payload, a.published);
    } catch (const std::exception& e) {
        report_malformed(from, "lookup answer", e);
        return;
    }
    a.found = found == 1;
    a.gone = found == 2;
    if (auto done = lookups_.take(f.h.target)) done(a);  // else failed already: `from` ended
}

}  // namespace troupe::remote::detail
