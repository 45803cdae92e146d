// Channel programs in the spirit of the Cforall channel suite: ping-pong,
// hot potato, daisy chain, publish/subscribe, churn, zero-size rendezvous,
// the two-channel barrier, and close under load. Totals are exact.
#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "leak_check.hpp"
#include "troupe/channel.hpp"
#include "troupe/thread.hpp"

using troupe::channel;
using troupe_test::on_processors;

namespace {
using troupe_test::wait_until;
}  // namespace

TEST_CASE("ping-pong between two threads, ended by close") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        channel<int> ping{1}, pong{1};
        const int rounds = troupe_test::scaled(20'000, 3);
        std::atomic<int> exits{0};
        int ponged = 0;
        troupe::thread ponger{c, [&] {
                                  try {
                                      for (;;) {
                                          int v = ping.remove(troupe::stop_on_close);
                                          pong.insert(v + 1);
                                          ++ponged;
                                      }
                                  } catch (troupe::channel_closed&) {
                                      ++exits;
                                  }
                              }};
        troupe::thread pinger{c, [&] {
                                  int v = 0;
                                  for (int i = 0; i < rounds; ++i) {
                                      ping.insert(v);
                                      v = pong.remove();
                                  }
                                  CHECK(v == rounds);
                                  ping.close();
                                  pong.close();
                                  ++exits;
                              }};
        pinger.join();
        ponger.join();
        CHECK(exits == 2);
        CHECK(ponged == rounds);
    });
}

TEST_CASE("hot potato: one token passed among many threads through one channel") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        constexpr int players = 8;
        const int passes = troupe_test::scaled(10'000, 3);
        channel<int> potato{1, "potato"};
        std::vector<int> held(players, 0);
        std::atomic<int> left{0};
        std::vector<troupe::thread> ts;
        for (int p = 0; p < players; ++p)
            ts.emplace_back(c, [&, p] {
                try {
                    for (;;) {
                        int token = potato.remove(troupe::stop_on_close);
                        ++held[p];
                        if (token + 1 == passes) {
                            potato.close();  // the last catch ends the game
                        } else {
                            potato.insert(token + 1);
                        }
                    }
                } catch (troupe::channel_closed&) {
                    ++left;
                }
            });
        potato << 0;
        for (auto& t : ts) t.join();
        CHECK(left == players);
        int total = 0;
        for (int h : held) total += h;
        CHECK(total == passes);
    });
}

TEST_CASE("daisy chain: a pipeline of channels through many threads keeps order") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        constexpr int stages = 16;
        const int values = troupe_test::scaled(10'000, 3);
        std::vector<std::unique_ptr<channel<int>>> links;
        for (int i = 0; i <= stages; ++i) links.push_back(std::make_unique<channel<int>>(i % 3));
        std::vector<troupe::thread> ts;
        for (int s = 0; s < stages; ++s)
            ts.emplace_back(c, [&, s] {
                for (int v : *links[s]) links[s + 1]->insert(v + 1);  // drains, then
                links[s + 1]->close();                                // passes the close on
            });
        troupe::thread source{c, [&] {
                                  for (int i = 0; i < values; ++i) links[0]->insert(i);
                                  links[0]->close();
                              }};
        int expect = stages;
        bool in_order = true;
        for (int v : *links[stages]) in_order = in_order && v == expect++;
        CHECK(in_order);
        CHECK(expect == values + stages);
        source.join();
        for (auto& t : ts) t.join();
    });
}

TEST_CASE("publish/subscribe: many consumers, then a flushed sentinel ends them all") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        constexpr int subscribers = 8;
        const long published = troupe_test::scaled(20'000L, 3);
        channel<long> ch{4};
        std::atomic<long> sum{0}, count{0};
        std::atomic<int> finished{0};
        std::vector<troupe::thread> ts;
        for (int s = 0; s < subscribers; ++s)
            ts.emplace_back(c, [&] {
                long local = 0, n = 0;
                for (long v; (v = ch.remove()) != -1;) {
                    local += v;
                    ++n;
                }
                sum += local;
                count += n;
                ++finished;
            });
        for (long i = 0; i < published; ++i) ch << i;
        // Every subscriber ends on exactly one sentinel; flush reaches those
        // blocked right now, so repeat until all have one.
        std::size_t sentinels = 0;
        while (sentinels < subscribers) {
            sentinels += ch.flush(-1);
            troupe::this_thread::yield();
        }
        for (auto& t : ts) t.join();
        CHECK(finished == subscribers);
        CHECK(sentinels == subscribers);
        CHECK(count == published);
        CHECK(sum == published * (published - 1) / 2);
        CHECK(ch.empty());
    });
}

