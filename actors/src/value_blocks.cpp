// Value sends' blocks (troupe::send<M>, actor.hpp): each worker keeps the
// blocks of the value-sent messages it delivered, by exact size, and hands
// them to its behaviours' next value sends. Only the thread running as the
// worker (tls_worker) touches its lists, so they need no atomics; a block
// freed on one worker and taken on another passed between them inside a
// message (the send and the delivery order the accesses).
//
// Beyond a worker's bound (defaults value_blocks_kept_max), and only in a
// system of two or more workers, freed blocks gather in the worker's spill
// list of their size and go to the executor's depot a chain at a time. A
// worker whose own list of a size is empty takes its own spill, else a
// chain from the depot, before it calls ::operator new: a pipeline that
// sends on one worker and delivers on another thus moves blocks back in
// chains, one lock per chain, where glibc would pay a malloc on one side
// and a free on the other for every message. A system of one worker never
// spills (its frees and its sends are the same thread's), so its path is
// the kept list alone.
//
// Every block in a list is exactly its size's bytes from ::operator new, so
// any block may also go to ::operator delete with that size: what neither
// list nor the depot keeps, and whatever a behaviour that took over a
// value-sent message frees with `delete`.
#include <mutex>
#include <new>

#include "executor.hpp"

namespace troupe::detail {

namespace {

using defaults::actors::value_block_chain;

// A pooled block holds a message, so it has room for the list link (word
// 0) and the depot's chain link (word 1).
static_assert(sizeof(message) >= 2 * sizeof(void*));

void* next_block(void* p) noexcept { return *static_cast<void**>(p); }
void*& next_chain(void* chain) noexcept { return static_cast<void**>(chain)[1]; }

void delete_blocks(void* p, std::size_t bytes) noexcept {
    while (p != nullptr) {
        void* n = next_block(p);
        ::operator delete(p, bytes);
        p = n;
    }
}

// A chain of value_block_chain blocks of `words` words, or null. The
// unlocked load is a hint that keeps a worker whose list is empty, while
// the depot has nothing of its size, from taking the lock at every send;
// the chain itself is read under the lock, whose acquire pairs with the
// putter's release.
void* depot_take(value_block_depot& d, std::size_t words) noexcept {
    if (d.chains[words].load(std::memory_order_relaxed) == nullptr) return nullptr;
    std::lock_guard g{d.lock};
    void* c = d.chains[words].load(std::memory_order_relaxed);
    if (c == nullptr) return nullptr;
    d.chains[words].store(next_chain(c), std::memory_order_relaxed);
    d.bytes -= value_block_chain * words * 8;
    return c;
}

void depot_put(value_block_depot& d, std::size_t words, void* chain) noexcept {
    const std::size_t n = value_block_chain * words * 8;
    {
        std::lock_guard g{d.lock};
        if (d.bytes + n <= defaults::actors::value_block_depot_max) {
            next_chain(chain) = d.chains[words].load(std::memory_order_relaxed);
            d.chains[words].store(chain, std::memory_order_relaxed);
            d.bytes += n;
            return;
        }
    }
    delete_blocks(chain, words * 8);
}

}  // namespace

void* value_block_take(std::size_t bytes) {
    if (worker* w = tls_worker) {
        const std::size_t words = bytes / 8;
        void*& l = w->value_blocks_[words];
        if (void* p = l) [[likely]] {
            l = next_block(p);
            w->value_blocks_kept_ -= bytes;
            return p;
        }
        if (w->value_depot_) {
            // The list is empty: its own spill, else a depot chain,
            // becomes the list (it may then hold more than the bound for
            // a while; the gives beyond it spill again).
            worker::value_spill& s = w->value_spill_[words];
            void* chain = s.head;
            std::size_t n = s.count;
            if (chain != nullptr) {
                s.head = nullptr;
                s.count = 0;
            } else {
                chain = depot_take(w->exec.value_depot, words);
                n = value_block_chain;
            }
            if (chain != nullptr) {
                l = next_block(chain);
                w->value_blocks_kept_ += (n - 1) * bytes;
                return chain;
            }
        }
    }
    return ::operator new(bytes);
}

void value_block_give(void* p, std::size_t bytes) noexcept {
    if (worker* w = tls_worker) {
        const std::size_t words = bytes / 8;
        if (w->value_blocks_kept_ + bytes <= defaults::actors::value_blocks_kept_max) {
            void*& l = w->value_blocks_[words];
            *static_cast<void**>(p) = l;
            l = p;
            w->value_blocks_kept_ += bytes;
            return;
        }
        if (w->value_depot_) {
            worker::value_spill& s = w->value_spill_[words];
            *static_cast<void**>(p) = s.head;
            s.head = p;
            if (++s.count == value_block_chain) {
                depot_put(w->exec.value_depot, words, s.head);
                s.head = nullptr;
                s.count = 0;
            }
            return;
        }
    }
    ::operator delete(p, bytes);
}

void delete_value_message(message& m) {
    const std::size_t n = value_block_access::bytes(m);
    // The most-derived object's address, read before it is gone; the
    // virtual destructor call destroys the whole object.
    void* block = dynamic_cast<void*>(&m);
    m.~message();
    value_block_give(block, n);
}

void worker::free_value_blocks() noexcept {
    for (std::size_t words = 1; words < std::size(value_blocks_); ++words) {
        delete_blocks(value_blocks_[words], words * 8);
        value_blocks_[words] = nullptr;
        delete_blocks(value_spill_[words].head, words * 8);
        value_spill_[words] = {};
    }
    value_blocks_kept_ = 0;
}

value_block_depot::~value_block_depot() {
    for (std::size_t words = 1; words < std::size(chains); ++words) {
        void* c = chains[words].load(std::memory_order_relaxed);
        while (c != nullptr) {
            void* next = next_chain(c);
            delete_blocks(c, words * 8);
            c = next;
        }
    }
}

}  // namespace troupe::detail
