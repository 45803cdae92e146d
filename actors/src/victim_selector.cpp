// Builtin victim-selection policies.
#include <algorithm>
#include <stdexcept>

#include "troupe/topology.hpp"
#include "troupe/victim_selector.hpp"

namespace troupe {

namespace {
// A selector's draws are a stream of their own, apart from its worker's.
std::uint64_t seed_for(std::size_t self) noexcept {
    return detail::fast_rng::seed_for(self, 0xd1b54a32d192ed03ULL);
}
}  // namespace

const char* to_string(victim_policy p) noexcept {
    switch (p) {
    case victim_policy::random: return "random";
    case victim_policy::longest: return "longest";
    case victim_policy::locality: return "locality";
    }
    return "?";
}

random_victims::random_victims(const victim_context& c) noexcept
    : self_(c.self), workers_(c.workers), rng_(seed_for(c.self)) {}

std::size_t random_victims::choose() {
    if (workers_ < 2) return none;
    // Uniform over the others: draw from workers-1 and skip ourselves.
    std::size_t v = rng_.below(workers_ - 1);
    return v >= self_ ? v + 1 : v;
}

longest_victims::longest_victims(const victim_context& c)
    : self_(c.self), workers_(c.workers), stamps_(c.stamps), tried_(c.workers, false) {}

std::size_t longest_victims::choose() {
    if (workers_ < 2) return none;
    if (tried_count_ + 1 >= workers_) {
        // Everyone else was tried in this sweep: start the next one.
        std::fill(tried_.begin(), tried_.end(), false);
        tried_count_ = 0;
    }
    std::size_t best = none;
    std::uint64_t oldest = ~std::uint64_t{0};
    for (std::size_t w = 0; w < workers_; ++w) {
        if (w == self_ || tried_[w]) continue;
        // relaxed: a heuristic; a stale stamp only changes the choice.
        const std::uint64_t t = stamps_ ? stamps_[w].load(std::memory_order_relaxed) : 0;
        if (best == none || t < oldest) {
            oldest = t;
            best = w;
        }
    }
    tried_[best] = true;
    ++tried_count_;
    return best;
}

void longest_victims::feedback(bool stolen) {
    if (stolen) {
        std::fill(tried_.begin(), tried_.end(), false);
        tried_count_ = 0;
    }
}

locality_victims::locality_victims(const victim_context& c) : rng_(seed_for(c.self)) {
    std::vector<std::vector<std::size_t>> by_distance;
    if (c.machine && c.worker_pu.size() == c.workers) {
        by_distance = c.machine->group_by_distance(c.self, c.worker_pu);
    } else {
        // Unknown layout: one group of everybody (plain random stealing).
        by_distance.emplace_back();
        for (std::size_t w = 0; w < c.workers; ++w)
            if (w != c.self) by_distance.back().push_back(w);
    }
    // Cumulative: g_i holds every worker at distance class <= i.
    std::vector<std::size_t> acc;
    for (auto& g : by_distance) {
        if (g.empty()) continue;
        acc.insert(acc.end(), g.begin(), g.end());
        groups_.push_back(acc);
    }
}

std::size_t locality_victims::choose() {
    if (groups_.empty()) return none;
    const auto& g = groups_[level_];
    const std::size_t v = g[rng_.below(g.size())];
    // |g_i| attempts on group i, then widen; the last group indefinitely.
    if (++attempts_ >= g.size() && level_ + 1 < groups_.size()) {
        ++level_;
        attempts_ = 0;
    }
    return v;
}

void locality_victims::feedback(bool stolen) {
    if (stolen) {
        level_ = 0;
        attempts_ = 0;
    }
}

std::unique_ptr<victim_selector> make_victim_selector(victim_policy p, const victim_context& c) {
    switch (p) {
    case victim_policy::random: return std::make_unique<random_victims>(c);
    case victim_policy::longest: return std::make_unique<longest_victims>(c);
    case victim_policy::locality: return std::make_unique<locality_victims>(c);
    }
    throw std::invalid_argument("troupe: unknown victim policy");
}

}  // namespace troupe
