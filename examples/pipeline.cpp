// A CSP pipeline: source -> two squaring workers -> sink, connected by
// channels and shut down by close() alone (no flags, no sentinels).
//
//   source  --jobs(4)-->  worker x2  --results(4)-->  main (sink)
//
// Then the two ways a consumer can react to close: drain what is buffered,
// or stop at once; and a producer that gets its element back from close.
#include <atomic>
#include <string>

#include <troupe/channel.hpp>
#include <troupe/cluster.hpp>
#include <troupe/sout.hpp>
#include <troupe/thread.hpp>

int main() {
    troupe::cluster pool{2};

    // ---- the pipeline ---------------------------------------------------
    troupe::channel<int> jobs{4, "jobs"}, results{4, "results"};
    troupe::thread source{pool, [&] {
                              for (int i = 1; i <= 20; ++i) jobs << i;
                              jobs.close();  // "no more work": consumers finish what is buffered
                          }};
    std::atomic<int> workers_left{2};
    auto worker = [&](int id) {
        int done = 0;
        for (int j : jobs) {  // range-for drains, ends when closed and empty
            results << j * j;
            ++done;
        }
        troupe::sout.println("worker ", id, " squared ", done, " numbers");
        if (--workers_left == 0) results.close();  // the last one out closes
    };
    troupe::thread w1{pool, worker, 1}, w2{pool, worker, 2};
    long sum = 0;
    for (int r : results) sum += r;  // main is an OS thread: blocking works too
    troupe::sout.println("sum of squares 1..20 = ", sum, " (expected 2870)");
    source.join();
    w1.join();
    w2.join();

    // ---- drain or stop: the consumer decides, per call ------------------
    troupe::channel<std::string> events{8, "events"};
    for (const char* e : {"open", "read", "write", "close"}) events << std::string(e);
    events.close();
    try {
        events.remove(troupe::stop_on_close);  // stop at once: leaves the buffer
    } catch (const troupe::channel_closed& e) {
        troupe::sout.println("stop_on_close: ", e.what(), ", ", events.size(), " events left");
    }
    for (const std::string& e : events) troupe::sout.println("drained: ", e);  // drain

    // ---- a blocked producer gets its element back ------------------------
    troupe::channel<std::string> mailbox{1, "mailbox"};
    mailbox << std::string("first");
    troupe::thread late{pool, [&] {
                            try {
                                mailbox << std::string("second");  // full: blocks until close
                            } catch (troupe::channel_closed_with<std::string>& e) {
                                troupe::sout.println("producer got back \"", e.value(), "\"");
                            }
                        }};
    while (mailbox.waiting_producers() == 0) troupe::this_thread::yield();
    mailbox.close();
    late.join();
    troupe::sout.println("still buffered: ", mailbox.remove());
}
