// TROUPE_MUTEX(troupe::sout): lines written piecewise by 8 threads never
// interleave (checked on the captured output), from OS and user threads.
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/mutex.hpp"
#include "troupe/sout.hpp"
#include "troupe/thread.hpp"

namespace {

constexpr int lines_per_thread = troupe_test::scaled(2'000);
constexpr int writers = 8;

// Thread t's payload: a run of letters whose length and letter name t.
std::string payload(int t) { return std::string(std::size_t(3 * (t + 1)), char('a' + t)); }

// Writes line i of thread t as several pieces plus a second line through
// println, which locks sout again (it is recursive) while we hold it.
void write_lines(int t, bool yield_between_pieces) {
    for (int i = 0; i < lines_per_thread; ++i) {
        TROUPE_MUTEX(troupe::sout) {
            troupe::sout << "w" << t << " n" << i;
            if (yield_between_pieces && i % 4 == 0) troupe::this_thread::yield();
            troupe::sout << ' ' << payload(t) << '\n';
            troupe::sout.println("w", t, " n", i, " again");
        }
    }
}

// Checks that every captured line is whole and that each thread's lines
// arrived complete, in order, each first line followed by its "again".
void check_whole_lines(const std::string& text) {
    std::istringstream in{text};
    std::string line;
    std::map<int, int> next;  // thread -> next expected line number
    int lines = 0, broken = 0;
    int pending = -1, pending_i = -1;  // a first line waiting for its "again"
    while (std::getline(in, line)) {
        ++lines;
        std::istringstream words{line};
        std::string w, n, rest;
        words >> w >> n >> rest;
        bool ok =
            w.size() >= 2 && w[0] == 'w' && n.size() >= 2 && n[0] == 'n' && words.peek() == EOF;
        const int t = ok ? std::stoi(w.substr(1)) : -1;
        const int i = ok ? std::stoi(n.substr(1)) : -1;
        ok = ok && t >= 0 && t < writers;
        if (ok && pending < 0) {
            ok = rest == payload(t) && i == next[t];
            pending = t;
            pending_i = i;
        } else if (ok) {
            ok = rest == "again" && t == pending && i == pending_i;
            ++next[t];
            pending = -1;
        }
        if (!ok) {
            ++broken;
            if (broken < 5) MESSAGE("broken line: '" << line << "'");
            pending = -1;
        }
    }
    CHECK(broken == 0);
    CHECK(lines == 2 * writers * lines_per_thread);
    for (int t = 0; t < writers; ++t) CHECK(next[t] == lines_per_thread);
}

// Redirects sout to a string for the life of the object.
struct capture {
    std::ostringstream text;
    std::ostream& previous = troupe::sout.attach(text);
    ~capture() { troupe::sout.attach(previous); }
};

}  // namespace

TEST_CASE("8 OS threads writing through TROUPE_MUTEX(sout) never interleave") {
    capture cap;
    {
        troupe_test::watchdog w{"sout from OS threads"};
        std::vector<std::thread> ts;
        for (int t = 0; t < writers; ++t) ts.emplace_back(write_lines, t, true);
        for (auto& th : ts) th.join();
    }
    check_whole_lines(cap.text.str());
}

TEST_CASE("8 user threads writing through TROUPE_MUTEX(sout) never interleave") {
    troupe_test::on_processors([](troupe::cluster& c) {
        capture cap;
        {
            std::vector<troupe::thread> ts;
            for (int t = 0; t < writers; ++t) ts.emplace_back(c, write_lines, t, true);
        }
        check_whole_lines(cap.text.str());
    });
}

TEST_CASE("sout with another lock in one scope, user and OS threads together") {
    troupe_test::on_processors(
        [](troupe::cluster& c) {
            capture cap;
            troupe::blocking_lock log_state;
            long written = 0;  // protected by log_state
            auto writer = [&](int t) {
                for (int i = 0; i < lines_per_thread; ++i) {
                    // Named in opposite orders by odd and even threads.
                    if (t % 2 == 0) {
                        TROUPE_MUTEX(troupe::sout, log_state) {
                            troupe::sout << "w" << t << " n" << i << ' ' << payload(t) << '\n';
                            troupe::sout << "w" << t << " n" << i << " again\n";
                            ++written;
                        }
                    } else {
                        troupe::mutex(log_state, troupe::sout)([&] {
                            troupe::sout << "w" << t << " n" << i << ' ' << payload(t) << '\n';
                            troupe::sout << "w" << t << " n" << i << " again\n";
                            ++written;
                        });
                    }
                }
            };
            {
                std::vector<troupe::thread> ts;
                std::vector<std::thread> os;
                for (int t = 0; t < writers / 2; ++t) ts.emplace_back(c, writer, t);
                for (int t = writers / 2; t < writers; ++t) os.emplace_back(writer, t);
                for (auto& th : os) th.join();
            }
            CHECK(written == long(writers) * lines_per_thread);
            check_whole_lines(cap.text.str());
        },
        {1, 2});
}
