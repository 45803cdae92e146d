// Monitors of actors on other ranks, the watching rank's half (invariants
// in watches.hpp).
#include "watches.hpp"

namespace troupe::remote::detail {

watch_table::stand_in& watch_table::get(int rank, std::uint64_t id) {
    std::lock_guard g{mutex_};
    auto it = by_ref_.find({rank, id});
    if (it != by_ref_.end()) return *it->second;
    auto s = std::make_unique<stand_in>(rank, id, next_token_);
    stand_in& r = *s;
    by_token_.emplace(r.token, &r);
    try {
        by_ref_.emplace(std::pair{rank, id}, std::move(s));
    } catch (...) {
        by_token_.erase(r.token);
        throw;
    }
    ++next_token_;
    return r;
}

watch_table::stand_in* watch_table::find(int rank, std::uint64_t id) noexcept {
    std::lock_guard g{mutex_};
    auto it = by_ref_.find({rank, id});
    return it == by_ref_.end() ? nullptr : it->second.get();
}

void watch_table::end(stand_in& s, exit_reason why) noexcept {
    // acq_rel: exactly one ender (see the invariants).
    if (s.ended.exchange(true, std::memory_order_acq_rel)) return;
    troupe::detail::life_end_as(s, std::move(why));
}

bool watch_table::end(std::uint64_t token, exit_reason why) noexcept {
    stand_in* s = nullptr;
    {
        std::lock_guard g{mutex_};
        auto it = by_token_.find(token);
        if (it != by_token_.end()) s = it->second;
    }
    if (!s) return false;
    end(*s, std::move(why));  // stand-ins are never removed: s stays valid
    return true;
}

exit_reason watch_table::lost(int r) {
    exit_reason why;
    why.why = exit_reason::kind::rank_lost;
    why.what = "rank " + std::to_string(r) + " lost";
    return why;
}

void watch_table::end_where(int r) noexcept {
    for (auto& [ref, s] : by_ref_) {
        if (r >= 0 && ref.first != r) continue;
        if (s->ended.load(std::memory_order_acquire)) continue;
        exit_reason why;
        why.why = exit_reason::kind::rank_lost;
        try {
            why = lost(ref.first);
        } catch (...) {
            // No memory for the text: the kind still says it.
        }
        end(*s, std::move(why));
    }
}

void watch_table::end_rank(int r) noexcept {
    std::lock_guard g{mutex_};
    end_where(r);
}

void watch_table::end_all() noexcept {
    std::lock_guard g{mutex_};
    end_where(-1);
}

bool watch_table::count(std::size_t& all, std::size_t& ended) noexcept {
    all = ended = 0;
    // A dump must not wait: a rank's end may hold the table while it sends.
    std::unique_lock g{mutex_, std::try_to_lock};
    if (!g.owns_lock()) return false;
    all = by_ref_.size();
    ended = 0;
    for (auto& [ref, s] : by_ref_)
        if (s->ended.load(std::memory_order_relaxed)) ++ended;
    return true;
}

}  // namespace troupe::remote::detail
