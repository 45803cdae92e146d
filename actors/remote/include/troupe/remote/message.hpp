#pragma once
/// Registering message types for remote sends, and how they are encoded.
///
///     struct deposit : troupe::message { long cents = 0; int account = 0; };
///     TROUPE_REMOTE_MESSAGE(deposit, "bank.deposit", &deposit::cents, &deposit::account);
///
///     struct note : troupe::message { std::string text; std::vector<int> tags; };
///     TROUPE_REMOTE_MESSAGE(note, "app.note", &note::text, &note::tags);   // cereal per field
///
///     struct balance : troupe::request<long> { int account = 0; };
///     TROUPE_REMOTE_MESSAGE(balance, "bank.balance", &balance::account);
///
/// Every message type sent to another rank is registered once, at namespace
/// scope outside any namespace of yours (the macro specialises
/// `troupe::remote::message_traits`), with a name that is stable across the
/// ranks (and across builds of the program) and the members to transfer.
/// Members that are trivially copyable are copied as bytes; others (strings,
/// vectors, maps, your own types) go through cereal's binary archive
/// (include the cereal/types/... header for the standard types you use beyond
/// string, vector, array, utility and tuple; your own types need a cereal
/// `serialize`). A message with no members listed may instead have a cereal
/// `serialize` member, or you may specialise `troupe::remote::codec<M>`.
/// The receiving rank default-constructs the message, then decodes into it.
/// A request's reply type (R of troupe::request<R>) is encoded the same way:
/// bytes if trivially copyable, else cereal.
///
/// Cost: a trivially copyable member is one memcpy each way; cereal members
/// cost what cereal costs (no allocation beyond the member's own).
#include <cstring>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <cereal/archives/binary.hpp>
#include <cereal/cereal.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/tuple.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>
#include <istream>
#include <ostream>

#include "troupe/actor.hpp"
#include "troupe/detail/type_name.hpp"
#include "troupe/poison_pill.hpp"
#include "troupe/remote/detail/wire.hpp"
#include "troupe/request.hpp"

namespace troupe::remote {

/// Specialised by TROUPE_REMOTE_MESSAGE: `name` (the stable wire name) and
/// `fields` (a tuple of pointers to the members to transfer).
template <class M>
struct message_traits;

namespace detail {

/// Records `name` as registered for the type spelt `type` (startup, once
/// per registration). Two types under one name are reported when the world
/// starts. Returns true.
bool register_message_name(std::string_view name, std::string_view type) noexcept;

template <class M>
concept registered_message = requires {
    { message_traits<M>::name } -> std::convertible_to<std::string_view>;
    message_traits<M>::fields;
};

template <class M>
inline constexpr bool is_request = std::is_base_of_v<troupe::detail::request_tag, M>;

template <class F>
struct future_value;
template <class T>
struct future_value<troupe::future<T>> {
    using type = T;
};
/// R for a message derived from troupe::request<R>.
template <class M>
using reply_type =
    typename future_value<std::remove_cvref_t<decltype(std::declval<M&>().result())>>::type;

struct cereal_io {
    writer_streambuf wsb;
    reader_streambuf rsb;
    std::ostream os{&wsb};
    std::istream is{&rsb};
};
/// The calling kernel thread's streams, for decoding (on the engine thread,
/// an OS thread: no other sender shares it).
inline cereal_io& tls_cereal() {
    thread_local cereal_io io;
    return io;
}

/// A stream set from the calling kernel thread's spare list (or a new one).
/// Throws std::bad_alloc.
cereal_io* take_cereal_io();
/// Returns it to the calling kernel thread's spare list (or frees it).
void give_cereal_io(cereal_io* io) noexcept;

/// The streams one encoding owns: a `serialize` may park, and another
/// sender on this kernel thread must not redirect them meanwhile (nor may
/// the encoding, resumed on another kernel thread, share that one's).
class cereal_lease {
public:
    cereal_lease() : io_(take_cereal_io()) {}
    ~cereal_lease() { give_cereal_io(io_); }
    cereal_lease(const cereal_lease&) = delete;
    cereal_lease& operator=(const cereal_lease&) = delete;
    cereal_io* operator->() const noexcept { return io_; }

private:
    cereal_io* io_;
};

template <class T>
void put_cereal(byte_writer& w, const T& v) {
    cereal_lease io;
    io->wsb.out = &w;
    cereal::BinaryOutputArchive ar(io->os);
    ar(v);
}

template <class T>
void get_cereal(byte_reader& r, T& v) {
    cereal_io& io = tls_cereal();
    io.rsb.in = &r;
    io.is.clear();
    try {
        cereal::BinaryInputArchive ar(io.is);
        ar(v);
    } catch (const cereal::Exception& e) {
        throw truncated_payload(e.what());
    } catch (const std::length_error& e) {  // a garbage length prefix
        throw truncated_payload(e.what());
    } catch (const std::bad_alloc&) {  // a huge garbage length prefix
        throw truncated_payload("payload holds an impossible length");
    }
}

/// One value: bytes if trivially copyable, else cereal.
template <class T>
void put(byte_writer& w, const T& v) {
    if constexpr (std::is_trivially_copyable_v<T>) w.bytes(&v, sizeof(T));
    else put_cereal(w, v);
}
template <class T>
void get(byte_reader& r, T& v) {
    if constexpr (std::is_trivially_copyable_v<T>) r.bytes(&v, sizeof(T));
    else get_cereal(r, v);
}

template <class M>
concept cereal_member = requires(M& m, cereal::BinaryOutputArchive& ar) {
    m.serialize(ar);
};

template <class M>
constexpr std::size_t base_size() noexcept {
    if constexpr (is_request<M>) return sizeof(troupe::request<reply_type<M>>);
    else return sizeof(troupe::message);
}

}  // namespace detail

/// How M's payload is written and read. Specialise it for full control;
/// the default transfers the members listed in TROUPE_REMOTE_MESSAGE (or
/// calls M's cereal `serialize` when none are listed).
template <class M>
struct codec {
    static_assert(detail::registered_message<M>,
                  "troupe::remote: this message type is not registered for remote sends; add "
                  "TROUPE_REMOTE_MESSAGE(type, \"stable.name\", &type::member...) at global scope");

