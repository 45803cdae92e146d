#pragma once
/// How an idle actor worker picks the worker it tries to steal a mailbox
/// from. Three policies are built in; any other can be plugged in.
///
///     troupe::actor_system_config cfg;
///     cfg.workers = 8;
///     cfg.victims = troupe::victim_policy::locality;       // nearest first
///     cfg.custom_victims = [](const troupe::victim_context& c) {
///         return std::make_unique<my_selector>(c);         // or your own
///     };
///
/// One selector object exists per worker and is only used by that worker's
/// kernel thread, so it needs no synchronisation. `choose` runs once per
/// steal attempt (a thief's idle path, never a send or receive) and
/// `feedback` reports whether that attempt stole a mailbox.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "troupe/detail/fast_rng.hpp"

namespace troupe {

class topology;

/// The builtin victim-selection policies.
enum class victim_policy : std::uint8_t {
    random,    ///< uniformly random other worker
    longest,   ///< the worker whose last steal attempt is oldest (the thesis's heuristic)
    locality,  ///< random among the nearest workers first, widening after failures (Wölke)
};

/// A printable name for `p` ("random", "longest", "locality").
const char* to_string(victim_policy p) noexcept;

/// What a selector may look at; valid for the life of the executor.
struct victim_context {
    /// The worker (thief) this selector serves.
    std::size_t self = 0;
    /// Number of workers.
    std::size_t workers = 1;
    /// Per-worker timestamp of its latest steal attempt (the executor stores
    /// it, relaxed, just before each attempt); `workers` entries.
    const std::atomic<std::uint64_t>* stamps = nullptr;
    /// The hardware thread each worker runs on (or is assumed to run on).
    std::span<const std::size_t> worker_pu;
    /// The machine (or a synthetic topology given in the configuration).
    const topology* machine = nullptr;
};

class victim_selector {
public:
    static constexpr std::size_t none = ~std::size_t{0};
    virtual ~victim_selector() = default;
    /// The worker to try next (never `self`), or `none` to skip this attempt.
    virtual std::size_t choose() = 0;
    /// Whether the attempt with the last chosen victim stole a mailbox.
    virtual void feedback(bool /*stolen*/) {}
};

/// Builds one selector per worker.
using victim_factory = std::function<std::unique_ptr<victim_selector>(const victim_context&)>;

/// Uniformly random victim (detail::fast_rng, seeded per worker).
class random_victims final : public victim_selector {
public:
    explicit random_victims(const victim_context& c) noexcept;
    std::size_t choose() override;

private:
    std::size_t self_, workers_;
    detail::fast_rng rng_;
};

/// The worker with the oldest steal-attempt timestamp: a worker that has not
/// looked for work for the longest time is probably the most loaded. Only a
/// worker's own steal attempts refresh its timestamp, so a worker blocked
/// inside a behaviour would stay the oldest forever: choices therefore go in
/// sweeps, each worker chosen at most once per sweep (oldest first among the
/// rest), and a new sweep starts when every other worker has been tried or
/// a steal succeeds. So an idle worker tries every other worker within
/// `workers - 1` attempts and never starves one that holds the only work.
class longest_victims final : public victim_selector {
public:
    /// Throws std::bad_alloc.
    explicit longest_victims(const victim_context& c);
    std::size_t choose() override;
    void feedback(bool stolen) override;

private:
    std::size_t self_, workers_;
    const std::atomic<std::uint64_t>* stamps_;
    std::vector<bool> tried_;  // chosen in the current sweep
    std::size_t tried_count_ = 0;
};

/// Wölke's weighted stealing: the other workers are grouped by hardware
/// distance into cumulative groups g0 ⊆ g1 ⊆ ... ⊆ gk (g0: the nearest
/// workers, gk: all). A thief picks uniformly within g0 for |g0| attempts,
/// then within g1 for |g1| attempts, and so on; gk is used indefinitely.
/// A successful steal restarts at g0.
class locality_victims final : public victim_selector {
public:
    explicit locality_victims(const victim_context& c);
    std::size_t choose() override;
    void feedback(bool stolen) override;

    /// The cumulative groups, nearest first (for tests and diagnostics).
    const std::vector<std::vector<std::size_t>>& groups() const noexcept { return groups_; }
    /// The group the next choice is drawn from.
    std::size_t level() const noexcept { return level_; }

private:
    std::vector<std::vector<std::size_t>> groups_;
    std::size_t level_ = 0;
    std::size_t attempts_ = 0;
    detail::fast_rng rng_;
};

/// The selector for `p`.
std::unique_ptr<victim_selector> make_victim_selector(victim_policy p, const victim_context& c);

}  // namespace troupe
