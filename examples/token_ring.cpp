// 1,000 user threads in a ring pass a token 100,000 times through
// semaphores, then a future reports who ended it.
#include <chrono>
#include <memory>
#include <vector>

#include <troupe/core.hpp>

int main() {
    constexpr int n = 1000, passes = 100'000;
    std::vector<std::unique_ptr<troupe::semaphore>> next;
    for (int i = 0; i < n; ++i) next.push_back(std::make_unique<troupe::semaphore>(0));
    troupe::future<int> last;
    int remaining = passes;  // only the token holder touches it

    const auto t0 = std::chrono::steady_clock::now();
    {
        std::vector<troupe::thread> ring;
        for (int i = 0; i < n; ++i)
            ring.emplace_back([&, i] {
                for (;;) {
                    next[i]->acquire();
                    if (remaining <= 0) {  // shutting down: pass it on and leave
                        next[(i + 1) % n]->release();
                        return;
                    }
                    if (--remaining == 0) last.fulfil(i);
                    next[(i + 1) % n]->release();
                }
            });
        next[0]->release();
    }
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    troupe::sout.println(passes, " passes around ", n, " threads; thread ", last.get(),
                         " made the last one (", us / 1000, " ms)");
}
