// The symbol that names this build's choices (see troupe/config.hpp): every
// translation unit including troupe's headers refers to it, so a program
// compiled against headers of a build with other choices fails to link.
#include "troupe/config.hpp"

extern "C" {
const int TROUPE_BUILD_CONFIG_SYMBOL =
    TROUPE_VERSION_MAJOR * 10000 + TROUPE_VERSION_MINOR * 100 + TROUPE_VERSION_PATCH;
}
