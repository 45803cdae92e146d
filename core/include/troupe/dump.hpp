#pragma once
/// See inside a running program: a dump of every cluster, processor, user
/// thread and blocked OS thread with what each waits on, and the deadlock
/// cycles among them.
///
///     troupe::this_thread::set_name("producer");
///     ...
///     troupe::dump(std::cerr);       // or: TROUPE_DUMP_SIGNAL=QUIT, then kill -QUIT <pid>
///
/// Each parked thread says what it waits on (a lock and its owner, a channel
/// and its occupancy, a future, a semaphore, a condition variable, a
/// waituntil, a sleep until t, the join of a thread) and for how long; every
/// cycle of the wait-for graph (lock owners, joined threads) is printed as
/// "deadlock: thread 7 waits for blocking_lock 0x... held by thread 9, which
/// waits for ...". Modules above core add their own sections (the actor
/// systems: workers, mailboxes, live actors, asks outstanding).
///
/// Environment (read when the first cluster is made, or when an OS thread
/// first waits on a troupe primitive):
/// - `TROUPE_DUMP_SIGNAL=QUIT` (or `USR1`, `USR2`, a number): on that signal
///   a troupe thread writes the dump to stderr; the program continues.
/// - `TROUPE_DEADLOCK=abort` (default), `report` or `off`: when every user
///   thread is parked, every OS thread known to troupe is blocked on a troupe
///   primitive, no timer is pending and no other thread exists in the
///   process that could wake them, troupe says so with the dump ("troupe:
///   all threads are asleep - deadlock!") and then aborts (`abort`) or lets
///   the program hang (`report`). A thread outside troupe (one blocked in
///   read(), a library's helper thread) or a pending timer means no report.
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace troupe {

/// Writes the dump described above to `os`. Safe from any thread, while
/// the program runs (what it prints is a snapshot: a thread may move on as
/// it is printed). Blocks only on the registry's lock (held for the dump's
/// length: thread creation and joins wait meanwhile). Throws what `os`
/// throws.
void dump(std::ostream& os);

/// Every cycle of the wait-for graph now, one line each, as dump() prints
/// them; empty if none. Throws std::bad_alloc.
std::vector<std::string> deadlock_cycles();

/// Called (on troupe's watch thread) with the report, dump included, when
/// every thread is found asleep; replaces TROUPE_DEADLOCK's action.
using deadlock_handler = void (*)(std::string_view report);
/// Installs `h` (nullptr restores the TROUPE_DEADLOCK action) and returns
/// the previous one. Nothrow.
deadlock_handler set_deadlock_handler(deadlock_handler h) noexcept;

}  // namespace troupe
