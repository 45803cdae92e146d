// The frame codec without MPI: frames built and split again, batches cut
// short or corrupted at every byte (each valid frame before the damage is
// still yielded, the fault is named, nothing is read outside the batch:
// the batch is copied to a heap block of its exact size, so ASan catches
// an over-read), frames of kinds this program does not know, and the error
// records of reply_error frames (an unknown error code is refused, naming
// it).
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "frames.hpp"
#include "leak_check.hpp"
#include "scale.hpp"

namespace rd = troupe::remote::detail;
using troupe::remote::byte_reader;
using troupe::remote::byte_writer;

namespace {

// One frame of kind `k` named `name` carrying `payload`.
std::string frame(rd::frame_kind k, std::string_view name, std::string_view payload,
                  std::uint64_t target = 7) {
    rd::byte_buffer b;
    rd::begin_frame(b, k, name, rd::name_key(name), target, 11);
    b.append(payload.data(), payload.size());
    rd::end_frame(b);
    return std::string{b.data(), b.size()};
}

// The header at the start of `bytes`, changed by `edit`, written back.
template <class F>
std::string with_header(std::string bytes, F edit) {
    rd::frame_header h;
    std::memcpy(&h, bytes.data(), sizeof h);
    edit(h);
    std::memcpy(bytes.data(), &h, sizeof h);
    return bytes;
}

struct parsed {
    std::vector<std::string> names, payloads;
    std::vector<std::uint16_t> kinds;
    rd::frame_fault fault = rd::frame_fault::none;
    std::string fault_name, text;
};

// Parses `batch` from a heap block of exactly its size.
parsed parse(const std::string& batch) {
    std::unique_ptr<char[]> exact{new char[batch.size() ? batch.size() : 1]};
    std::memcpy(exact.get(), batch.data(), batch.size());
    rd::batch_parser p{exact.get(), batch.size()};
    parsed r;
    rd::parsed_frame f;
    while (p.next(f)) {
        r.names.emplace_back(f.name);
        r.payloads.emplace_back(f.payload, f.h.payload_len);
        r.kinds.push_back(f.h.kind);
        // The frame lies inside the batch.
        CHECK(f.name.data() >= exact.get());
        CHECK(f.payload + f.h.payload_len <= exact.get() + batch.size());
    }
    CHECK_FALSE(p.next(f));  // nothing after the end or the fault
    r.fault = p.fault();
    r.fault_name = std::string{p.fault_name()};
    r.text = p.describe("rank 3");
    return r;
}

const std::string a = frame(rd::frame_kind::tell, "test.a", "first payload");
const std::string b = frame(rd::frame_kind::ask, "test.bb", std::string(21, 'b'));
const std::string c = frame(rd::frame_kind::reply_value, "", "");

}  // namespace

TEST_CASE("frames: built frames are 8-aligned and split back exactly") {
    troupe_test::leak_check no_leaks;
    CHECK(a.size() % 8 == 0);
    CHECK(b.size() % 8 == 0);
    CHECK(c.size() == sizeof(rd::frame_header));
    const parsed r = parse(a + b + c);
    CHECK(r.fault == rd::frame_fault::none);
    CHECK(r.text.empty());
    REQUIRE(r.names.size() == 3);
    CHECK(r.names == std::vector<std::string>{"test.a", "test.bb", ""});
    CHECK(r.payloads == std::vector<std::string>{"first payload", std::string(21, 'b'), ""});
    CHECK(r.kinds == std::vector<std::uint16_t>{1, 2, 3});
    CHECK(parse("").names.empty());
    CHECK(parse("").fault == rd::frame_fault::none);
}

