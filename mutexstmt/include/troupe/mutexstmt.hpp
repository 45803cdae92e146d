#pragma once
/// Everything in the troupe mutexstmt module: the address-ordered
/// multi-lock scope (`TROUPE_MUTEX(a, b) { ... }`, `scoped_mutex`,
/// `mutex(a, b)(fn)`, run-time lock sets) and the `lockable` concept.
/// Header-only; needs nothing but the standard library.
#include "troupe/lockable.hpp"
#include "troupe/mutex.hpp"
