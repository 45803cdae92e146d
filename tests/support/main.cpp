#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "fixture.hpp"
#include "leak_check.hpp"

namespace troupe_test {

namespace {
std::mutex name_mutex;
std::string name_now;
// Failed assertions and test-case exceptions (leak_check stays silent in a
// test that already failed).
std::atomic<long> failures{0};

struct name_listener : doctest::IReporter {
    explicit name_listener(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_start(const doctest::TestCaseData& d) override {
        std::lock_guard g{name_mutex};
        name_now = d.m_name;
    }
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats&) override {}
    void test_case_exception(const doctest::TestCaseException&) override {
        failures.fetch_add(1, std::memory_order_relaxed);
    }
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData& d) override {
        if (d.m_failed) failures.fetch_add(1, std::memory_order_relaxed);
    }
    void log_message(const doctest::MessageData& d) override {
        // FAIL_CHECK / FAIL (not WARN, not MESSAGE) fail the test.
        if (!(d.m_severity & doctest::assertType::is_warn))
            failures.fetch_add(1, std::memory_order_relaxed);
    }
    void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("troupe_test_names", 1, name_listener);

std::mutex recorder_mutex;
std::vector<std::string> recorded;
}  // namespace

long failed_assertions() noexcept { return failures.load(std::memory_order_relaxed); }

std::string current_test() {
    std::lock_guard g{name_mutex};
    return name_now;
}

struct watchdog::state {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread t;
};

watchdog::watchdog(std::string what) : s_(new state) {
    long limit = 120;
    if (const char* env = std::getenv("TROUPE_WATCHDOG_SECONDS"))
        limit = std::strtol(env, nullptr, 10);
    s_->t = std::thread([s = s_, what = std::move(what), limit] {
        std::unique_lock lk{s->m};
        if (!s->cv.wait_for(lk, std::chrono::seconds(limit), [&] { return s->done; })) {
            std::fprintf(stderr,
                         "\nWATCHDOG: '%s' did not finish within %ld s (deadlock?); aborting\n",
                         what.c_str(), limit);
            std::fflush(stderr);
            std::abort();
        }
    });
}

watchdog::~watchdog() {
    {
        std::lock_guard g{s_->m};
        s_->done = true;
    }
    s_->cv.notify_one();
    s_->t.join();
    delete s_;
}

misuse_recorder::misuse_recorder() {
    {
        std::lock_guard g{recorder_mutex};
        recorded.clear();
    }
    previous_ = troupe::set_misuse_handler([](std::string_view m) {
        std::lock_guard g{recorder_mutex};
        recorded.emplace_back(m);
    });
}

misuse_recorder::~misuse_recorder() {
    troupe::set_misuse_handler(previous_);
    // Release the record's storage too, so a recorder inside a leak_check
    // leaves no block behind.
    std::lock_guard g{recorder_mutex};
    std::vector<std::string>{}.swap(recorded);
}

std::vector<std::string> misuse_recorder::messages() const {
    std::lock_guard g{recorder_mutex};
    return recorded;
}

std::string misuse_recorder::last() const {
    std::lock_guard g{recorder_mutex};
    return recorded.empty() ? std::string{} : recorded.back();
}

}  // namespace troupe_test