TEST_CASE("frames: a batch cut short at every byte keeps the frames before the cut") {
    troupe_test::leak_check no_leaks;
    const std::string batch = a + b + c;
    for (std::size_t n = 0; n <= batch.size(); ++n) {
        CAPTURE(n);
        const parsed r = parse(batch.substr(0, n));
        // Whole frames before the cut, in order.
        std::size_t whole = 0;
        if (n >= a.size()) ++whole;
        if (n >= a.size() + b.size()) ++whole;
        if (n == batch.size()) ++whole;
        CHECK(r.names.size() == whole);
        const std::size_t at = whole == 0 ? 0 : whole == 1 ? a.size() : a.size() + b.size();
        if (n == at || n == batch.size()) {
            CHECK(r.fault == rd::frame_fault::none);  // cut on a boundary: a shorter batch
        } else if (n - at < sizeof(rd::frame_header)) {
            CHECK(r.fault == rd::frame_fault::truncated_header);
            CHECK(r.text ==
                  "a truncated frame header (" + std::to_string(n - at) + " bytes) from rank 3");
        } else {
            CHECK(r.fault == rd::frame_fault::past_batch);
            CHECK(r.text.find("a malformed frame from rank 3") == 0);
            CHECK(r.text.find("exceed the " + std::to_string(n - at) + " bytes received") !=
                  std::string::npos);
            CHECK(r.text.find("the rest of the batch is dropped") != std::string::npos);
        }
    }
}

TEST_CASE("frames: wrong lengths and a bad magic number are named, after the valid frames") {
    troupe_test::leak_check no_leaks;
    struct bad_case {
        const char* what;
        std::string frame;
        rd::frame_fault fault;
        const char* text;
    };
    const bad_case cases[] = {
        {"bad magic", with_header(b, [](rd::frame_header& h) { h.magic = 0xdeadbeef; }),
         rd::frame_fault::bad_magic, "bad magic number"},
        {"size below a header", with_header(b, [](rd::frame_header& h) { h.size = 16; }),
         rd::frame_fault::too_small, "its size (16) is smaller than a frame header (40)"},
        {"size not a multiple of 8", with_header(b, [](rd::frame_header& h) { h.size -= 3; }),
         rd::frame_fault::misaligned, "is not a multiple of 8"},
        {"size past the batch", with_header(b, [](rd::frame_header& h) { h.size += 64; }),
         rd::frame_fault::past_batch, "exceed the"},
        {"payload longer than the frame",
         with_header(b, [](rd::frame_header& h) { h.payload_len = 0xfffffff0u; }),
         rd::frame_fault::contents_overflow, "do not fit in its size"},
        {"name longer than the frame",
         with_header(b, [](rd::frame_header& h) { h.name_len = 0xffff; }),
         rd::frame_fault::contents_overflow, "do not fit in its size"},
    };
    for (const bad_case& k : cases) {
        CAPTURE(k.what);
        const parsed r = parse(a + k.frame + c);
        REQUIRE(r.names.size() == 1);  // the valid frame before it, and nothing after
        CHECK(r.names[0] == "test.a");
        CHECK(r.payloads[0] == "first payload");
        CHECK(r.fault == k.fault);
        CAPTURE(r.text);
        CHECK(r.text.find(k.text) != std::string::npos);
        CHECK(r.text.find("from rank 3") != std::string::npos);
        if (k.fault == rd::frame_fault::bad_magic) {
            CHECK(r.fault_name.empty());  // the header cannot be trusted for a name
        } else if (k.frame.size() >= sizeof(rd::frame_header) + 7 &&
                   r.fault != rd::frame_fault::contents_overflow) {
            CHECK(r.fault_name == "test.bb");
            CHECK(r.text.find("(message \"test.bb\")") != std::string::npos);
        }
    }
}

TEST_CASE("frames: random damage never reads outside the batch") {
    troupe_test::leak_check no_leaks;
    const std::string batch = a + b + c + a;
    std::mt19937 rng{12345};
    const int rounds = troupe_test::scaled(20000);
    for (int i = 0; i < rounds; ++i) {
        std::string s = batch;
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < flips; ++k) s[rng() % s.size()] = static_cast<char>(rng());
        s.resize(rng() % (s.size() + 1));
        const parsed r = parse(s);  // checks every yielded frame lies inside
        CHECK(r.names.size() <= 4);
    }
}

