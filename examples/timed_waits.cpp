// A condition variable with a timeout, a future selected against a timeout
// through the select_node protocol, and a sleeping thread that does not
// block its processor.
#include <atomic>
#include <chrono>

#include <troupe/core.hpp>

using namespace std::chrono_literals;

int main() {
    troupe::cluster pool{1};  // one processor: everything below shares it

    troupe::blocking_lock l{"state"};
    troupe::condition_variable changed;
    bool ready = false;
    troupe::thread setter{
        pool, [&] {
            troupe::this_thread::sleep_for(5ms);  // parks; the processor runs others
            {
                std::lock_guard g{l};
                ready = true;
            }
            changed.notify_all();
        }};
    {
        std::lock_guard g{l};
        const bool first = changed.wait_for(l, 1ms, [&] { return ready; });
        troupe::sout.println("after 1 ms: ready = ", first);
        const bool second = changed.wait_for(l, 10s, [&] { return ready; });
        troupe::sout.println("then: ready = ", second);
    }
    setter.join();

    // Wait for whichever comes first: an answer or a 20 ms timeout.
    troupe::future<int> answer;
    troupe::timeout patience{20ms};
    std::atomic<std::uintptr_t> status{0};
    troupe::select_node on_answer{troupe::this_context(), status};
    troupe::select_node on_timeout{troupe::this_context(), status};
    if (!answer.register_select(on_answer) && !patience.register_select(on_timeout))
        troupe::park();  // exactly one of them wakes us
    const bool timed_out = status.load() == reinterpret_cast<std::uintptr_t>(&on_timeout);
    answer.unregister_select(on_answer);
    patience.unregister_select(on_timeout);
    troupe::sout.println(timed_out ? "nobody answered within 20 ms" : "got an answer");
}
