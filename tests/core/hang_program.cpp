// A program that hangs on purpose, in the way its first argument names, for
// dump_test.cpp (run as a child process: a real deadlock cannot be undone
// inside a test) and for the gdb script's test (scripts/troupe-gdb.py).
//
// Modes that leave a deadlock print the dump to stdout once it shows the
// cycle, then end with _exit(0) (nothing can be joined). Misuse reports go
// to stdout as "misuse: <message>" and the program goes on.
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include "troupe/blocking_lock.hpp"
#include "troupe/cluster.hpp"
#include "troupe/dump.hpp"
#include "troupe/error.hpp"
#include "troupe/future.hpp"
#include "troupe/semaphore.hpp"
#include "troupe/thread.hpp"

namespace {

void say(const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
}

std::string dump_text() {
    std::ostringstream os;
    troupe::dump(os);
    return os.str();
}

// Polls (yielding) until the dump shows `what` `count` times.
void wait_for_dump(std::string_view what, int count = 1) {
    for (;;) {
        const std::string d = dump_text();
        int n = 0;
        for (std::size_t at = d.find(what); at != std::string::npos; at = d.find(what, at + 1)) ++n;
        if (n >= count) return;
        std::this_thread::yield();
    }
}

// Misuse reports written so far (the handler main installs counts them).
std::atomic<int> misuse_said{0};

// Dumps once the cycle is complete and exits. `reported`: in checked builds
// the lock whose wait closed the cycle reports it at once; that report is
// written by the waiting thread, which may still be writing it when the
// cycle becomes visible here, so wait for it too (an event, not a time).
[[noreturn]] void finish_with_dump(bool reported = false) {
    while (troupe::deadlock_cycles().empty()) std::this_thread::yield();
    if (reported && troupe::checked_build)
        while (misuse_said.load() == 0) std::this_thread::yield();
    say(dump_text());
    std::_Exit(0);
}

// Two or three user threads, each holding one lock and waiting for the next.
[[noreturn]] void lock_cycle(int n) {
    static troupe::blocking_lock locks[3] = {troupe::blocking_lock{"a"}, troupe::blocking_lock{"b"},
                                             troupe::blocking_lock{"c"}};
    static const char* names[3] = {"first", "second", "third"};
    static std::atomic<int> holding{0};
    static int size = n;
    for (int i = 0; i < n; ++i) {
        troupe::thread_attributes a;
        a.name = names[i];
        // Detached by leaking the handle: these threads never finish.
        new troupe::thread(a, [i] {
            locks[i].lock();
            holding.fetch_add(1);
            while (holding.load() < size) troupe::this_thread::yield();
            locks[(i + 1) % size].lock();
        });
    }
    finish_with_dump(true);
}

// Two user threads joining each other.
[[noreturn]] void join_cycle() {
    static troupe::thread* t[2];
    static troupe::future<int> ready;
    troupe::thread_attributes a;
    a.name = "left";
    t[0] = new troupe::thread(a, [] {
        ready.get();
        t[1]->join();
    });
    a.name = "right";
    t[1] = new troupe::thread(a, [] {
        ready.get();
        t[0]->join();
    });
    ready.fulfil(1);
    finish_with_dump();
}

// A user thread and an OS thread, each holding one lock, wait for the other's.
[[noreturn]] void mixed_cycle() {
    static troupe::blocking_lock a{"user-side"}, b{"os-side"};
    static std::atomic<int> holding{0};
    troupe::thread_attributes at;
    at.name = "user";
    new troupe::thread(at, [] {
        a.lock();
        holding.fetch_add(1);
        while (holding.load() < 2) troupe::this_thread::yield();
        b.lock();
    });
    std::thread([] {
        troupe::this_thread::set_name("os");
        b.lock();
        holding.fetch_add(1);
        while (holding.load() < 2) std::this_thread::yield();
        a.lock();
    }).detach();
    finish_with_dump(true);
}

// Every thread asleep on a troupe primitive: main waits for a future that a
// user thread would fulfil after a semaphore that nobody releases.
[[noreturn]] void everyone_asleep() {
    static troupe::semaphore never{0, "never"};
    static troupe::future<int> result;
    troupe::thread_attributes a;
    a.name = "stuck";
    new troupe::thread(a, [] {
        never.acquire();
        result.fulfil(1);
    });
    troupe::this_thread::set_name("main");
    result.get();  // the watch thread reports (TROUPE_DEADLOCK=abort: abort)
    say("woke up\n");
    std::_Exit(0);
}

// As everyone_asleep, with a deadlock handler that calls exit(3): the exit
// must end the program (not wait for the threads asleep for ever), and a
// trace (TROUPE_TRACE) must be written. The user thread names itself, so
// the trace shows that name.
[[noreturn]] void asleep_then_exit() {
    static troupe::semaphore never{0, "never"};
    static troupe::future<int> result;
    troupe::set_deadlock_handler([](std::string_view) {
        say("handler\n");
        std::exit(3);
    });
    new troupe::thread([] {
        troupe::this_thread::set_name("renamed-in");
        troupe::this_thread::yield();
        never.acquire();
        result.fulfil(1);
    });
    troupe::this_thread::set_name("main");
    result.get();
    say("woke up\n");
    std::_Exit(0);
}

// User threads taking turns on a lock (so the trace has events) until the
// program ends the way `how` names: "term" (waits for SIGTERM from the
// parent), "segv" (a user thread faults), "abort" (std::abort), "busy"
// (returns from main normally after many rounds: for the drop count).
[[noreturn]] void traced_then(const std::string& how) {
    static troupe::blocking_lock l{"turns"};
    static std::atomic<long> rounds{0};
    static std::atomic<bool> stop{false};
    troupe::thread_attributes a;
    a.name = "turn-taker";
    for (int i = 0; i < 2; ++i)
        new troupe::thread(a, [] {
            while (!stop.load()) {
                {
                    std::lock_guard g{l};
                    rounds.fetch_add(1);
                }
                troupe::this_thread::yield();
            }
        });
    while (rounds.load() < 20000) std::this_thread::yield();
    if (how == "term") {
        say("ready\n");
        char c;
        for (;;) {
            pollfd p{0, POLLIN, 0};
            if (::poll(&p, 1, 20) > 0 && ::read(0, &c, 1) <= 0) break;
        }
        std::_Exit(0);  // stdin closed without a signal: the test fails
    }
    if (how == "segv") {
        troupe::thread_attributes f;
        f.name = "faulting";
        new troupe::thread(f, [] {
            volatile int* nowhere = nullptr;
            *nowhere = 1;
        });
        for (;;) std::this_thread::yield();
    }
    if (how == "abort") std::abort();
    stop.store(true);
    std::exit(0);  // the leaked threads finish; the cluster waits for them
}

// As above, but a timer (a sleeping user thread) releases the semaphore:
// nothing must be reported.
[[noreturn]] void asleep_with_timer() {
    static troupe::semaphore later{0, "later"};
    static troupe::future<int> result;
    new troupe::thread([] {
        later.acquire();
        result.fulfil(1);
    });
    new troupe::thread([] {
        troupe::this_thread::sleep_for(std::chrono::milliseconds(700));
        later.release();
    });
    result.get();
    say("woke up\n");
    std::_Exit(0);
}

// As above, but an OS thread outside troupe (sleeping in the kernel, not on
// a troupe primitive) releases it: nothing must be reported.
[[noreturn]] void asleep_with_outside_thread() {
    static troupe::semaphore later{0, "later"};
    static troupe::future<int> result;
    new troupe::thread([] {
        later.acquire();
        result.fulfil(1);
    });
    std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(700));
        later.release();
    }).detach();
    result.get();
    say("woke up\n");
    std::_Exit(0);
}

