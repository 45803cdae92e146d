// Actor statistics (-Dstatistics=true): the per-worker counters summed
// into one report, and its printed form.
#include <ostream>
#include <utility>

#include "executor.hpp"

namespace troupe::detail {

actor_statistics executor::statistics() const {
    if (stopped) return final_stats_;
    actor_statistics s;
#if defined(TROUPE_STATISTICS)
    s.actors_created = ext_created.load(std::memory_order_relaxed);
    s.messages_sent = ext_sent.load(std::memory_order_relaxed);
    // Each report field and the per-worker counter summed into it.
    using S = actor_statistics;
    using C = worker_counters;
    static constexpr std::pair<std::uint64_t S::*, std::atomic<std::uint64_t> C::*> sums[] = {
        {&S::messages_sent, &C::sent},
        {&S::cross_worker_sends, &C::crossed},
        {&S::messages_received, &C::received},
        {&S::gulps, &C::gulps},
        {&S::gulped_messages, &C::gulped},
        {&S::missed_gulps, &C::missed},
        {&S::steal_attempts, &C::steal_attempts},
        {&S::steal_no_candidate, &C::no_candidate},
        {&S::steal_failed_swaps, &C::failed_swaps},
        {&S::steals, &C::steals},
        {&S::messages_stolen, &C::stolen},
        {&S::parks, &C::parks},
        {&S::adopted_gulps, &C::adopted},
        {&S::wakes_taken_over, &C::wakes_taken_over},
        {&S::long_batch_flushes, &C::long_batch_flushes},
        {&S::naps, &C::naps}};
    for (auto& w : workers) {
        s.actors_created += w->created.load(std::memory_order_relaxed);
        for (const auto& [field, counter] : sums)
            s.*field += (w->stats.*counter).load(std::memory_order_relaxed);
    }
#endif
    return s;
}

}  // namespace troupe::detail

namespace troupe {

std::ostream& operator<<(std::ostream& os, [[maybe_unused]] const actor_statistics& s) {
#if !defined(TROUPE_STATISTICS)
    return os << "  statistics not built in (configure troupe with -Dstatistics=true)\n";
#else
    os << "  actors created:         " << s.actors_created << '\n'
       << "  messages sent:          " << s.messages_sent << " (" << s.cross_worker_sends
       << " by behaviours to another worker's mailbox)\n"
       << "  messages received:      " << s.messages_received << '\n'
       << "  gulps:                  " << s.gulps << " (average " << s.average_gulp()
       << " messages)\n"
       << "  missed gulps:           " << s.missed_gulps << '\n'
       << "  steal attempts:         " << s.steal_attempts << '\n'
       << "  steal failures:         " << s.steal_no_candidate << " no candidate, "
       << s.steal_failed_swaps << " failed swaps\n"
       << "  steals:                 " << s.steals << '\n'
       << "  messages stolen:        " << s.messages_stolen << " (average " << s.average_steal()
       << " per steal)\n"
       << "  idle parks:             " << s.parks << '\n'
       << "  parked workers' work:   " << s.adopted_gulps << " gulps by awake workers, "
       << s.wakes_taken_over << " wakes taken over by the sender\n"
       << "  long batches' flushes:  " << s.long_batch_flushes << '\n'
       << "  naps:                   " << s.naps << '\n';
    return os;
#endif
}

}  // namespace troupe
