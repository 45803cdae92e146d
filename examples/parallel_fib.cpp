// fib(30) with a fork-join at every call: about 1.3 million forks, run on
// the processors' few helper threads (no thread per call), each task on its
// forker's stack. An exception thrown by either side comes back at the
// fork_join call once both sides are done.
#include <chrono>
#include <stdexcept>

#include <troupe/core.hpp>

namespace {
long fib(int n) {
    if (n < 2) return n;
    long a = 0, b = 0;
    troupe::fork_join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
    return a + b;
}
}  // namespace

int main() {
    troupe::processors p{2};
    const auto t0 = std::chrono::steady_clock::now();
    const long r = fib(30);
    const auto ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    troupe::sout.println("fib(30) = ", r, " in ", static_cast<long>(ms), " ms");

    try {
        troupe::fork_join([] { fib(20); },
                          [] { throw std::runtime_error("the right side failed"); });
    } catch (const std::exception& e) {
        troupe::sout.println("fork_join rethrew: ", e.what());
    }
}
