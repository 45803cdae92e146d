#pragma once
/// The `lockable` concept, and `lock_ref`: a reference to a lockable object
/// of any type.
///
///     static_assert(troupe::lockable<std::mutex>);
///     troupe::lock_ref held[] = {account_mutex, troupe::sout, my_spinlock};
///     TROUPE_MUTEX(held) { ... }         // run-time set of mixed lock types
///
/// A type is lockable when an lvalue of it has `lock()` and `unlock()`:
/// std::mutex, std::recursive_mutex, every troupe lock, `troupe::sout`, user
/// types. `unlock()` must not throw (as for the standard's BasicLockable).
/// This header needs nothing but the standard library.
#if !defined(__cplusplus) || __cplusplus < 202002L
#error "troupe needs C++20 or later: compile with -std=c++20 (or -std=gnu++20)"
#include <troupe_needs_cxx20>  // a missing header stops the compiler here
#endif
#include <cstdint>
#include <memory>
#include <type_traits>

namespace troupe {

/// Something the mutex statement can hold: `l.lock()` blocks until the
/// caller holds `l`, `l.unlock()` releases it.
template <class L>
concept lockable = requires(L& l) {
    l.lock();
    l.unlock();
};

namespace detail {

/// How to lock and unlock an object of a type known only when it was named.
struct lock_ops {
    void (*lock)(void*);
    void (*unlock)(void*) noexcept;
};

/// One table per lock type. An inline variable has one address per program,
/// which `lock_ref`'s order uses to separate distinct objects that share an
/// address (an object and its first member).
template <class L>
inline constexpr lock_ops lock_ops_for{
    [](void* p) { static_cast<L*>(p)->lock(); },
    [](void* p) noexcept { static_cast<L*>(p)->unlock(); },
};

struct lock_ref_access;

}  // namespace detail

/// A non-owning reference to a lockable object of any type: two words, the
/// object's address and its type's lock/unlock. Converts implicitly from any
/// lockable lvalue, so arrays of `lock_ref` can mix lock types. Copying it
/// copies the reference, not the lock. It is itself lockable (each call is
/// one indirect call). Two refs are equal when they name the same object
/// through the same type.
class lock_ref {
public:
    template <lockable L>
    requires(!std::is_const_v<L> && !std::is_same_v<std::remove_volatile_t<L>, lock_ref>)
        lock_ref(L& l)
    noexcept  // NOLINT(google-explicit-constructor): meant to convert
        : object_(std::addressof(l)), ops_(&detail::lock_ops_for<L>) {}

    /// Locks the referenced object (whatever its lock() blocks on or throws).
    void lock() const { ops_->lock(object_); }
    /// Unlocks the referenced object.
    void unlock() const noexcept { ops_->unlock(object_); }

    /// The referenced object's address.
    const void* address() const noexcept { return object_; }

    friend bool operator==(const lock_ref&, const lock_ref&) noexcept = default;

private:
    friend struct detail::lock_ref_access;
    void* object_;
    const detail::lock_ops* ops_;
};

}  // namespace troupe
