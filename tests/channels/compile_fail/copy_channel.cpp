// expect: use of deleted function
// A channel is a shared rendezvous point, never copied.
#include "troupe/channel.hpp"

int main() {
    troupe::channel<int> a{1};
    troupe::channel<int> b = a;
    (void)b;
}
