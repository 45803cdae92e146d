// A consumer of troupe channels alone (the Meson subproject route): a user
// thread produces into a channel and closes it, main drains it.
// Exits 0 iff the sum arrives whole.
#include <cstdio>

#include <troupe/channels.hpp>
#include <troupe/core.hpp>

int main() {
    troupe::channel<int> ch{4};
    troupe::thread producer{[&] {
        for (int i = 1; i <= 100; ++i) ch << i;
        ch.close();
    }};
    long sum = 0;
    for (int v : ch) sum += v;  // main is an OS thread: it parks on a futex
    producer.join();
    std::printf("channels consumer: sum %ld\n", sum);
    return sum == 5050 ? 0 : 1;
}
