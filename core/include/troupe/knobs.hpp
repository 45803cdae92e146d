#pragma once
/// Every run-time setting troupe reads from the environment, in one table:
/// each variable next to its default and what it sets. Every module reads
/// its variables through this table (nothing else in the library calls
/// getenv for a `TROUPE_*` name). docs/knobs.md is generated from it
/// (`python3 scripts/check_knobs.py --write`; the `support` suite's
/// `scripts/check_knobs` test fails when the two differ, or when a
/// `TROUPE_*` variable is read anywhere without being in the table).
///
/// Compile-time defaults are in `troupe::defaults::<module>`; an options
/// object set in code (`cluster_options`, `actor_system_config`, ...) takes
/// precedence over the variable where both exist.
namespace troupe::knobs {

/// One environment variable: its name, its default (as documented) and
/// what it sets.
struct knob {
    const char* name;
    const char* fallback;
    const char* doc;
};

// core
inline constexpr knob processors{
    "TROUPE_PROCESSORS", "CPUs in the affinity mask, capped by the cgroup CPU quota (at least 2)",
    "Processors of a cluster made without a count, and the default worker count of an actor "
    "system (a positive integer)."};
inline constexpr knob idle_spin_us{
    "TROUPE_IDLE_SPIN_US", "50",
    "Longest time, in microseconds, an idle processor spins looking for work before it sleeps "
    "(`cluster_options::idle_spin` takes precedence)."};
inline constexpr knob handoff_grace_us{
    "TROUPE_HANDOFF_GRACE_US", "20",
    "Microseconds a thread woken by a user thread stays reserved for the waker's processor "
    "before an idle processor may steal it (at least 1; `cluster_options::handoff_grace` takes "
    "precedence)."};
inline constexpr knob park_spin{
    "TROUPE_PARK_SPIN", "1000",
    "Most polls of its permit an OS thread makes in `park()` before it sleeps on the futex (0: "
    "sleep at once; `set_park_spin_policy` overrides it)."};
inline constexpr knob deadlock{
    "TROUPE_DEADLOCK", "abort",
    "What the watch thread does when every thread is asleep with nothing to wake it: `abort` "
    "(print the report and abort), `report` (print it and go on) or `off` (no check)."};
inline constexpr knob dump_signal{
    "TROUPE_DUMP_SIGNAL", "(none)",
    "A signal (`QUIT`, `USR1`, `USR2`, `HUP`, `INT`, `TERM`, `WINCH`, with or without `SIG`, or "
    "a number) on which the watch thread prints the dump of every thread to stderr."};
inline constexpr knob trace{"TROUPE_TRACE", "(none: no trace)",
                            "Path of the execution trace (Chrome trace event JSON) written at "
                            "exit (a build with `-Dtrace=false` records nothing)."};
inline constexpr knob trace_events{
    "TROUPE_TRACE_EVENTS", "4194304",
    "Events of the execution trace kept per kernel thread (rounded up to a power of two, 1024 "
    "to 2^24)."};
// channels
inline constexpr knob channel_statistics{
    "TROUPE_CHANNEL_STATISTICS", "totals_at_exit",
    "In a statistics build (`-Dstatistics=true`): `totals_at_exit` prints channel totals at "
    "exit, `per_channel` a line per channel as it is destroyed, `off` nothing."};
// io
inline constexpr knob io{"TROUPE_IO", "uring (epoll when io_uring is not built or refused)",
                         "The I/O engine: `uring` (also `io_uring`) or `epoll`."};
// actors
inline constexpr knob actor_workers{
    "TROUPE_ACTOR_WORKERS", "(kernel threads)",
    "Experimental: `user_threads[:K]` runs the workers of an actor system left at "
    "`worker_threads::from_environment` as user threads, K per processor (1 to 64, default 1)."};

/// The table, in the order docs/knobs.md lists it.
inline constexpr const knob* all[] = {
    &processors, &idle_spin_us, &handoff_grace_us,   &park_spin, &deadlock,     &dump_signal,
    &trace,      &trace_events, &channel_statistics, &io,        &actor_workers};

/// The variable's value, or nullptr when it is unset. Never blocks; nothrow.
const char* value(const knob& k) noexcept;

/// The variable as a decimal integer in [0, max], or `fallback` when it is
/// unset, empty, not a number or negative (a larger number is clamped to
/// `max`). Never blocks; nothrow.
long get_or(const knob& k, long fallback, long max) noexcept;

/// Whether the variable is set to exactly `word`. Never blocks; nothrow.
bool is(const knob& k, const char* word) noexcept;

}  // namespace troupe::knobs