TEST_CASE("churn: waves of threads created and destroyed while hammering channels") {
    // Waves alternate which side blocks: in even waves producers block in
    // insert while consumers sweep with try_remove; in odd waves consumers
    // block in remove while producers sweep with try_insert. (If both sides
    // blocked on channels of their own choosing, they could wait on
    // different channels forever.)
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        constexpr int nchan = 4, producers = 3, consumers = 3;
        const int waves = troupe_test::scaled(20, 3), per_producer = 300;
        std::vector<std::unique_ptr<channel<long>>> chans;
        for (int i = 0; i < nchan; ++i)
            chans.push_back(std::make_unique<channel<long>>(i == 0 ? 0 : 128));
        auto permutation = [](int seed) {
            std::vector<int> perm(nchan);
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), std::mt19937(seed));
            return perm;
        };
        std::atomic<long> sent{0}, received{0}, sent_n{0}, received_n{0};
        long next_value = 1;
        for (int w = 0; w < waves; ++w) {
            const bool producers_block = w % 2 == 0;
            std::atomic<int> consumers_left{consumers};
            std::atomic<bool> producers_done{false};
            std::vector<troupe::thread> cs;
            for (int k = 0; k < consumers; ++k)
                cs.emplace_back(c, [&, perm = permutation(w * 100 + k)] {
                    long s = 0, n = 0;
                    if (producers_block) {
                        for (int i = 0, idle = 0; idle < nchan || !producers_done.load(); ++i) {
                            long v;
                            if (chans[perm[i % nchan]]->try_remove(v) ==
                                troupe::channel_status::success) {
                                s += v;
                                ++n;
                                idle = 0;
                            } else if (++idle >= nchan) {
                                troupe::this_thread::yield();
                            }
                        }
                    } else {
                        for (int i = 0;; ++i) {
                            long v = chans[perm[i % nchan]]->remove();
                            if (v < 0) break;  // sentinel from main
                            s += v;
                            ++n;
                        }
                    }
                    received += s;
                    received_n += n;
                    --consumers_left;
                });
            std::vector<troupe::thread> ps;
            for (int k = 0; k < producers; ++k) {
                const long base = next_value;
                next_value += per_producer;
                ps.emplace_back(c, [&, base, perm = permutation(w * 100 + 50 + k)] {
                    long s = 0;
                    for (int i = 0, j = 0; i < per_producer; ++j) {
                        auto& ch = *chans[perm[j % nchan]];
                        if (producers_block) {
                            ch.insert(base + i);
                        } else if (ch.try_insert(base + i) != troupe::channel_status::success) {
                            troupe::this_thread::yield();
                            continue;
                        }
                        s += base + i;
                        ++i;
                    }
                    sent += s;
                    sent_n += per_producer;
                });
            }
            for (auto& t : ps) t.join();
            producers_done = true;
            if (!producers_block) {
                // Release every blocked consumer with a sentinel.
                while (consumers_left.load() > 0) {
                    for (auto& ch : chans) ch->flush(-1);
                    troupe::this_thread::yield();
                }
            }
            for (auto& t : cs) t.join();
        }
        for (auto& ch : chans) {
            ch->close();
            for (long v : *ch) {  // what the last waves left buffered
                received += v;
                ++received_n;
            }
        }
        CHECK(sent_n == long(waves) * producers * per_producer);
        CHECK(received_n == sent_n);
        CHECK(received == sent);
    });
}

TEST_CASE("zero-size rendezvous: many producers and consumers, every value exactly once") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        constexpr int producers = 8, consumers = 8;
        const int per = troupe_test::scaled(3'000, 3);
        const int total = producers * per;
        channel<int> ch{0};
        std::vector<std::atomic<int>> seen(total);
        std::vector<troupe::thread> cs;
        for (int k = 0; k < consumers; ++k)
            cs.emplace_back(c, [&] {
                for (int v : ch) seen[v].fetch_add(1, std::memory_order_relaxed);
            });
        std::vector<troupe::thread> ps;
        for (int k = 0; k < producers; ++k)
            ps.emplace_back(c, [&, k] {
                for (int i = 0; i < per; ++i) ch.insert(k * per + i);
            });
        for (auto& t : ps) t.join();
        ch.close();
        for (auto& t : cs) t.join();
        int wrong = 0;
        for (auto& s : seen) wrong += s.load() != 1;
        CHECK(wrong == 0);
    });
}

