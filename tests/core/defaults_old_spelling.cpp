// expect: is not a member of
// A compile-time default has one spelling, troupe::defaults::<module>::<name>
// (docs/names.md): the module namespaces are not inline.
#include "troupe/defaults/core.hpp"

static_assert(troupe::defaults::stack_size > 0);
