// bench=select_futures, system=troupe: the thesis' future benchmark. A
// server thread fulfils futures A, B and C (in that order) each round; the
// client waits for them with one of four predicates (--predicate):
//   or     A | B | C            and    A & B & C
//   andor  A & B | C            orand  (A | B) & C
// Each body calls get(). After the statement the client waits until the
// server finished the round (a semaphore), resets the futures and starts the
// next round (another semaphore): a cheap handshake so the server never
// races ahead. Reports statements (rounds) per second. --rounds=N runs N
// rounds (rounded up to 64) instead of --ms, for instruction counts under
// callgrind (with --processors=1 the count per round is repeatable).
//
// Twin: bench/peers/go/select_futures.go (futures as buffered channels of
// one element, the predicates as select loops).
#include <atomic>
#include <string>
#include <thread>

#include <troupe/cluster.hpp>
#include <troupe/future.hpp>
#include <troupe/semaphore.hpp>
#include <troupe/thread.hpp>
#include <troupe/waituntil.hpp>

#include "bench_util.hpp"

int main(int argc, char** argv) {
    using troupe::on;
    const long ms = bench::option(argc, argv, "ms", 2000);
    const long fixed_rounds = bench::option(argc, argv, "rounds", 0);
    const long procs = bench::option(argc, argv, "processors", 2);
    const std::string predicate = bench::option_text(argc, argv, "predicate", "or");
    int shape = predicate == "or"      ? 0
                : predicate == "and"   ? 1
                : predicate == "andor" ? 2
                : predicate == "orand" ? 3
                                       : -1;
    if (shape < 0) bench::fail("select_futures: --predicate must be or, and, andor or orand");

    troupe::cluster pool{static_cast<std::size_t>(procs)};
    troupe::future<int> A, B, C;
    troupe::semaphore go{0}, done{0};
    std::atomic<bool> stop{false};
    long rounds = 0, sum = 0;

    troupe::thread server{pool, [&] {
                              for (;;) {
                                  go.acquire();
                                  if (stop.load(std::memory_order_relaxed)) return;
                                  A.fulfil(1);
                                  B.fulfil(2);
                                  C.fulfil(3);
                                  done.release();
                              }
                          }};
    bench::clock::time_point t0, t1;
    troupe::thread client{
        pool, [&] {
            auto a = [&] { sum += A.get(); };
            auto b = [&] { sum += B.get(); };
            auto c = [&] { sum += C.get(); };
            t0 = bench::clock::now();
            const auto until = t0 + std::chrono::milliseconds(ms);
            while (fixed_rounds > 0 ? rounds < fixed_rounds : bench::clock::now() < until) {
                for (int i = 0; i < 64; ++i) {  // read the clock now and then only
                    go.release();
                    switch (shape) {
                    case 0: troupe::waituntil(on(A, a) | on(B, b) | on(C, c)); break;
                    case 1: troupe::waituntil(on(A, a) & on(B, b) & on(C, c)); break;
                    case 2: troupe::waituntil((on(A, a) & on(B, b)) | on(C, c)); break;
                    default: troupe::waituntil((on(A, a) | on(B, b)) & on(C, c)); break;
                    }
                    done.acquire();
                    A.reset();
                    B.reset();
                    C.reset();
                    ++rounds;
                }
            }
            t1 = bench::clock::now();
            stop.store(true, std::memory_order_relaxed);
            go.release();
        }};
    client.join();
    server.join();
    if (sum < rounds) bench::fail("select_futures: a statement ran no body");
    bench::result("select_futures", "troupe", "ops_per_s",
                  static_cast<double>(rounds) / bench::seconds(t0, t1), "predicate=" + predicate);
}
