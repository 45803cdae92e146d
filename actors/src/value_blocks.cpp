// Value sends' blocks (troupe::send<M>, actor.hpp): each worker keeps the
// blocks of the value-sent messages it delivered, by exact size, and hands
// them to its behaviours' next value sends. Only the thread running as the
// worker (tls_worker) touches its lists, so they need no atomics; a block
// freed on one worker and taken on another passed between them inside a
// message (the send and the delivery order the accesses).
//
// Every block in a list is exactly its size's bytes from ::operator new, so
// any block may also go to ::operator delete with that size: what a list
// does not keep, and whatever a behaviour that took over a value-sent
// message frees with `delete`.
#include <new>

#include "executor.hpp"

namespace troupe::detail {

void* value_block_take(std::size_t bytes) {
    if (worker* w = tls_worker) {
        worker::value_block_list& l = w->value_blocks[bytes / 8];
        if (void* p = l.head) {
            l.head = *static_cast<void**>(p);
            w->value_blocks_kept -= bytes;
            return p;
        }
    }
    return ::operator new(bytes);
}

void value_block_give(void* p, std::size_t bytes) noexcept {
    if (worker* w = tls_worker) {
        if (w->value_blocks_kept + bytes <= defaults::actors::value_blocks_kept_max) {
            worker::value_block_list& l = w->value_blocks[bytes / 8];
            *static_cast<void**>(p) = l.head;
            l.head = p;
            w->value_blocks_kept += bytes;
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
    for (std::size_t words = 1; words < std::size(value_blocks); ++words) {
        value_block_list& l = value_blocks[words];
        while (void* p = l.head) {
            l.head = *static_cast<void**>(p);
            ::operator delete(p, words * 8);
        }
    }
    value_blocks_kept = 0;
}

}  // namespace troupe::detail
