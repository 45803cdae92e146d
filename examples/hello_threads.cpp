// User threads on a processor pool; whole lines through sout; an exception
// escaping a thread comes back at join.
#include <stdexcept>
#include <vector>

#include <troupe/core.hpp>

int main() {
    troupe::processors p{2};  // the default pool runs on 2 kernel threads

    std::vector<troupe::thread> workers;
    for (int i = 0; i < 4; ++i)
        workers.emplace_back([i] {
            for (int step = 0; step < 2; ++step) {
                troupe::sout.println("worker ", i, " step ", step);
                troupe::this_thread::yield();  // let the others interleave
            }
        });
    workers.clear();  // joins them all

    troupe::thread failing{[] { throw std::runtime_error("disk full"); }};
    try {
        failing.join();
    } catch (const std::exception& e) {
        troupe::sout.println("join rethrew: ", e.what());
    }
}
