#pragma once
// Internal: the wire format of troupe-remote and the byte buffers frames are
// built in. Templates in the public headers encode and decode through these.
//
// One MPI message carries a batch of frames, each 8-aligned:
//   frame_header | message name (name_len bytes) | payload (payload_len) | pad
// All ranks of a job run the same architecture (MPI's homogeneous default);
// the header is native-endian.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <string_view>
#include <utility>

namespace troupe::remote::detail {

enum class frame_kind : std::uint16_t {
    tell = 1,          // a message for actor `target`
    ask = 2,           // a request for actor `target`; reply to ask id `token`
    reply_value = 3,   // the reply to ask id `target`; payload: the encoded value
    reply_error = 4,   // the reply to ask id `target`; payload: an error record (error_code)
    lookup = 5,        // payload: the name looked up; reply to lookup id `token`
    lookup_reply = 6,  // to lookup id `target`; payload: found, id, type, names
    goodbye = 7,       // the sender's world is ending; payload: its collectives entered
    watch = 8,         // monitor actor `target`; answer with a down to watch `token`
    down = 9,          // watched actor ended: to watch `target`; payload: reason kind, what()
    probe = 10,        // a request-cycle probe for actor `target`; payload: cycles.hpp's probe
};

/// The kind of error a reply_error frame carries: a code on the wire, never
/// the spelling of a C++ type (get_reply_error refuses a code it does not
/// know, naming it).
enum class error_code : std::uint8_t {
    behaviour_threw = 1,  // the behaviour threw: its dynamic type name and what()
    actor_gone = 2,       // the actor was destroyed or had finished: what(), its name and type
    network_error = 3,    // the serving rank could not deliver the ask (bad input): what()
    rank_ended = 4,       // made up on the asking rank when the asked rank ends (never sent)
    timed_out = 5,        // made up on the asking rank when the ask's deadline passes (never sent)
};
inline constexpr std::uint8_t max_error_code = 5;

inline constexpr std::uint32_t frame_magic = 0x7470726fu;  // "tpro"

struct frame_header {
    std::uint32_t size;         // bytes of the whole frame, header and padding included
    std::uint16_t kind;         // a frame_kind
    std::uint16_t name_len;     // bytes of the message name after the header
    std::uint32_t payload_len;  // bytes of payload after the name
    std::uint32_t magic;        // frame_magic
    std::uint64_t target;       // actor id, or ask/lookup id for replies
    std::uint64_t token;        // ask/lookup id for requests
    std::uint64_t type_key;     // hash of the message name
};
static_assert(sizeof(frame_header) == 40);

/// The largest frame, and the largest batch of frames, sent as one MPI
/// message: frame sizes are 32-bit and MPI counts are `int`, so INT_MAX
/// rounded down to the 8-byte frame alignment (2 GiB - 8 bytes).
inline constexpr std::size_t max_frame_size = 0x7ffffff8u;

constexpr std::uint32_t align8(std::size_t n) noexcept {
    return static_cast<std::uint32_t>((n + 7) & ~std::size_t{7});
}

/// FNV-1a: a stable 64-bit key for a message name (same on every rank).
constexpr std::uint64_t name_key(std::string_view s) noexcept {
    std::uint64_t h = 1469598103934665603ull;
    for (char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h;
}

/// A growable byte array that keeps its capacity when cleared (buffers are
/// reused: no allocation once they have grown to the working size).
class byte_buffer {
public:
    byte_buffer() noexcept = default;
    byte_buffer(const byte_buffer&) = delete;
    byte_buffer& operator=(const byte_buffer&) = delete;
    byte_buffer(byte_buffer&& o) noexcept : data_(o.data_), size_(o.size_), cap_(o.cap_) {
        o.data_ = nullptr;
        o.size_ = o.cap_ = 0;
    }
    byte_buffer& operator=(byte_buffer&& o) noexcept {
        byte_buffer t{std::move(o)};
        swap(t);
        return *this;
    }
    ~byte_buffer() { std::free(data_); }

    char* data() noexcept { return data_; }
    const char* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    std::size_t capacity() const noexcept { return cap_; }
    void clear() noexcept { size_ = 0; }
    void swap(byte_buffer& o) noexcept {
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
        std::swap(cap_, o.cap_);
    }
    /// Makes room for `n` more bytes. Throws std::bad_alloc (strong).
    void reserve_more(std::size_t n) {
        if (cap_ - size_ >= n) return;
        std::size_t c = cap_ ? cap_ : 256;
        while (c - size_ < n) c *= 2;
        auto* p = static_cast<char*>(std::realloc(data_, c));
        if (!p) throw std::bad_alloc{};
        data_ = p;
        cap_ = c;
    }
    /// Appends `n` bytes (strong guarantee).
    void append(const void* p, std::size_t n) {
        reserve_more(n);
        if (n) std::memcpy(data_ + size_, p, n);
        size_ += n;
    }
    /// Appends `n` zero bytes and returns where they start (strong).
    char* grow(std::size_t n) {
        reserve_more(n);
        char* at = data_ + size_;
        std::memset(at, 0, n);
        size_ += n;
        return at;
    }
    /// Sets the size to `n` (at most the current size, or after reserve).
    void resize_uninitialised(std::size_t n) {
        if (n > size_) reserve_more(n - size_);
        size_ = n;
    }

private:
    char* data_ = nullptr;
    std::size_t size_ = 0, cap_ = 0;
};

/// Thrown while decoding a payload that is shorter than its type needs, or
/// longer, or otherwise malformed (an unknown error code): the engine turns
/// it into a network error naming rank and type.
class truncated_payload : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace troupe::remote::detail

namespace troupe::remote {

/// Where an encoder writes a payload (see codec<M>).
class byte_writer {
public:
    explicit byte_writer(detail::byte_buffer& b) noexcept : buf_(&b) {}
    /// Appends `n` raw bytes.
    void bytes(const void* p, std::size_t n) { buf_->append(p, n); }
    detail::byte_buffer& buffer() noexcept { return *buf_; }

private:
    detail::byte_buffer* buf_;
};

/// Where a decoder reads a payload from. Reading past the end throws
/// (the engine reports a truncated payload, naming the rank and type).
class byte_reader {
public:
    byte_reader(const char* p, std::size_t n) noexcept : p_(p), left_(n) {}
    /// Copies the next `n` bytes to `out`; throws if fewer are left.
    void bytes(void* out, std::size_t n) {
        if (n > left_)
            throw detail::truncated_payload("payload truncated: needed " + std::to_string(n) +
                                            " more byte(s), " + std::to_string(left_) + " left");
        if (n) std::memcpy(out, p_, n);
        p_ += n;
        left_ -= n;
    }
    /// Reads up to `n` bytes; returns how many were read.
    std::size_t read_some(void* out, std::size_t n) noexcept {
        const std::size_t k = n < left_ ? n : left_;
        if (k) std::memcpy(out, p_, k);
        p_ += k;
        left_ -= k;
        return k;
    }
    std::size_t left() const noexcept { return left_; }

private:
    const char* p_;
    std::size_t left_;
};

}  // namespace troupe::remote

namespace troupe::remote::detail {

// Stream buffers that let cereal's binary archives (which call
// rdbuf()->sputn / sgetn) write into a byte_writer and read a byte_reader.
class writer_streambuf final : public std::streambuf {
public:
    byte_writer* out = nullptr;

protected:
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        out->bytes(s, static_cast<std::size_t>(n));
        return n;
    }
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
        const char ch = traits_type::to_char_type(c);
        out->bytes(&ch, 1);
        return c;
    }
};

class reader_streambuf final : public std::streambuf {
public:
    byte_reader* in = nullptr;

protected:
    std::streamsize xsgetn(char* s, std::streamsize n) override {
        return static_cast<std::streamsize>(in->read_some(s, static_cast<std::size_t>(n)));
    }
    int_type underflow() override { return traits_type::eof(); }
};

}  // namespace troupe::remote::detail
