// sout: lines written under its lock never interleave.
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "troupe/sout.hpp"
#include "troupe/thread.hpp"

TEST_CASE("println and locked writes from many threads keep every line whole") {
    std::ostringstream captured;
    std::ostream& previous = troupe::sout.attach(captured);
    troupe::cluster c{2};
    constexpr int per = 200;
    {
        std::vector<troupe::thread> ts;
        std::vector<std::thread> os;
        for (int t = 0; t < 4; ++t)
            ts.emplace_back(c, [t] {
                for (int i = 0; i < per; ++i) troupe::sout.println("user ", t, " line ", i, " end");
            });
        for (int t = 4; t < 8; ++t)
            os.emplace_back([t] {
                for (int i = 0; i < per; ++i) {
                    std::lock_guard g{troupe::sout};
                    troupe::sout << "os " << t << " line ";
                    std::this_thread::yield();  // invite interleaving
                    troupe::sout << i << " end" << '\n';
                }
            });
        for (auto& o : os) o.join();
    }
    troupe::sout.attach(previous);
    std::istringstream in{captured.str()};
    std::string line;
    int lines = 0, malformed = 0;
    while (std::getline(in, line)) {
        ++lines;
        std::istringstream w{line};
        std::string kind, word1, end;
        int t = -1, i = -1;
        w >> kind >> t >> word1 >> i >> end;
        const bool ok = (kind == "user" || kind == "os") && word1 == "line" && end == "end" &&
                        t >= 0 && t < 8 && i >= 0 && i < per && w.peek() == EOF;
        malformed += !ok;
    }
    CHECK(lines == 8 * per);
    CHECK(malformed == 0);
}

TEST_CASE("sout is recursive: a locked helper may be called while holding it") {
    std::ostringstream captured;
    std::ostream& previous = troupe::sout.attach(captured);
    {
        std::lock_guard g{troupe::sout};
        troupe::sout << "a";
        troupe::sout.println("b");  // locks again
    }
    troupe::sout.attach(previous);
    CHECK(captured.str() == "ab\n");
}
