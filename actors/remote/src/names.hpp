#pragma once
// Internal: naming. The actors this rank publishes (name_table) and the
// lookups it sent to other ranks (lookup_table). No MPI.
//
// Invariants (name_table):
//   - An actor id is its publication's index + 1 and is never reused: a
//     frame for an actor published, then destroyed, finds its entry (and
//     is reported as for an actor that is gone, naming it), never another
//     actor.
//   - `a` is non-null exactly while the actor lives: ~actor clears it
//     (unpublish) under mutex_, and a delivery holds mutex_ from finding
//     the actor to handing it the message, so once unpublish returns no
//     delivery touches the actor.
//   - Names map to live actors only: unpublish frees the name (a lookup
//     then fails; it may be published anew).
//   - mutex_ is never held across a park or user code other than the
//     delivery function (which appends to a mailbox), so the dump's
//     bounded try_lock usually gets it.
//
// Invariants (lookup_table):
//   - Every lookup ends exactly once: by its answer (take), by its rank
//     ending (take_to), or by its frame not being shipped (take, by the
//     sender); whichever removes it under mutex_ runs or drops its callback.
//   - `awaited` counts the lookups in the table, as ask_table's count does
//     its live asks (the two share one counter).
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "troupe/remote/detail/engine_api.hpp"

namespace troupe::remote::detail {

class name_table {
public:
    struct published {
        troupe::actor* a;  // nullptr once destroyed (unpublish)
        std::string name, type;
        std::uint64_t type_key;
        std::uint64_t dropped = 0;  // messages dropped because it is gone
    };

    /// `rank`: this rank (for error messages).
    explicit name_table(int rank) noexcept : rank_(rank) {}

    /// Publishes `a` as `name`; marks it so that ~actor calls unpublish.
    /// Throws std::invalid_argument if the name is taken, std::bad_alloc
    /// (strong: nothing published).
    void publish(std::string_view name, troupe::actor& a, std::string_view type);
    /// `a` is being destroyed: forgets it and its name, waiting out a
    /// delivery to it in progress.
    void unpublish(troupe::actor& a) noexcept;

    /// Holds the table while a delivery finds its actor and hands it the
    /// message (find() needs it held).
    std::unique_lock<std::mutex> hold() { return std::unique_lock{mutex_}; }
    /// As hold(), unless a delivery keeps the table for a thousand tries
    /// (the lock returned then does not own it).
    std::unique_lock<std::mutex> try_hold() noexcept;
    /// Publications so far (ids 1 to count). Only under hold().
    std::uint64_t count() const noexcept { return by_id_.size(); }
    /// The publication with id `id`, or nullptr. Only under hold().
    published* find(std::uint64_t id) noexcept {
        return id != 0 && id <= by_id_.size() ? &by_id_[id - 1] : nullptr;
    }

    /// The answer to a lookup of `name` (found, published and gone since,
    /// or not: then the names published here, sorted).
    lookup_answer answer(std::string_view name);

    /// Counts the live published actors into `live`, unless a delivery
    /// keeps the table for a thousand tries (false then).
    bool try_count_live(std::size_t& live) noexcept;
    /// Every publication, for the summary when the world ends (no delivery
    /// runs any more).
    const std::vector<published>& all() const noexcept { return by_id_; }

private:
    const int rank_;
    std::mutex mutex_;
    std::vector<published> by_id_;
    std::unordered_map<std::string, std::uint64_t> by_name_;
};

class lookup_table {
public:
    struct pending {
        int to;
        std::string name;
        std::function<void(const lookup_answer&)> done;
    };

    explicit lookup_table(std::atomic<int>& awaited) noexcept : awaited_(awaited) {}

    /// Records a lookup of `name` sent to `to`; returns its id. Throws
    /// std::bad_alloc (nothing recorded).
    std::uint64_t add(int to, std::string_view name,
                      std::function<void(const lookup_answer&)> done);
    /// Removes lookup `id` and returns its callback (empty if it had ended).
    std::function<void(const lookup_answer&)> take(std::uint64_t id);
    /// Removes every lookup awaiting rank `r`.
    std::vector<pending> take_to(int r);

private:
    std::atomic<int>& awaited_;
    std::mutex mutex_;
    std::uint64_t next_ = 1;
    std::unordered_map<std::uint64_t, pending> pending_;
};

}  // namespace troupe::remote::detail
