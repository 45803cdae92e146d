// expect: nothrow move-constructible
// Elements move inside the channel's critical section, so a type whose move
// constructor may throw is rejected at compile time.
#include "troupe/channel.hpp"

struct fragile {
    fragile() = default;
    fragile(fragile&&) noexcept(false) {}
};

int main() {
    troupe::channel<fragile> ch{1};
    (void)ch;
}
