// The buffers sends build their frames in, and the cereal streams their
// encoders write through: a few per kernel thread, lent to one call at a
// time (see frame_buffer and cereal_lease). Each function reads its
// thread-local cache afresh: a user thread may resume on another kernel
// thread between taking and giving back.
#include <memory>

#include "engine.hpp"
#include "troupe/defaults/remote.hpp"
#include "troupe/remote/message.hpp"

namespace troupe::remote::detail {

namespace cfg = troupe::defaults::remote;

namespace {

// Fixed arrays: taking and giving back never allocate.
struct spare_buffers {
    byte_buffer b[cfg::spare_frame_buffers];
    int n = 0;
};
struct spare_streams {
    std::unique_ptr<cereal_io> s[cfg::spare_frame_buffers];
    int n = 0;
};

spare_buffers& buffers() noexcept {
    thread_local spare_buffers c;
    return c;
}
spare_streams& streams() noexcept {
    thread_local spare_streams c;
    return c;
}

}  // namespace

byte_buffer take_frame_buffer() noexcept {
    spare_buffers& c = buffers();
    if (c.n == 0) return byte_buffer{};
    return std::move(c.b[--c.n]);
}

void give_frame_buffer(byte_buffer&& b) noexcept {
    spare_buffers& c = buffers();
    if (c.n == cfg::spare_frame_buffers || b.capacity() > cfg::max_kept_frame_buffer) {
        byte_buffer drop{std::move(b)};  // freed here
        return;
    }
    b.clear();
    c.b[c.n++] = std::move(b);
}

cereal_io* take_cereal_io() {
    spare_streams& c = streams();
    if (c.n == 0) return new cereal_io;
    return c.s[--c.n].release();
}

void give_cereal_io(cereal_io* io) noexcept {
    io->wsb.out = nullptr;
    io->os.clear();  // a failed write may have left badbit set
    spare_streams& c = streams();
    if (c.n == cfg::spare_frame_buffers) {
        delete io;
        return;
    }
    c.s[c.n++].reset(io);
}

}  // namespace troupe::remote::detail
