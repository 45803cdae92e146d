// Service threads (troupe/detail/service_thread.hpp).
#include "troupe/detail/service_thread.hpp"

#include <pthread.h>

#include <csignal>

namespace troupe::detail {

int start_service_thread(void* (*fn)(void*), void* arg, std::size_t stack_size) noexcept {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (stack_size) pthread_attr_setstacksize(&a, stack_size);
    // The new thread inherits the mask in force when it is created: block
    // everything around the creation, then restore the caller's.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const int rc = pthread_create(&t, &a, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    pthread_attr_destroy(&a);
    return rc;
}

}  // namespace troupe::detail