    static constexpr auto fields = message_traits<M>::fields;
    static constexpr std::size_t field_count =
        std::tuple_size_v<std::remove_cv_t<decltype(fields)>>;

    static_assert(
        field_count > 0 || detail::cereal_member<M> || sizeof(M) == detail::base_size<M>(),
        "troupe::remote: this message type has data members but TROUPE_REMOTE_MESSAGE lists "
        "none (list them: TROUPE_REMOTE_MESSAGE(type, \"name\", &type::a, &type::b)), or give it "
        "a cereal serialize member, or specialise troupe::remote::codec");

    /// Writes m's payload. Throws what cereal or the allocator throws.
    static void encode(const M& m, byte_writer& w) {
        if constexpr (field_count > 0)
            std::apply([&](auto... f) { (detail::put(w, m.*f), ...); }, fields);
        else if constexpr (detail::cereal_member<M>) detail::put_cereal(w, m);
    }
    /// Reads m's payload (m default-constructed). Throws on a short payload.
    static void decode(M& m, byte_reader& r) {
        if constexpr (field_count > 0)
            std::apply([&](auto... f) { (detail::get(r, m.*f), ...); }, fields);
        else if constexpr (detail::cereal_member<M>) detail::get_cereal(r, m);
    }
};

}  // namespace troupe::remote

/// Registers message type M (a class derived from troupe::message) for remote
/// sends under the stable wire name NAME, transferring the listed members
/// (`&M::member`, any number, possibly none). Use once per type, at global
/// namespace scope.
#define TROUPE_REMOTE_MESSAGE(M, NAME, ...)                                                    \
    template <>                                                                                \
    struct troupe::remote::message_traits<M> {                                                 \
        static constexpr std::string_view name = NAME;                                         \
        static constexpr auto fields = std::make_tuple(__VA_ARGS__);                           \
        static inline const bool registered = ::troupe::remote::detail::register_message_name( \
            NAME, ::troupe::detail::type_name<M>());                                           \
    }

// The builtin poison pills work remotely too.
TROUPE_REMOTE_MESSAGE(troupe::finished_msg_t, "troupe.finished");
TROUPE_REMOTE_MESSAGE(troupe::delete_msg_t, "troupe.delete");
TROUPE_REMOTE_MESSAGE(troupe::destroy_msg_t, "troupe.destroy");
