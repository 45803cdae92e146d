// A processor's switches into and out of its user threads: run_fiber (the
// scheduler's side: the switch in, the exception state and errno swap, the
// action after the switch out), switch_out (the user thread's side), and
// a finishing thread's last switch. Every switch tells the sanitizers
// (__sanitizer_start_switch_fiber, __tsan_switch_to_fiber), the last one
// out of a finishing thread included.
#include <boost/context/detail/fcontext.hpp>

#include <cerrno>
#include <exception>
#include <utility>

#include "sched/runtime.hpp"
#include "troupe/config.hpp"
#include "troupe/detail/block_hook.hpp"
#include "troupe/detail/trace.hpp"

#if defined(TROUPE_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(TROUPE_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace bctx = boost::context::detail;

namespace troupe::detail {

// Called on a fiber's stack right after it (re)gains the CPU from processor
// `p`, whose scheduler context is `from_fctx`.
void resume_on(fiber* self, void* from_fctx, processor* p) noexcept {
    p->sched_fctx = from_fctx;
#if defined(TROUPE_ASAN)
    const void* bottom = nullptr;
    std::size_t size = 0;
    __sanitizer_finish_switch_fiber(self->asan_fake_stack, &bottom, &size);
    p->sched_stack_bottom = const_cast<void*>(bottom);
    p->sched_stack_size = size;
#endif
    self->last = p;
}

void processor::switch_out(fiber* self, post_action a) noexcept {
    processor* p = self->last;
    p->action = a;
#if defined(TROUPE_ASAN)
    // A finishing fiber passes nullptr so ASan frees its fake stack.
    __sanitizer_start_switch_fiber(a == post_action::finish ? nullptr : &self->asan_fake_stack,
                                   p->sched_stack_bottom, p->sched_stack_size);
#endif
#if defined(TROUPE_TSAN)
    __tsan_switch_to_fiber(p->tsan_self, 0);
#endif
    bctx::transfer_t t = bctx::jump_fcontext(p->sched_fctx, nullptr);
    // Resumed, possibly by another processor: it passed itself as data.
    resume_on(self, t.fctx, static_cast<processor*>(t.data));
}

void processor::fiber_entry_finish(fiber* self) {
    switch_out(self, post_action::finish);
    __builtin_unreachable();  // the scheduler never resumes a finished fiber
}

void processor::run_fiber(fiber* f) noexcept {
    for (;;) {
        current = f;
        f->last = this;
        // A runtime's hooks (the actor executor's user-thread workers keep
        // their kernel-thread-local state with them), called on the
        // scheduler's stack, outside the sanitizers' switch annotations.
        if (const user_thread_hooks* h = f->hooks) [[unlikely]]
            h->switched_in(f->hooks_arg);
#if defined(TROUPE_ASAN)
        __sanitizer_start_switch_fiber(&sched_fake_stack, f->stack_low, f->stack_usable);
#endif
#if defined(TROUPE_TSAN)
        __tsan_switch_to_fiber(f->tsan_fiber, 0);
#endif
        // The exception state and errno belong to the thread, not to the
        // kernel thread: install the fiber's (empty on its first entry) for
        // the time it runs and take it back when it switches out, wherever
        // it ran before. A finished fiber's state is empty (fiber_main
        // handled everything), so nothing leaks at the last exit.
        // Both addresses are fixed for the kernel thread's life: look them
        // up once (each is a call into the C runtime), then the swap is a
        // few loads and stores.
        if (!eh_) {
            eh_ = current_eh_state();
            errno_ = &errno;
        }
        // The scheduler loop itself never runs inside a handler or during
        // unwinding and does not read errno, so its own state is empty and
        // needs no saving: install the fiber's, take it back, leave empty.
        *eh_ = f->eh;
        *errno_ = f->saved_errno;
        // The execution trace's run slice (docs/trace.md): one flag load when off.
        const std::uint64_t trace_t0 = trace::on() ? trace::now() : 0;
        tls_running = f;
        shown.store(f, std::memory_order_relaxed);  // for dumps
        bctx::transfer_t t = bctx::jump_fcontext(f->fctx, this);
        shown.store(nullptr, std::memory_order_relaxed);
        tls_running = nullptr;
        if (trace_t0) [[unlikely]]
            trace::run_slice(f, trace_t0, static_cast<trace::slice_end>(action));
        f->saved_errno = *errno_;
        f->eh = *eh_;
        *eh_ = eh_state{};
#if defined(TROUPE_ASAN)
        __sanitizer_finish_switch_fiber(sched_fake_stack, nullptr, nullptr);
#endif
        // The fiber may have changed its hooks while it ran (it alone sets them).
        if (const user_thread_hooks* h = f->hooks) [[unlikely]]
            h->switched_out(f->hooks_arg);
        f->fctx = t.fctx;
        current = nullptr;
#if defined(TROUPE_STATISTICS)
        counters.switches.fetch_add(1, std::memory_order_relaxed);
#endif
        switch (std::exchange(action, post_action::none)) {
        case post_action::park: {
            // The fiber is off its stack now, so an unparker may reschedule it
            // (on any processor) as soon as it sees `parked`. If a permit was
            // banked meanwhile, consume it and run the fiber again at once.
            std::uint32_t expected = context::running;
            if (f->state_.compare_exchange_strong(expected, context::parked,
                                                  std::memory_order_acq_rel))
                return;
            f->state_.store(context::running, std::memory_order_relaxed);
            continue;
        }
        case post_action::yield:
            if (!push(f, true)) owner.schedule(f);
            return;
        case post_action::finish: {
#if defined(TROUPE_TSAN)
            __tsan_destroy_fiber(f->tsan_fiber);
#endif
            // Count the thread finished before the joiner can see it done, so
            // live_threads() is exact once join() returns. (The cluster
            // cannot be destroyed under us: its destructor joins this kernel
            // thread first.)
            f->home->thread_finished();
            finish_join(*f);
            return;
        }
        case post_action::none: return;
        }
    }
}

}  // namespace troupe::detail
