#pragma once
// Internal: frames and their codec, with no MPI in sight (the MPI-free
// tests in tests/remote/parts build this part alone).
//
// A batch (one MPI message) is a run of frames, each
//   frame_header | message name | payload | padding to 8 bytes
// (troupe/remote/detail/wire.hpp). This part builds frames (begin_frame,
// end_frame, in engine_api.hpp), splits a received batch into frames
// (batch_parser), and encodes the error records of reply_error frames
// (engine_api.hpp: put_reply_error, get_reply_error).
//
// Invariants:
//   - batch_parser yields each well-formed frame of a batch in order, and
//     stops at the first malformed one: every frame it yields lies wholly
//     inside the batch (name and payload included), so a handler never
//     reads past the bytes received, and the valid frames before a bad one
//     are all delivered. What was wrong is kept (fault(), describe()).
//   - A frame end_frame completes is never over max_frame_size: the check
//     runs before any 32-bit size field is computed.
//   - While a kernel thread runs a progress pass, scratch() is the engine's
//     pass buffer, never that kernel thread's own scratch buffer, which may
//     hold the half-built frame of a user thread switched out on it.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "troupe/remote/detail/engine_api.hpp"
#include "troupe/remote/detail/wire.hpp"

namespace troupe::remote::detail {

/// The frame buffer of the progress pass running on this kernel thread, or
/// nullptr: scratch() returns it while it is set. Set and cleared by the
/// progress token's holder only (pass_buffer_scope).
extern constinit thread_local byte_buffer* pass_buffer;

/// Makes `b` this kernel thread's scratch buffer for the scope of a pass.
class pass_buffer_scope {
public:
    explicit pass_buffer_scope(byte_buffer& b) noexcept { pass_buffer = &b; }
    ~pass_buffer_scope() { pass_buffer = nullptr; }
    pass_buffer_scope(const pass_buffer_scope&) = delete;
    pass_buffer_scope& operator=(const pass_buffer_scope&) = delete;
};

/// What is wrong with the frame a batch_parser stopped at.
enum class frame_fault : std::uint8_t {
    none,              // no fault: the batch ended where its last frame did
    truncated_header,  // fewer bytes left than a frame header
    bad_magic,         // the header's magic number is not frame_magic
    too_small,         // the frame's size is smaller than its header
    misaligned,        // the frame's size is not a multiple of 8
    past_batch,        // the frame's size runs past the end of the batch
    contents_overflow  // header, name and payload do not fit in the frame's size
};

/// One frame of a batch: its header, name and payload (views into the
/// batch, valid while the batch is).
struct parsed_frame {
    frame_header h;
    std::string_view name;
    const char* payload;
};

/// Whether `kind` (a header's) is a frame_kind this program knows; a frame
/// of another kind is reported and dropped alone (its size is known, so
/// the rest of the batch is still read).
constexpr bool known_kind(std::uint16_t kind) noexcept {
    return kind >= static_cast<std::uint16_t>(frame_kind::tell) &&
           kind <= static_cast<std::uint16_t>(frame_kind::probe);
}

/// Splits a received batch into frames. Never throws, never reads outside
/// [p, p + n).
class batch_parser {
public:
    batch_parser(const char* p, std::size_t n) noexcept : p_(p), left_(n) {}
    /// The next frame: true with `f` filled, or false at the end of the
    /// batch or at a malformed frame (fault() tells which; nothing after it
    /// is yielded).
    bool next(parsed_frame& f) noexcept;
    frame_fault fault() const noexcept { return fault_; }
    /// The message name in the malformed frame's header, if the header got
    /// that far (its magic is right and the name lies inside the batch).
    std::string_view fault_name() const noexcept { return fault_name_; }
    /// A phrase naming what was wrong, to follow "received ", e.g. "a
    /// malformed frame ... : its size (20) is not a multiple of 8". `from`
    /// names the sender ("rank 1"). Empty if fault() is none.
    std::string describe(std::string_view from) const;

private:
    const char* p_;
    std::size_t left_;
    frame_fault fault_ = frame_fault::none;
    frame_header bad_{};        // the malformed frame's header (as read)
    std::size_t bad_left_ = 0;  // bytes the batch had left at it
    std::string_view fault_name_;
};

// Inline: called once per frame received, on the reply path.
inline bool batch_parser::next(parsed_frame& f) noexcept {
    if (left_ == 0 || fault_ != frame_fault::none) return false;
    frame_header h;
    if (left_ < sizeof h) {
        fault_ = frame_fault::truncated_header;
        bad_left_ = left_;
        return false;
    }
    std::memcpy(&h, p_, sizeof h);
    frame_fault bad = frame_fault::none;
    // In this order: each check may rely on the ones before (the sizes are
    // only meaningful once the magic is right; the contents are compared
    // with a size known to lie inside the batch). 64-bit sums: no overflow.
    if (h.magic != frame_magic) bad = frame_fault::bad_magic;
    else if (h.size < sizeof h) bad = frame_fault::too_small;
    else if (h.size % 8 != 0) bad = frame_fault::misaligned;
    else if (h.size > left_) bad = frame_fault::past_batch;
    else if (std::uint64_t{sizeof h} + h.name_len + h.payload_len > h.size)
        bad = frame_fault::contents_overflow;
    if (bad != frame_fault::none) {
        fault_ = bad;
        bad_ = h;
        bad_left_ = left_;
        if (h.magic == frame_magic && sizeof h + std::size_t{h.name_len} <= left_)
            fault_name_ = std::string_view{p_ + sizeof h, h.name_len};
        return false;
    }
    f.h = h;
    f.name = std::string_view{p_ + sizeof h, h.name_len};
    f.payload = p_ + sizeof h + h.name_len;
    p_ += h.size;
    left_ -= h.size;
    return true;
}

}  // namespace troupe::remote::detail