TEST_CASE("frames: kinds this program does not know are recognised") {
    for (std::uint16_t k = 1; k <= 10; ++k) CHECK(rd::known_kind(k));
    CHECK_FALSE(rd::known_kind(0));
    CHECK_FALSE(rd::known_kind(11));
    CHECK_FALSE(rd::known_kind(0xffff));
    // A frame of unknown kind is still a well-formed frame: the parser
    // yields it (the engine reports and drops it alone) and goes on.
    const std::string odd = with_header(b, [](rd::frame_header& h) { h.kind = 99; });
    const parsed r = parse(a + odd + c);
    CHECK(r.fault == rd::frame_fault::none);
    CHECK(r.kinds == std::vector<std::uint16_t>{1, 99, 3});
}

TEST_CASE("frames: a frame over the limit is refused before its sizes are computed") {
    CHECK_NOTHROW(rd::check_frame_size(rd::max_frame_size, "test.ok"));
    try {
        rd::check_frame_size(rd::max_frame_size + 1, "test.big");
        FAIL("no throw");
    } catch (const std::length_error& e) {
        CHECK(std::string{e.what()}.find("\"test.big\"") != std::string::npos);
    }
}

namespace {
rd::reply_error_record round_trip(const rd::reply_error_record& e) {
    rd::byte_buffer buf;
    byte_writer w{buf};
    rd::put_reply_error(w, e);
    byte_reader r{buf.data(), buf.size()};
    return rd::get_reply_error(r);
}
std::string refusal(const std::string& bytes) {
    byte_reader r{bytes.data(), bytes.size()};
    try {
        (void)rd::get_reply_error(r);
    } catch (const rd::truncated_payload& e) {
        return e.what();
    }
    return "(accepted)";
}
}  // namespace

TEST_CASE("error records: every code round-trips with its fields") {
    troupe_test::leak_check no_leaks;
    rd::reply_error_record e;
    e.code = rd::error_code::behaviour_threw;
    e.type = "std::out_of_range";
    e.what = "index 7";
    auto r = round_trip(e);
    CHECK(r.code == rd::error_code::behaviour_threw);
    CHECK(r.type == "std::out_of_range");
    CHECK(r.what == "index 7");

    e = {};
    e.code = rd::error_code::actor_gone;
    e.what = "gone";
    e.actor_name = "bank.alice";
    e.actor_type = "account";
    r = round_trip(e);
    CHECK(r.code == rd::error_code::actor_gone);
    CHECK(r.what == "gone");
    CHECK(r.actor_name == "bank.alice");
    CHECK(r.actor_type == "account");

    for (auto code :
         {rd::error_code::network_error, rd::error_code::rank_ended, rd::error_code::timed_out}) {
        e = {};
        e.code = code;
        e.what = std::string(300, 'w');
        r = round_trip(e);
        CHECK(r.code == code);
        CHECK(r.what == e.what);
    }
}

TEST_CASE("error records: unknown codes and damaged records are refused, naming what is wrong") {
    troupe_test::leak_check no_leaks;
    for (int code : {0, 6, 200, 255}) {
        CAPTURE(code);
        const std::string text = refusal(std::string(1, static_cast<char>(code)) + "rest");
        CHECK(text.find("unknown error code " + std::to_string(code)) != std::string::npos);
        CHECK(text.find("1 to 5") != std::string::npos);
    }
    CHECK(refusal("").find("no error code") != std::string::npos);

    rd::reply_error_record e;
    e.code = rd::error_code::behaviour_threw;
    e.type = "std::logic_error";
    e.what = "bad";
    rd::byte_buffer buf;
    byte_writer w{buf};
    rd::put_reply_error(w, e);
    const std::string whole{buf.data(), buf.size()};
    for (std::size_t n = 1; n < whole.size(); ++n) {  // every truncation
        CAPTURE(n);
        const std::string text = refusal(whole.substr(0, n));
        CHECK(text.find("error record") != std::string::npos);
    }
    CHECK(refusal(whole + "x").find("1 byte(s) more") != std::string::npos);
    // A length prefix that claims more than is there.
    std::string lying = whole;
    const std::uint32_t huge = 1u << 30;
    std::memcpy(lying.data() + 1, &huge, sizeof huge);
    CHECK(refusal(lying).find("claims 1073741824 byte(s)") != std::string::npos);
}
