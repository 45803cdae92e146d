#pragma once
/// Builtin poison pills: messages every actor understands.
///
///     a | troupe::finished_msg;   // a returns Finished (stack/global actors)
///     *p | troupe::delete_msg;    // *p returns Delete: destroyed and freed
///     *q | troupe::destroy_msg;   // *q returns Destroy: destructor only
///
/// No boilerplate is needed; an actor type may override one by declaring its
/// own `allocation receive(troupe::finished_msg_t&)` (and so on), which is
/// then used instead. The pill objects are shared, never deleted, and may be
/// sent any number of times to any actors of any system.
#include <type_traits>

#include "troupe/message.hpp"

namespace troupe {

/// Type of `finished_msg`; the builtin behaviour returns `Finished`.
struct finished_msg_t : message {
    constexpr finished_msg_t() noexcept : message(builtin_tag{}) {}
};
/// Type of `delete_msg`; the builtin behaviour returns `Delete`.
struct delete_msg_t : message {
    constexpr delete_msg_t() noexcept : message(builtin_tag{}) {}
};
/// Type of `destroy_msg`; the builtin behaviour returns `Destroy`.
struct destroy_msg_t : message {
    constexpr destroy_msg_t() noexcept : message(builtin_tag{}) {}
};

inline finished_msg_t finished_msg;
inline delete_msg_t delete_msg;
inline destroy_msg_t destroy_msg;

namespace detail {

/// The builtin answer to a poison pill of type M.
template <class M>
inline constexpr bool is_poison_pill =
    std::is_same_v<M, finished_msg_t> || std::is_same_v<M, delete_msg_t> ||
    std::is_same_v<M, destroy_msg_t>;

template <class M>
constexpr allocation poison_pill_result() noexcept {
    if constexpr (std::is_same_v<M, finished_msg_t>) return Finished;
    else if constexpr (std::is_same_v<M, delete_msg_t>) return Delete;
    else return Destroy;
}

}  // namespace detail
}  // namespace troupe
