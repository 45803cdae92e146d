// bench=select_contend and bench=select_spin, system=troupe: the thesis'
// channel multiplexing benchmarks. P producers and C consumers (troupe user
// threads on --processors processors) each select over the same K channels
// of --capacity ints, K written out as K clauses of one statement (K = 2, 4,
// 8); a consumption is one operation. select_contend blocks in waituntil;
// select_spin (--spin=1) adds an otherwise clause (Go's `default`) and
// retries, yielding its processor after a miss (troupe user threads are not
// preempted, so a spinning thread must let the others on its processor run).
// Reports consumptions per second made before the stop flag. --fair=1 (no
// Go counterpart; param mode=fair) gives each thread a troupe::rotation, so
// its statements start at the next channel in turn, as Go's select starts
// at a random case, instead of written-order priority.
//
// Shutdown: a stop flag ends the producers; the channels are then closed,
// and each consumer's statement throws channel_closed once the channels are
// drained. Every inserted value must have been removed.
//
// Twin: bench/peers/go/select_channels.go.
#include <array>
#include <atomic>
#include <deque>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <troupe/channel.hpp>
#include <troupe/cluster.hpp>
#include <troupe/thread.hpp>
#include <troupe/waituntil.hpp>

#include "bench_util.hpp"

namespace {

using troupe::on;

template <std::size_t K>
struct workload {
    std::array<troupe::channel<long>*, K> ch;
    std::atomic<bool> stop{false};
    std::atomic<long> inserted{0}, removed{0}, counted{0};
    bool spin = false;
    bool fair = false;

    // Written-order priority, or this thread's rotation in fair mode. A
    // clause tree cannot be passed through a helper (it is written inside
    // the waituntil call), so each statement is spelled out per mode.
    template <std::size_t... I>
    bool insert_one(troupe::rotation& r, std::index_sequence<I...>) {
        long one = 1;  // Go's `c <- 1`
        if (!spin) {
            if (fair) troupe::waituntil(r, (on(ch[I]->insert_from(one)) | ...));
            else troupe::waituntil((on(ch[I]->insert_from(one)) | ...));
            return true;
        }
        if (fair)
            return !troupe::waituntil(r, (on(ch[I]->insert_from(one)) | ...),
                                      troupe::otherwise([] {}))
                        .otherwise_ran();
        return !troupe::waituntil((on(ch[I]->insert_from(one)) | ...), troupe::otherwise([] {}))
                    .otherwise_ran();
    }
    // One statement removing from whichever channel has an element first.
    template <std::size_t... I>
    bool remove_one(troupe::rotation& r, long& v, std::index_sequence<I...>) {
        if (!spin) {
            if (fair) troupe::waituntil(r, (on(ch[I]->remove_into(v)) | ...));
            else troupe::waituntil((on(ch[I]->remove_into(v)) | ...));
            return true;
        }
        if (fair)
            return !troupe::waituntil(r, (on(ch[I]->remove_into(v)) | ...),
                                      troupe::otherwise([] {}))
                        .otherwise_ran();
        return !troupe::waituntil((on(ch[I]->remove_into(v)) | ...), troupe::otherwise([] {}))
                    .otherwise_ran();
    }

    void producer() {
        long n = 0;
        troupe::rotation r;
        while (!stop.load(std::memory_order_relaxed)) {
            if (insert_one(r, std::make_index_sequence<K>{})) ++n;
            else troupe::this_thread::yield();
        }
        inserted.fetch_add(n);
    }
    void consumer() {
        long v = 0, n = 0, before_stop = 0;
        troupe::rotation r;
        try {
            for (;;) {
                if (remove_one(r, v, std::make_index_sequence<K>{})) {
                    n += v;
                    if (!stop.load(std::memory_order_relaxed)) ++before_stop;
                } else {
                    troupe::this_thread::yield();
                }
            }
        } catch (troupe::channel_closed&) {}
        // The first closed-and-empty channel ended the statement: take what
        // the others still hold.
        for (auto* c : ch)
            while (c->try_remove(v) == troupe::channel_status::success) n += v;
        removed.fetch_add(n);
        counted.fetch_add(before_stop);
    }
};

template <std::size_t K>
double run(long producers, long consumers, long ms, long capacity, long procs, bool spin,
           bool fair) {
    troupe::cluster pool{static_cast<std::size_t>(procs)};
    std::deque<troupe::channel<long>> chans;
    workload<K> w;
    for (std::size_t i = 0; i < K; ++i)
        w.ch[i] = &chans.emplace_back(static_cast<std::size_t>(capacity));
    w.spin = spin;
    w.fair = fair;
    std::atomic<bool> start{false};
    auto gated = [&](auto body) {
        return [&, body] {
            while (!start.load(std::memory_order_acquire)) troupe::this_thread::yield();
            body();
        };
    };
    std::vector<troupe::thread> cs, ps;
    for (long i = 0; i < consumers; ++i) cs.emplace_back(pool, gated([&] { w.consumer(); }));
    for (long i = 0; i < producers; ++i) ps.emplace_back(pool, gated([&] { w.producer(); }));
    const double elapsed = bench::timed_window(start, w.stop, ms);
    for (auto& t : ps) t.join();
    for (auto& c : chans) c.close();
    for (auto& t : cs) t.join();
    if (w.removed.load() != w.inserted.load()) bench::fail("select_channels: values lost");
    return static_cast<double>(w.counted.load()) / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
    const long producers = bench::option(argc, argv, "producers", 1);
    const long consumers = bench::option(argc, argv, "consumers", 1);
    const long k = bench::option(argc, argv, "k", 2);
    const long ms = bench::option(argc, argv, "ms", 2000);
    const long capacity = bench::option(argc, argv, "capacity", 128);
    const long procs = bench::option(argc, argv, "processors", 2);
    const bool spin = bench::option(argc, argv, "spin", 0) != 0;
    const bool fair = bench::option(argc, argv, "fair", 0) != 0;
    double ops = 0;
    switch (k) {
    case 2: ops = run<2>(producers, consumers, ms, capacity, procs, spin, fair); break;
    case 4: ops = run<4>(producers, consumers, ms, capacity, procs, spin, fair); break;
    case 8: ops = run<8>(producers, consumers, ms, capacity, procs, spin, fair); break;
    default: bench::fail("select_channels: --k must be 2, 4 or 8");
    }
    bench::result(spin ? "select_spin" : "select_contend", "troupe", "ops_per_s", ops,
                  "k=" + std::to_string(k) + " producers=" + std::to_string(producers) +
                      " consumers=" + std::to_string(consumers) + (fair ? " mode=fair" : ""));
}
