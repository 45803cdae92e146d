// Frames and their codec (invariants in frames.hpp): building a frame,
// splitting a received batch into frames, the error records of
// reply_error frames, and the buffers senders build frames in. No MPI: the
// MPI-free tests (tests/remote/parts) link this file alone.
#include "frames.hpp"

#include <memory>
#include <stdexcept>

#include "troupe/defaults/remote.hpp"
#include "troupe/remote/message.hpp"

namespace troupe::remote::detail {

namespace cfg = troupe::defaults::remote;

// ---------------------------------------------------------------- building

constinit thread_local byte_buffer* pass_buffer = nullptr;

byte_buffer& scratch() noexcept {
    if (pass_buffer) return *pass_buffer;
    thread_local byte_buffer b;
    return b;
}

void begin_frame(byte_buffer& b, frame_kind k, std::string_view name, std::uint64_t key,
                 std::uint64_t target, std::uint64_t token) {
    b.clear();
    frame_header h{};
    h.kind = static_cast<std::uint16_t>(k);
    h.name_len = static_cast<std::uint16_t>(name.size());
    h.magic = frame_magic;
    h.target = target;
    h.token = token;
    h.type_key = key;
    b.append(&h, sizeof h);
    b.append(name.data(), name.size());
}

void check_frame_size(std::size_t bytes, std::string_view name) {
    if (bytes > max_frame_size)
        throw std::length_error(
            "troupe::remote: message \"" + std::string{name} + "\" encodes to a frame of " +
            std::to_string(bytes) + " bytes, over the limit of " + std::to_string(max_frame_size) +
            " (frame sizes are 32-bit, MPI counts int); send it in smaller parts");
}

void end_frame(byte_buffer& b) {
    frame_header h;
    std::memcpy(&h, b.data(), sizeof h);
    // Before the 32-bit fields below are computed (padded size, in size_t).
    check_frame_size((b.size() + 7) & ~std::size_t{7},
                     std::string_view{b.data() + sizeof h, h.name_len});
    h.payload_len = static_cast<std::uint32_t>(b.size() - sizeof h - h.name_len);
    const std::uint32_t total = align8(b.size());
    if (total > b.size()) b.grow(total - b.size());
    h.size = total;
    std::memcpy(b.data(), &h, sizeof h);
}

// ---------------------------------------------------------------- parsing

std::string batch_parser::describe(std::string_view from) const {
    const std::string src{from};
    if (fault_ == frame_fault::none) return {};
    if (fault_ == frame_fault::truncated_header)
        return "a truncated frame header (" + std::to_string(bad_left_) + " bytes) from " + src;
    std::string s = "a malformed frame from " + src;
    if (!fault_name_.empty()) s += " (message \"" + std::string{fault_name_} + "\")";
    s += ": ";
    const std::string size = std::to_string(bad_.size);
    switch (fault_) {
    case frame_fault::bad_magic: s += "bad magic number"; break;
    case frame_fault::too_small:
        s += "its size (" + size + ") is smaller than a frame header (" +
             std::to_string(sizeof(frame_header)) + ")";
        break;
    case frame_fault::misaligned: s += "its size (" + size + ") is not a multiple of 8"; break;
    case frame_fault::past_batch:
        s += "its sizes (frame " + size + ", payload " + std::to_string(bad_.payload_len) +
             ") exceed the " + std::to_string(bad_left_) + " bytes received";
        break;
    case frame_fault::contents_overflow:
        s += "its name (" + std::to_string(bad_.name_len) + " bytes) and payload (" +
             std::to_string(bad_.payload_len) + " bytes) do not fit in its size (" + size + ")";
        break;
    case frame_fault::none:
    case frame_fault::truncated_header: break;
    }
    return s + "; the rest of the batch is dropped";
}

// ---------------------------------------------------------------- error records

namespace {

void put_text(byte_writer& w, const std::string& s) {
    const auto n = static_cast<std::uint32_t>(s.size());
    w.bytes(&n, sizeof n);
    w.bytes(s.data(), s.size());
}

std::string get_text(byte_reader& r, const char* what) {
    std::uint32_t n = 0;
    if (r.left() < sizeof n)
        throw truncated_payload(std::string{"error record truncated before its "} + what);
    r.bytes(&n, sizeof n);
    if (n > r.left())
        throw truncated_payload(std::string{"error record's "} + what + " claims " +
                                std::to_string(n) + " byte(s), " + std::to_string(r.left()) +
                                " left");
    std::string s(n, '\0');
    r.bytes(s.data(), n);
    return s;
}

}  // namespace

void put_reply_error(byte_writer& w, const reply_error_record& e) {
    const auto code = static_cast<std::uint8_t>(e.code);
    w.bytes(&code, 1);
    switch (e.code) {
    case error_code::behaviour_threw:
        put_text(w, e.type);
        put_text(w, e.what);
        break;
    case error_code::actor_gone:
        put_text(w, e.what);
        put_text(w, e.actor_name);
        put_text(w, e.actor_type);
        break;
    case error_code::network_error:
    case error_code::rank_ended:
    case error_code::timed_out: put_text(w, e.what); break;
    }
}

reply_error_record get_reply_error(byte_reader& r) {
    std::uint8_t code = 0;
    if (r.left() == 0) throw truncated_payload("error record is empty (no error code)");
    r.bytes(&code, 1);
    reply_error_record e;
    switch (code) {
    case static_cast<std::uint8_t>(error_code::behaviour_threw):
        e.type = get_text(r, "exception type");
        e.what = get_text(r, "message");
        break;
    case static_cast<std::uint8_t>(error_code::actor_gone):
        e.what = get_text(r, "message");
        e.actor_name = get_text(r, "actor name");
        e.actor_type = get_text(r, "actor type");
        break;
    case static_cast<std::uint8_t>(error_code::network_error):
    case static_cast<std::uint8_t>(error_code::rank_ended):
    case static_cast<std::uint8_t>(error_code::timed_out): e.what = get_text(r, "message"); break;
    default:
        throw truncated_payload("unknown error code " + std::to_string(code) +
                                " (this program knows 1 to " + std::to_string(max_error_code) +
                                "): sender and receiver run different programs?");
    }
    e.code = static_cast<error_code>(code);
    if (r.left() != 0)
        throw truncated_payload("error record has " + std::to_string(r.left()) +
                                " byte(s) more than its code reads");
    return e;
}

// ---------------------------------------------------------------- buffers
//
// The buffers sends build their frames in, and the cereal streams their
// encoders write through: a few per kernel thread, lent to one call at a
// time (see frame_buffer and cereal_lease). Each function reads its
// thread-local cache afresh: a user thread may resume on another kernel
// thread between taking and giving back.

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
