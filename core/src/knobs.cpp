// Reading the environment variables of troupe/knobs.hpp: the one place the
// library calls getenv for a TROUPE_* name.
#include "troupe/knobs.hpp"

#include <cstdlib>
#include <cstring>

namespace troupe::knobs {

const char* value(const knob& k) noexcept { return std::getenv(k.name); }

long get_or(const knob& k, long fallback, long max) noexcept {
    const char* v = value(k);
    if (!v) return fallback;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (end == v || n < 0) return fallback;
    return n < max ? n : max;
}

bool is(const knob& k, const char* word) noexcept {
    const char* v = value(k);
    return v && std::strcmp(v, word) == 0;
}

}  // namespace troupe::knobs
