#pragma once
// Internal: monitors of actors on other ranks, the watching rank's half. No
// MPI (the MPI-free tests in tests/remote/parts drive it with local
// watchers).
//
// A remote actor that this rank monitors is represented by a stand-in: an
// actor that no system runs (troupe::detail::stand_in_t), one per (rank,
// actor id), on which the local monitors (troupe/monitor.hpp) are placed,
// so that exactly-once, demonitor, a watcher's own end and a monitor placed
// after the end are the local machinery's. The stand-in ends (life_end_as)
// when the watched actor's rank reports its end (a down frame to the
// stand-in's token), or when that rank ends or this rank's world does
// (rank_lost, "rank N lost").
//
// Invariants:
//   - A stand-in is ended at most once: whoever flips `ended` from false
//     ends it; the others do nothing (a down after the rank's goodbye, a
//     second down).
//   - Stand-ins live until the table is destroyed (the engine's end): a
//     down's `who` stays a valid identity for the world's life, and
//     pointers handed out never dangle while the world lives.
//   - A stand-in is in the table (under mutex_) before its watch frame is
//     shipped, and end_rank() scans under mutex_ after its rank was marked
//     ended: either the ship sees the rank ended (and the caller ends the
//     stand-in), or the scan finds it (a Dekker pair through the rank's
//     seq_cst state, as for asks).
//   - mutex_ is held across life_end_as (which takes the monitors' lock and
//     the watchers' mailbox locks), never the other way round: nothing
//     calls into this table holding those.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "troupe/actor.hpp"
#include "troupe/monitor.hpp"

namespace troupe::remote::detail {

class watch_table {
public:
    /// The local stand-in of actor `id` on `rank`.
    struct stand_in final : troupe::actor {
        stand_in(int r, std::uint64_t i, std::uint64_t t) noexcept
            : troupe::actor(troupe::detail::stand_in_t{}), rank(r), id(i), token(t) {}
        const int rank;
        const std::uint64_t id;
        const std::uint64_t token;  // what its rank's down frame names
        std::atomic<bool> ended{false};
        // The watch frame is shipped (or being shipped) to its rank.
        std::atomic<bool> watching{false};
    };

    watch_table() = default;
    watch_table(const watch_table&) = delete;

    /// The stand-in of actor `id` on `rank`, created if there is none.
    /// Throws std::bad_alloc (nothing created).
    stand_in& get(int rank, std::uint64_t id);
    /// The stand-in of actor `id` on `rank`, or nullptr.
    stand_in* find(int rank, std::uint64_t id) noexcept;

    /// The watched actor of stand-in `token` ended with `why`: ends the
    /// stand-in (once). False if no stand-in has that token (bad input).
    bool end(std::uint64_t token, exit_reason why) noexcept;
    /// Ends stand-in `s` with `why`, unless it has ended. Nothrow.
    static void end(stand_in& s, exit_reason why) noexcept;
    /// Rank `r` is lost (it ended, or this rank's world ends): ends each of
    /// its stand-ins not ended yet with rank_lost, "rank r lost". Nothrow.
    void end_rank(int r) noexcept;
    /// Ends every stand-in not ended yet (rank_lost, naming its rank).
    void end_all() noexcept;

    /// The reason a stand-in of rank `r` ends with when `r` is lost.
    static exit_reason lost(int r);

    /// Stand-ins, and how many of them have ended (troupe::dump); false
    /// (nothing counted) if the table is busy. Never waits.
    bool count(std::size_t& all, std::size_t& ended) noexcept;

private:
    // Under mutex_: ends the stand-ins of rank r (every rank if r < 0).
    void end_where(int r) noexcept;

    std::mutex mutex_;
    std::map<std::pair<int, std::uint64_t>, std::unique_ptr<stand_in>> by_ref_;
    std::unordered_map<std::uint64_t, stand_in*> by_token_;
    std::uint64_t next_token_ = 1;
};

}  // namespace troupe::remote::detail
