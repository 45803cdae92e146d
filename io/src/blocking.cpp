// io::blocking: a pool of helper kernel threads that run calls which may
// block the kernel (getaddrinfo, fsync, a C library's blocking call) while
// the calling user thread parks (docs/io.md "Blocking calls").
//
// Calls are records on their callers' stacks, queued intrusively: the pool
// allocates nothing per call. Helpers are started on demand (service
// threads: no heap block, every signal blocked) up to max_helpers, and
// idle ones sleep on a condition variable; they live until the process
// exits.

#include <condition_variable>
#include <mutex>

#include "engine.hpp"
#include "troupe/detail/service_thread.hpp"
#include "troupe/detail/trace.hpp"
#include "troupe/detail/wait_reason.hpp"
#include "troupe/thread.hpp"

namespace troupe::io::detail {

namespace {

constexpr int max_helpers = 64;

struct call_record {
    void (*call)(void*);
    void* arg;
    select_node* node;
    call_record* next = nullptr;
};

struct pool {
    std::mutex m;
    std::condition_variable cv;
    call_record* head = nullptr;
    call_record* tail = nullptr;
    std::atomic<int> helpers{0};
    int idle = 0;

    static void* helper_main(void* self) {
        troupe::detail::name_this_kernel_thread("troupe-io-help");
        auto* p = static_cast<pool*>(self);
        std::unique_lock g{p->m};
        for (;;) {
            while (!p->head) {
                ++p->idle;
                p->cv.wait(g);
                --p->idle;
            }
            call_record* c = p->head;
            p->head = c->next;
            if (!p->head) p->tail = nullptr;
            g.unlock();
            c->call(c->arg);           // noexcept (io::blocking catches)
            c->node->unpark_waiter();  // the last touch of the record
            g.lock();
        }
        return nullptr;
    }

    // Queues `c`; starts a helper if none is idle. Throws std::system_error
    // (c not queued) if there is no helper and none can start.
    void submit(call_record& c) {
        std::unique_lock g{m};
        if (idle == 0 && helpers.load(std::memory_order_relaxed) < max_helpers) {
            const int rc = troupe::detail::start_service_thread(&helper_main, this);
            if (rc == 0) ++helpers;
            else if (helpers == 0)
                throw std::system_error(rc, std::generic_category(),
                                        "troupe::io::blocking: no helper thread");
        }
        if (tail) tail->next = &c;
        else head = &c;
        tail = &c;
        g.unlock();
        cv.notify_one();
    }
};

pool& the_pool() {
    // Never destroyed: helpers sleep in it until the process exits.
    alignas(pool) static unsigned char storage[sizeof(pool)];
    static pool* p = ::new (static_cast<void*>(storage)) pool();
    return *p;
}

struct blocking_info {
    const void* fn;
};
std::string describe_blocking(const void*) { return "a blocking call on a helper thread"; }
const troupe::detail::wait_describer blocking_describer{&describe_blocking, nullptr, "held by"};

}  // namespace

std::atomic<long> outside_calls{0};

std::size_t blocking_helpers() noexcept {
    pool& p = the_pool();
    return std::size_t(p.helpers.load(std::memory_order_relaxed));
}

void run_blocking(void (*call)(void*), void* arg) {
    if (!troupe::this_thread::in_user_thread()) {
        call(arg);  // an OS thread blocks as it would
        return;
    }
    select_node node(this_context());
    call_record c{call, arg, &node};
    outside_calls.fetch_add(1, std::memory_order_relaxed);
    try {
        the_pool().submit(c);
    } catch (...) {
        outside_calls.fetch_sub(1, std::memory_order_relaxed);
        throw;
    }
    {
        troupe::detail::wait_scope ws("io::blocking", nullptr, &c, &blocking_describer);
        time_wait_now();  // engine.hpp: why now
        do {              // takes the helper's one unpark (see wait_ready)
            troupe::detail::trace::note_park("io::blocking");
            park();
        } while (!node.released());
    }
    outside_calls.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace troupe::io::detail
