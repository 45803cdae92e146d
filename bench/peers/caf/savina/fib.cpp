// CAF 0.17 twin of bench/savina/fib.cpp: one actor per call; a parent
// requests fib(n-1) and fib(n-2) from two children and answers through a
// response promise.
namespace savina_fib {

struct fib_state {
    long sum = 0;
    int replies = 0;
};

caf::behavior fib_actor(caf::stateful_actor<fib_state>* self) {
    return {[=](long n) -> caf::result<long> {
        if (n <= 2) {
            self->quit();
            return 1L;
        }
        auto rp = self->make_response_promise<long>();
        auto on_reply = [=](long v) mutable {
            self->state.sum += v;
            if (++self->state.replies == 2) {
                rp.deliver(self->state.sum);
                self->quit();
            }
        };
        self->request(self->spawn(fib_actor), caf::infinite, n - 1).then(on_reply);
        self->request(self->spawn(fib_actor), caf::infinite, n - 2).then(on_reply);
        return rp;
    }};
}

SAVINA_BENCH(fib) {
    const long n = info.size("n", 27, 18);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    long result = 0;
    bench::stopwatch t;
    {
        caf::scoped_actor self{system};
        self->request(system.spawn(fib_actor), caf::infinite, n)
            .receive([&](long v) { result = v; }, [&](caf::error&) { result = -1; });
    }
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(result)};
}

}  // namespace savina_fib
