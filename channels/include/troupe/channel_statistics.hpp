#pragma once
/// Channel statistics (statistics builds, `-Dstatistics=true`; zero cost and
/// all zeros otherwise).
///
///     troupe::channel<int> ch{16, "jobs"};
///     ...
///     auto mine = ch.statistics();                 // this channel, now
///     auto all = troupe::channel_statistics_totals(); // every channel destroyed so far
///
/// Every channel adds its counters to a program-wide total when it is
/// destroyed, and a statistics build prints that total as one line at exit
/// ("troupe statistics: channels: 12 destroyed, inserts ..."), only if a
/// channel was destroyed. Asked for per channel
/// (`set_channel_statistics_report(channel_statistics_report::per_channel)`,
/// or `TROUPE_CHANNEL_STATISTICS=per_channel` in the environment), each
/// channel also prints its own line when destroyed; `off` prints nothing.
/// Counters are kept under the channel's lock; the totals are atomics.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "troupe/knobs.hpp"

namespace troupe {

/// Counters of one channel, or totals over several.
struct channel_statistics {
    std::uint64_t channels = 0;         ///< channels counted (1 for one channel)
    std::uint64_t inserts = 0;          ///< insert operations (blocking, try, select, flush copies)
    std::uint64_t blocked_inserts = 0;  ///< of which waited for a consumer
    std::uint64_t removes = 0;          ///< remove operations
    std::uint64_t blocked_removes = 0;  ///< of which waited for a producer

    channel_statistics& operator+=(const channel_statistics& o) noexcept {
        channels += o.channels;
        inserts += o.inserts;
        blocked_inserts += o.blocked_inserts;
        removes += o.removes;
        blocked_removes += o.blocked_removes;
        return *this;
    }
};

/// What a statistics build prints about channels.
enum class channel_statistics_report {
    totals_at_exit,  ///< one line of totals at exit (default)
    per_channel,     ///< that, plus one line per channel at its destruction
    off,             ///< nothing
};

namespace detail {

/// "inserts N (blocking N), removes N (blocking N)".
inline std::string format_channel_counts(const channel_statistics& s) {
    char line[160];
    std::snprintf(line, sizeof line, "inserts %llu (blocking %llu), removes %llu (blocking %llu)",
                  (unsigned long long)s.inserts, (unsigned long long)s.blocked_inserts,
                  (unsigned long long)s.removes, (unsigned long long)s.blocked_removes);
    return line;
}

/// The program-wide totals; prints them at exit (statistics builds).
class channel_statistics_registry {
public:
    static channel_statistics_registry& get() {
        static channel_statistics_registry r;  // constructed on first use, printed at exit
        return r;
    }
    channel_statistics_registry(const channel_statistics_registry&) = delete;

    void add(const channel_statistics& s) noexcept {
        // Relaxed: totals are read at exit or by channel_statistics_totals,
        // after the destructions they should include (user synchronisation).
        channels_.fetch_add(s.channels, std::memory_order_relaxed);
        inserts_.fetch_add(s.inserts, std::memory_order_relaxed);
        blocked_inserts_.fetch_add(s.blocked_inserts, std::memory_order_relaxed);
        removes_.fetch_add(s.removes, std::memory_order_relaxed);
        blocked_removes_.fetch_add(s.blocked_removes, std::memory_order_relaxed);
    }
    channel_statistics totals() const noexcept {
        channel_statistics s;
        s.channels = channels_.load(std::memory_order_relaxed);
        s.inserts = inserts_.load(std::memory_order_relaxed);
        s.blocked_inserts = blocked_inserts_.load(std::memory_order_relaxed);
        s.removes = removes_.load(std::memory_order_relaxed);
        s.blocked_removes = blocked_removes_.load(std::memory_order_relaxed);
        return s;
    }
    channel_statistics_report mode() const noexcept {
        return mode_.load(std::memory_order_relaxed);
    }
    void set_mode(channel_statistics_report m) noexcept {
        mode_.store(m, std::memory_order_relaxed);
    }

private:
    channel_statistics_registry() noexcept : mode_(from_environment()) {}
    ~channel_statistics_registry() {
        const channel_statistics s = totals();
        if (s.channels == 0 || mode() == channel_statistics_report::off) return;
        std::fprintf(stderr, "troupe statistics: channels: %llu destroyed, %s\n",
                     (unsigned long long)s.channels, format_channel_counts(s).c_str());
    }
    static channel_statistics_report from_environment() noexcept {
        if (knobs::is(knobs::channel_statistics, "per_channel"))
            return channel_statistics_report::per_channel;
        if (knobs::is(knobs::channel_statistics, "off")) return channel_statistics_report::off;
        return channel_statistics_report::totals_at_exit;
    }

    std::atomic<std::uint64_t> channels_{0}, inserts_{0}, blocked_inserts_{0}, removes_{0},
        blocked_removes_{0};
    std::atomic<channel_statistics_report> mode_;
};

}  // namespace detail

/// Totals over every channel destroyed so far (all zeros unless this is a
/// statistics build). Never blocks; never throws.
inline channel_statistics channel_statistics_totals() noexcept {
#if defined(TROUPE_STATISTICS)
    return detail::channel_statistics_registry::get().totals();
#else
    return {};
#endif
}

/// Chooses what a statistics build prints (see the header comment); the
/// environment variable TROUPE_CHANNEL_STATISTICS sets the initial choice.
/// Does nothing in other builds. Never throws.
inline void set_channel_statistics_report(channel_statistics_report r) noexcept {
#if defined(TROUPE_STATISTICS)
    detail::channel_statistics_registry::get().set_mode(r);
#else
    (void)r;
#endif
}

}  // namespace troupe
