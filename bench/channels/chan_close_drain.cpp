// bench=chan_close_drain, system=troupe: correctness under load. P
// producers insert distinct values and C consumers remove them (half drain
// after close, half stop at once) on one channel for --ms milliseconds;
// then the channel is closed mid-traffic. Every producer must get back
// exactly the value it was inserting, and every inserted value must be
// removed exactly once (by a consumer, or by the final drain). Reports
// lost_values = |inserted - removed| (counts), plus one if the sums or
// hash checksums of the two sides differ or a producer got a wrong value
// back (0 is the only correct result); a second line gives the removes per
// second achieved meanwhile.
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <troupe/channel.hpp>
#include <troupe/cluster.hpp>
#include <troupe/thread.hpp>

#include "bench_util.hpp"

namespace {
// Order-independent checksum of a multiset of values: count, sum, and the
// xor of a mixing hash (a loss plus a duplicate cannot cancel out).
struct checksum {
    std::uint64_t n = 0, sum = 0, hash = 0;
    void add(std::uint64_t v) {
        ++n;
        sum += v;
        std::uint64_t h = v * 0x9e3779b97f4a7c15ull;
        h ^= h >> 31;
        hash ^= h * 0xbf58476d1ce4e5b9ull;
    }
    void merge(const checksum& o) {
        n += o.n;
        sum += o.sum;
        hash ^= o.hash;
    }
};
}  // namespace

int main(int argc, char** argv) {
    const long producers = bench::option(argc, argv, "producers", 4);
    const long consumers = bench::option(argc, argv, "consumers", 4);
    const long ms = bench::option(argc, argv, "ms", 1000);
    const long capacity = bench::option(argc, argv, "capacity", 128);
    const long procs = bench::option(argc, argv, "processors", 2);

    troupe::cluster pool{static_cast<std::size_t>(procs)};
    troupe::channel<std::uint64_t> ch{static_cast<std::size_t>(capacity), "close_drain"};
    constexpr std::uint64_t stride = std::uint64_t{1} << 40;  // producer k: k * stride + i
    std::vector<checksum> in(static_cast<std::size_t>(producers)),
        out(static_cast<std::size_t>(consumers));
    std::atomic<long> wrong_return{0};
    std::vector<troupe::thread> ts;
    for (long k = 0; k < consumers; ++k)
        ts.emplace_back(pool, [&, k] {
            checksum mine;
            try {
                for (;;) mine.add(k % 2 ? ch.remove() : ch.remove(troupe::stop_on_close));
            } catch (troupe::channel_closed&) {}
            out[static_cast<std::size_t>(k)] = mine;
        });
    for (long k = 0; k < producers; ++k)
        ts.emplace_back(pool, [&, k] {
            checksum mine;
            for (std::uint64_t i = 0;; ++i) {
                const std::uint64_t v = static_cast<std::uint64_t>(k) * stride + i;
                try {
                    ch.insert(v);
                } catch (troupe::channel_closed_with<std::uint64_t>& e) {
                    if (e.value() != v) wrong_return.fetch_add(1);
                    break;
                }
                mine.add(v);
            }
            in[static_cast<std::size_t>(k)] = mine;
        });
    const auto t0 = bench::clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    ch.close();  // mid-traffic: producers and consumers are running or blocked
    const auto t1 = bench::clock::now();
    for (auto& t : ts) t.join();
    checksum inserted, removed;
    for (auto& c : in) inserted.merge(c);
    for (auto& c : out) removed.merge(c);
    const std::uint64_t by_consumers = removed.n;
    for (std::uint64_t v : ch) removed.add(v);  // what stop_on_close consumers left

    long lost =
        static_cast<long>(inserted.n > removed.n ? inserted.n - removed.n : removed.n - inserted.n);
    if (inserted.sum != removed.sum || inserted.hash != removed.hash || wrong_return.load() != 0)
        ++lost;
    const std::string params = "producers=" + std::to_string(producers) +
                               " consumers=" + std::to_string(consumers) +
                               " capacity=" + std::to_string(capacity);
    bench::result("chan_close_drain", "troupe", "lost_values", static_cast<double>(lost), params);
    bench::result("chan_close_drain_throughput", "troupe", "ops_per_s",
                  static_cast<double>(by_consumers) / bench::seconds(t0, t1), params);
    return lost == 0 ? 0 : 1;
}