namespace {
// The barrier of the thesis' figure "Channel Barrier Termination" (Cforall
// style): shut down by closing its two channels.
class channel_barrier {
public:
    explicit channel_barrier(int size) : bar_wait_(size), entry_wait_(size), size_(size) {
        for (int i = 0; i < size; ++i) entry_wait_.insert(i);
    }
    void wait() {
        int ticket = entry_wait_.remove(troupe::stop_on_close);
        if (ticket == size_ - 1) {
            for (int i = 0; i < size_ - 1; ++i) bar_wait_.insert(i);
            return;
        }
        ticket = bar_wait_.remove(troupe::stop_on_close);
        if (size_ == 1 || ticket == size_ - 2)
            for (int i = 0; i < size_; ++i) entry_wait_.insert(i);
    }
    void shut_down() {
        bar_wait_.close();
        entry_wait_.close();
    }

private:
    channel<int> bar_wait_, entry_wait_;
    int size_;
};
}  // namespace

TEST_CASE("barrier from two channels: lock-step rounds, then close releases every thread") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        constexpr int threads = 6;
        const int min_rounds = troupe_test::scaled(1'000, 3);
        channel_barrier b{threads};
        std::vector<std::atomic<int>> rounds(threads);
        std::atomic<int> left{0}, skew{0};
        std::vector<troupe::thread> ts;
        for (int t = 0; t < threads; ++t)
            ts.emplace_back(c, [&, t] {
                try {
                    for (;;) {
                        b.wait();
                        const int mine = ++rounds[t];
                        // Lock-step: nobody is more than one round behind us.
                        for (auto& r : rounds)
                            if (r.load() < mine - 1) ++skew;
                    }
                } catch (troupe::channel_closed&) {
                    ++left;
                }
            });
        wait_until([&] {
            return std::all_of(rounds.begin(), rounds.end(),
                               [&](auto& r) { return r.load() >= min_rounds; });
        });
        b.shut_down();
        for (auto& t : ts) t.join();
        CHECK(left == threads);
        CHECK(skew == 0);
    });
}

TEST_CASE("close under load: nothing inserted is lost, nothing is duplicated") {
    on_processors([](troupe::cluster& c) {
        troupe_test::leak_check no_leaks;
        for (std::size_t cap : {0u, 1u, 64u}) {
            CAPTURE(cap);
            constexpr int producers = 6, consumers = 6;
            channel<long> ch{cap};
            std::atomic<long> inserted_sum{0}, inserted_n{0}, removed_sum{0}, removed_n{0};
            std::atomic<int> wrong_return{0};
            std::atomic<long> flowing{0};
            std::vector<troupe::thread> ts;
            for (int k = 0; k < consumers; ++k)
                ts.emplace_back(c, [&, k] {
                    long s = 0, n = 0;
                    try {
                        // Half drain after close, half stop at once.
                        for (;;) {
                            long v = k % 2 ? ch.remove() : ch.remove(troupe::stop_on_close);
                            s += v;
                            ++n;
                            flowing.fetch_add(1, std::memory_order_relaxed);
                        }
                    } catch (troupe::channel_closed&) {}
                    removed_sum += s;
                    removed_n += n;
                });
            for (int k = 0; k < producers; ++k)
                ts.emplace_back(c, [&, k] {
                    long s = 0, n = 0;
                    for (long i = 0;; ++i) {
                        const long v = k * 1'000'000'000L + i;
                        try {
                            ch.insert(v);
                        } catch (troupe::channel_closed_with<long>& e) {
                            if (e.value() != v) ++wrong_return;
                            break;
                        }
                        s += v;
                        ++n;
                    }
                    inserted_sum += s;
                    inserted_n += n;
                });
            // Let traffic flow for a while (state-based: count what passed).
            wait_until([&] { return flowing.load() >= troupe_test::scaled(20'000L, 3); });
            ch.close();
            for (auto& t : ts) t.join();
            long left_sum = 0, left_n = 0;
            for (long v : ch) {  // stop_on_close consumers may leave some
                left_sum += v;
                ++left_n;
            }
            CHECK(wrong_return == 0);
            CHECK(inserted_n == removed_n + left_n);
            CHECK(inserted_sum == removed_sum + left_sum);
        }
    });
}
