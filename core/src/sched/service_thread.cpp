// Service threads (troupe/detail/service_thread.hpp).
#include "troupe/detail/service_thread.hpp"

#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <cstring>

namespace troupe::detail {

namespace {
void set_name(pthread_t t, const char* name) noexcept {
    char cut[16];  // the kernel's comm: 15 bytes and the terminator
    std::strncpy(cut, name, sizeof cut - 1);
    cut[sizeof cut - 1] = '\0';
    (void)pthread_setname_np(t, cut);
}
}  // namespace

// A joinable std::thread's id stays valid until it is joined, whether or
// not the thread has ended, so naming it from its creator is safe.
void name_kernel_thread(std::thread& t, const char* name) noexcept {
    if (t.joinable()) set_name(t.native_handle(), name);
}

void name_kernel_thread(std::thread& t, const char* prefix, std::size_t index) noexcept {
    char name[32];
    std::snprintf(name, sizeof name, "%s%zu", prefix, index);
    name_kernel_thread(t, name);
}

void name_this_kernel_thread(const char* name) noexcept { set_name(pthread_self(), name); }

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
