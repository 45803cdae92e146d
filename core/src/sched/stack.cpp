// Guard-page protected, pooled user-thread stacks.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <vector>

#include "sched/runtime.hpp"
#include "troupe/defaults/core.hpp"

#if defined(TROUPE_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace troupe::detail {

std::size_t page_size() noexcept {
    static const std::size_t p = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return p;
}

void stack_release_to_pool(const stack_mapping& s) noexcept;

namespace {

std::size_t mapping_size(std::size_t usable) {
    const std::size_t pg = page_size();
    return (usable + pg - 1) / pg * pg + pg;  // + guard page
}

std::size_t default_mapping_size() noexcept {
    static const std::size_t size = mapping_size(defaults::core::stack_size);
    return size;
}

// Free stacks of the default size. A process-wide cache (not scheduler
// state): any cluster may reuse any stack.
struct stack_pool {
    spinlock lock{"stack pool"};
    std::vector<stack_mapping> free;
};

stack_pool& pool() {
    // Immortal: kernel threads (the default cluster's processors) return
    // their cached stacks at exit, possibly during static destruction.
    static stack_pool* p = new stack_pool;
    return *p;
}

// A few free stacks per kernel thread in front of the shared pool: a
// create+join on one processor then takes no lock at all. Returned to the
// pool when the kernel thread exits.
struct stack_cache {
    stack_mapping slots[defaults::core::stack_cache_per_thread];
    std::size_t count = 0;
    ~stack_cache() {
        for (std::size_t i = 0; i < count; ++i) stack_release_to_pool(slots[i]);
    }
};

[[gnu::tls_model("initial-exec")]] thread_local stack_cache tls_cache;

// noinline: a user thread may migrate between kernel threads, so the
// cache's address must be recomputed on every call.
[[gnu::noinline]] stack_cache& local_cache() noexcept { return tls_cache; }

#if defined(TROUPE_ASAN)
void unpoison(const stack_mapping& s) noexcept {
    // Frames of the previous owner may have left poisoned shadow.
    __asan_unpoison_memory_region(s.base + page_size(), s.size - page_size());
}
#else
void unpoison(const stack_mapping&) noexcept {}
#endif

}  // namespace

stack_mapping stack_allocate(std::size_t usable) {
    const std::size_t size = mapping_size(usable);
    if (usable == defaults::core::stack_size) {
        stack_cache& c = local_cache();
        if (c.count > 0) {
            stack_mapping s = c.slots[--c.count];
            unpoison(s);
            return s;
        }
        stack_pool& p = pool();
        p.lock.lock();
        if (!p.free.empty()) {
            stack_mapping s = p.free.back();
            p.free.pop_back();
            p.lock.unlock();
            unpoison(s);
            return s;
        }
        p.lock.unlock();
    }
    void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        throw std::system_error(errno, std::generic_category(), "troupe: mapping a thread stack");
    // The lowest page faults on touch: a stack overflow stops there instead
    // of overwriting whatever lies below.
    if (::mprotect(m, page_size(), PROT_NONE) != 0) {
        int e = errno;
        ::munmap(m, size);
        throw std::system_error(e, std::generic_category(),
                                "troupe: protecting a stack guard page");
    }
    return {static_cast<char*>(m), size};
}

void stack_release(const stack_mapping& s) noexcept {
    if (s.size == default_mapping_size()) {
        stack_cache& c = local_cache();
        if (c.count < defaults::core::stack_cache_per_thread) {
            c.slots[c.count++] = s;
            return;
        }
    }
    stack_release_to_pool(s);
}

void stack_release_to_pool(const stack_mapping& s) noexcept {
    if (s.size == default_mapping_size()) {
        stack_pool& p = pool();
        p.lock.lock();
        if (p.free.size() < defaults::core::stack_pool_limit) {
            try {
                p.free.push_back(s);
                p.lock.unlock();
                return;
            } catch (...) {}
        }
        p.lock.unlock();
    }
    ::munmap(s.base, s.size);
}

}  // namespace troupe::detail