// Parked user threads for TROUPE_DUMP_SIGNAL and the gdb script; then
// stops itself (SIGTRAP: gdb takes over) or waits for the dump signal.
[[noreturn]] void parked(bool for_gdb) {
    static troupe::blocking_lock l{"guarded"};
    static troupe::semaphore gate{0, "gate"};
    l.lock();
    troupe::thread_attributes a;
    a.name = "lock-waiter";
    new troupe::thread(a, [] {
        l.lock();
        l.unlock();
    });
    a.name = "gate-waiter";
    new troupe::thread(a, [] { gate.acquire(); });
    wait_for_dump("waiting for", 2);
    if (for_gdb) {
        std::raise(SIGTRAP);
        std::_Exit(0);
    }
    // Only this thread takes the signal (every other thread inherited it
    // blocked, see main).
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &usr1, nullptr);
    say("ready\n");
    // The parent sends the signal; the dump goes to stderr. Then it closes
    // our stdin. A bounded poll() in a loop rather than one read() that
    // blocks for good: TSan defers a signal until its thread enters or
    // leaves an intercepted call, so the thread must come back out now and
    // then for the handler to run (the loop ends on stdin's EOF, not on
    // time).
    char c;
    for (;;) {
        pollfd p{0, POLLIN, 0};
        if (::poll(&p, 1, 20) > 0 && ::read(0, &c, 1) <= 0) break;
    }
    std::_Exit(0);
}

[[noreturn]] void relock() {
    static troupe::blocking_lock l{"twice"};
    l.lock();
    l.lock();  // reported in every build (the default handler aborts)
    say("returned\n");
    std::_Exit(0);
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "signal") {
        // Block the dump signal before troupe makes any thread (they inherit
        // the mask); parked() unblocks it in this thread.
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
    }
    if (mode != "relock" && mode != "asleep" && mode.rfind("traced-", 0) != 0)
        troupe::set_misuse_handler([](std::string_view m) {
            say("misuse: " + std::string(m) + "\n");
            misuse_said.fetch_add(1);
        });
    // Every mode runs on the default cluster.
    if (mode == "lock-cycle-2") lock_cycle(2);
    if (mode == "lock-cycle-3") lock_cycle(3);
    if (mode == "join-cycle") join_cycle();
    if (mode == "mixed-cycle") mixed_cycle();
    if (mode == "asleep") everyone_asleep();
    if (mode == "asleep-timer") asleep_with_timer();
    if (mode == "asleep-outside") asleep_with_outside_thread();
    if (mode == "signal") parked(false);
    if (mode == "gdb") parked(true);
    if (mode == "relock") relock();
    if (mode == "asleep-exit") asleep_then_exit();
    if (mode.rfind("traced-", 0) == 0) traced_then(mode.substr(7));
    std::fprintf(stderr, "hang_program: unknown mode '%s'\n", mode.c_str());
    return 2;
}
