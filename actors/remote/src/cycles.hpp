#pragma once
// Internal: request cycles across ranks (docs/remote.md, "Request cycles
// across ranks"): the payload of probe frames, the text of a cycle, and the
// book of the cycles a rank's probes found. No MPI (the MPI-free tests in
// tests/remote/parts drive it).
//
// Edge chasing (Chandy-Misra-Haas): a probe starts at a behaviour blocked on
// an ask, records one hop per blocked behaviour it passes (its rank, its
// wait's identity there, the texts that name it), and follows each wait to
// the actor asked (on this rank, or in a probe frame to that actor's rank).
// A probe that comes back to the wait it started from has found a cycle.
//
// Invariants:
//   - A probe holds at most max_probe_hops hops and each text at most
//     max_probe_text bytes: put_probe clips texts, senders drop a probe
//     that would grow past the cap, and get_probe refuses a payload beyond
//     either (truncated_payload), so a probe's size is bounded.
//   - A cycle is confirmed (recorded) only when two probes of one initiator
//     came back with the same hops (the same waits: record and sequence, on
//     the same ranks), the second sent after the first came back. A wait
//     identity is one continuous wait of one worker, so every wait of the
//     cycle held from its first probe's visit to its second's, and all of
//     them between the first's return and the second's start: the edges
//     held at once.
//   - cycle_book's lock is a leaf, held for copies and comparisons only.
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "troupe/remote/detail/wire.hpp"
#include "troupe/spinlock.hpp"

namespace troupe::remote::detail {

inline constexpr std::size_t max_probe_hops = 16;
inline constexpr std::size_t max_probe_text = 256;

/// One blocked behaviour a probe passed.
struct probe_hop {
    std::int32_t rank = 0;
    // Its wait on that rank: record address and sequence (compared only).
    std::uint64_t record = 0;
    std::uint32_t seq = 0;
    std::string subject;  // the actor asked: "actor 'b' (B) on rank 1"
    std::string behind;   // the blocked behaviour's actor, if the subject waits behind it
    std::string in;       // "(worker 0, in its receive of 'go')"
    std::string edge;     // "waits for the reply to its remote ask 'x' to"
    bool operator==(const probe_hop& o) const noexcept {
        return rank == o.rank && record == o.record && seq == o.seq;
    }
};

/// A probe frame's payload (the frame's target is the actor to look at on
/// the receiving rank).
struct probe {
    std::int32_t initiator = 0;  // the rank it started on
    std::uint64_t key = 0;       // its initiator there (a published actor's id)
    std::uint64_t seq = 0;       // its number among that initiator's probes
    std::uint64_t base = 0;      // the number of the initiator's latest probe back when it left
    std::vector<probe_hop> hops;
};

/// Appends `p` to `w` (texts clipped to max_probe_text). Throws
/// std::bad_alloc (basic: `w` may hold part of it).
void put_probe(byte_writer& w, const probe& p);
/// Reads a probe. Throws truncated_payload naming what is wrong: bytes
/// missing or left over, more than max_probe_hops hops, a text over
/// max_probe_text.
probe get_probe(byte_reader& r);

/// "request cycle across ranks: actor 'a' (A) on rank 0 (worker 0, in its
/// receive of 'go') waits for the reply to its remote ask 'x' to actor 'b'
/// (B) on rank 1, which (...) waits ... to actor 'a' (A) on rank 0".
std::string cycle_text(const std::vector<probe_hop>& hops);

/// The probes of this rank's initiators and the cycles they confirmed.
class cycle_book {
public:
    struct numbers {
        std::uint64_t seq, base;
    };
    /// Initiator `key` (blocked in wait `record`/`seq`) sends a probe: its
    /// number and base. A key whose wait changed starts afresh (its old
    /// probes and cycle are forgotten). Throws std::bad_alloc.
    numbers start(std::uint64_t key, std::uint64_t record, std::uint32_t seq);
    /// A probe of this rank's came back to its initiator's wait. True if it
    /// confirms a cycle (recorded, with its text). Throws std::bad_alloc.
    bool came_back(const probe& p);
    /// Initiator `key` is not blocked (or not in a cycle's wait) any more.
    void forget(std::uint64_t key) noexcept;

    struct cycle {
        std::uint64_t key;     // the initiator
        std::uint64_t record;  // its wait (hop 0), to re-check before printing
        std::uint32_t seq;
        std::string text;
    };
    /// The confirmed cycles (copies). Throws std::bad_alloc.
    std::vector<cycle> cycles() const;
    /// Cycles confirmed so far (each initiator's counted once per wait).
    std::uint64_t confirmed() const noexcept;

private:
    struct entry {
        std::uint64_t record = 0;  // the initiator's wait
        std::uint32_t wait_seq = 0;
        std::uint64_t next = 1;      // the next probe's number
        std::uint64_t back_seq = 0;  // the latest probe back (0: none)
        std::vector<probe_hop> back_hops;
        std::string text;  // the confirmed cycle, if any
    };
    mutable troupe::spinlock lock_{"troupe::remote cycle book"};
    std::unordered_map<std::uint64_t, entry> entries_;
    std::uint64_t confirmed_ = 0;
};

}  // namespace troupe::remote::detail
