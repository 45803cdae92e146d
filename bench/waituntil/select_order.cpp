// bench=select_order, system=troupe: the thesis' pathological case for
// Go's select. P1 and C1 select over channels A and B (A first: written
// order is priority); P2 and C2 insert into and remove from B only, with
// plain channel operations. Go's select locks every channel of the
// statement, so P1/C1 serialise with P2/C2 on B's lock; waituntil holds one
// channel lock at a time. Reports consumptions per second (C1 + C2) before
// the stop flag, with 4 user threads on --processors processors.
//
// Twin: bench/peers/go/select_order.go.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <troupe/channel.hpp>
#include <troupe/cluster.hpp>
#include <troupe/thread.hpp>
#include <troupe/waituntil.hpp>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    using troupe::on;
    const long ms = bench::option(argc, argv, "ms", 2000);
    const long capacity = bench::option(argc, argv, "capacity", 128);
    const long procs = bench::option(argc, argv, "processors", 2);

    troupe::cluster pool{static_cast<std::size_t>(procs)};
    troupe::channel<long> A{static_cast<std::size_t>(capacity), "A"},
        B{static_cast<std::size_t>(capacity), "B"};
    std::atomic<bool> start{false}, stop{false};
    std::atomic<long> inserted{0}, removed{0}, counted{0};

    auto wait_start = [&] {
        while (!start.load(std::memory_order_acquire)) troupe::this_thread::yield();
    };
    auto produce = [&](bool select) {
        wait_start();
        long n = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            if (select) troupe::waituntil(on(A.insert_from(1L)) | on(B.insert_from(1L)));
            else B.insert(1L);
            ++n;
        }
        inserted.fetch_add(n);
    };
    auto consume = [&](bool select) {
        wait_start();
        long v = 0, n = 0, before_stop = 0;
        try {
            for (;;) {
                if (select) troupe::waituntil(on(A.remove_into(v)) | on(B.remove_into(v)));
                else v = B.remove();
                n += v;
                if (!stop.load(std::memory_order_relaxed)) ++before_stop;
            }
        } catch (troupe::channel_closed&) {}
        for (auto* c : {&A, &B})
            while (c->try_remove(v) == troupe::channel_status::success) n += v;
        removed.fetch_add(n);
        counted.fetch_add(before_stop);
    };
    std::vector<troupe::thread> ps, cs;
    cs.emplace_back(pool, [&] { consume(true); });   // C1
    cs.emplace_back(pool, [&] { consume(false); });  // C2
    ps.emplace_back(pool, [&] { produce(true); });   // P1
    ps.emplace_back(pool, [&] { produce(false); });  // P2
    const double elapsed = bench::timed_window(start, stop, ms);
    for (auto& t : ps) t.join();
    A.close();
    B.close();
    for (auto& t : cs) t.join();
    if (removed.load() != inserted.load()) bench::fail("select_order: values lost");
    bench::result("select_order", "troupe", "ops_per_s",
                  static_cast<double>(counted.load()) / elapsed, "");
}
