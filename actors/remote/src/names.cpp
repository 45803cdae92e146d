// Naming: the actors this rank publishes and the lookups it awaits
// (invariants in names.hpp).
#include "names.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace troupe::remote::detail {

void name_table::publish(std::string_view name, troupe::actor& a, std::string_view type) {
    std::lock_guard g{mutex_};
    std::string n{name};
    if (by_name_.count(n))
        throw std::invalid_argument("troupe::remote: rank " + std::to_string(rank_) +
                                    " already publishes an actor as \"" + n + "\"");
    by_id_.push_back(published{&a, n, std::string{type}, name_key(type)});
    try {
        by_name_.emplace(std::move(n), by_id_.size());
    } catch (...) {
        by_id_.pop_back();
        throw;
    }
    troupe::detail::publish_access::mark(a);  // ~actor will call unpublish
}

void name_table::unpublish(troupe::actor& a) noexcept {
    std::lock_guard g{mutex_};
    for (published& p : by_id_) {
        if (p.a != &a) continue;
        p.a = nullptr;           // gone: later frames for it are reported as such
        by_name_.erase(p.name);  // lookups fail; the name may be published again
    }
}

lookup_answer name_table::answer(std::string_view name) {
    lookup_answer a;
    std::lock_guard g{mutex_};
    if (auto it = by_name_.find(std::string{name}); it != by_name_.end()) {
        a.found = true;
        a.id = it->second;
        a.type = by_id_[a.id - 1].type;
    } else if (auto gone = std::find_if(
                   by_id_.rbegin(), by_id_.rend(),
                   [&](const published& p) { return p.a == nullptr && p.name == name; });
               gone != by_id_.rend()) {
        a.gone = true;  // published under that name, and destroyed since
        a.type = gone->type;
    } else {
        for (auto& [n, i] : by_name_) a.published.push_back(n);
        std::sort(a.published.begin(), a.published.end());
    }
    return a;
}

std::unique_lock<std::mutex> name_table::try_hold() noexcept {
    // As try_count_live: a delivery holds the table briefly.
    std::unique_lock<std::mutex> g{mutex_, std::try_to_lock};
    for (int i = 0; i < 1000 && !g.owns_lock(); ++i) {
        std::this_thread::yield();
        (void)g.try_lock();
    }
    return g;
}

bool name_table::try_count_live(std::size_t& live) noexcept {
    // A delivery holds the table only from finding an actor to appending to
    // its mailbox (never across a park): a few tries get it.
    bool got = false;
    for (int i = 0; i < 1000 && !(got = mutex_.try_lock()); ++i) std::this_thread::yield();
    if (!got) return false;
    live = 0;
    for (const published& p : by_id_)
        if (p.a) ++live;
    mutex_.unlock();
    return true;
}

std::uint64_t lookup_table::add(int to, std::string_view name,
                                std::function<void(const lookup_answer&)> done) {
    std::uint64_t id;
    {
        std::lock_guard g{mutex_};
        id = next_++;
        pending_.emplace(id, pending{to, std::string{name}, std::move(done)});
    }
    // seq_cst: as ask_table::add (the Dekker pair with a rank's goodbye).
    awaited_.fetch_add(1, std::memory_order_seq_cst);
    return id;
}

std::function<void(const lookup_answer&)> lookup_table::take(std::uint64_t id) {
    std::function<void(const lookup_answer&)> f;
    {
        std::lock_guard g{mutex_};
        auto it = pending_.find(id);
        if (it == pending_.end()) return f;  // ended already
        f = std::move(it->second.done);
        pending_.erase(it);
    }
    awaited_.fetch_sub(1, std::memory_order_seq_cst);
    return f;
}

std::vector<lookup_table::pending> lookup_table::take_to(int r) {
    std::vector<pending> out;
    {
        std::lock_guard g{mutex_};
        for (auto it = pending_.begin(); it != pending_.end();) {
            if (it->second.to != r) {
                ++it;
                continue;
            }
            out.push_back(std::move(it->second));
            it = pending_.erase(it);
        }
    }
    awaited_.fetch_sub(static_cast<int>(out.size()), std::memory_order_seq_cst);
    return out;
}

}  // namespace troupe::remote::detail
