// Guard-page protected, pooled user-thread stacks.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <vector>

#include "runtime.hpp"
#include "troupe/defaults.hpp"

#if defined(TROUPE_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace troupe::detail {

std::size_t page_size() noexcept {
    static const std::size_t p = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return p;
}

namespace {

std::size_t mapping_size(std::size_t usable) {
    const std::size_t pg = page_size();
    return (usable + pg - 1) / pg * pg + pg;  // + guard page
}

// Free stacks of the default size. A process-wide cache (not scheduler
// state): any cluster may reuse any stack.
struct stack_pool {
    spinlock lock{"stack pool"};
    std::vector<stack_mapping> free;
    ~stack_pool() {
        for (auto& s : free) ::munmap(s.base, s.size);
    }
};

stack_pool& pool() {
    static stack_pool p;
    return p;
}

}  // namespace

stack_mapping stack_allocate(std::size_t usable) {
    const std::size_t size = mapping_size(usable);
    if (usable == defaults::stack_size) {
        stack_pool& p = pool();
        p.lock.lock();
        if (!p.free.empty()) {
            stack_mapping s = p.free.back();
            p.free.pop_back();
            p.lock.unlock();
#if defined(TROUPE_ASAN)
            // Frames of the previous owner may have left poisoned shadow.
            __asan_unpoison_memory_region(s.base + page_size(), s.size - page_size());
#endif
            return s;
        }
        p.lock.unlock();
    }
    void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "troupe: mapping a thread stack");
    // The lowest page faults on touch: a stack overflow stops there instead
    // of overwriting whatever lies below.
    if (::mprotect(m, page_size(), PROT_NONE) != 0) {
        int e = errno;
        ::munmap(m, size);
        throw std::system_error(e, std::generic_category(), "troupe: protecting a stack guard page");
    }
    return {static_cast<char*>(m), size};
}

void stack_release(const stack_mapping& s) noexcept {
    if (s.size == mapping_size(defaults::stack_size)) {
        stack_pool& p = pool();
        p.lock.lock();
        if (p.free.size() < defaults::stack_pool_limit) {
            try {
                p.free.push_back(s);
                p.lock.unlock();
                return;
            } catch (...) {
            }
        }
        p.lock.unlock();
    }
    ::munmap(s.base, s.size);
}

}  // namespace troupe::detail
