// CAF 0.17 twin of bench/savina/concsll.cpp: W workers, M requests each
// (1% size, 10% inserts, lookups) to one sorted-linked-list actor.
namespace savina_concsll {

using size_atom = caf::atom_constant<caf::atom("size")>;
using write_atom = caf::atom_constant<caf::atom("write")>;
using contains_atom = caf::atom_constant<caf::atom("contains")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

struct node {
    long value;
    std::unique_ptr<node> next;
};

struct list_state {
    std::unique_ptr<node> head;
    long length = 0;
    long workers_left = 0;
    ~list_state() {
        while (head) head = std::move(head->next);
    }
};

caf::behavior list_actor(caf::stateful_actor<list_state>* self, long workers, long* final_length) {
    self->state.workers_left = workers;
    return {[=](size_atom) { return self->state.length; },
            [=](write_atom, long v) {
                std::unique_ptr<node>* at = &self->state.head;
                while (*at && (*at)->value < v) at = &(*at)->next;
                *at = std::unique_ptr<node>(new node{v, std::move(*at)});
                ++self->state.length;
                return v;
            },
            [=](contains_atom, long v) {
                for (const node* n = self->state.head.get(); n != nullptr && n->value <= v;
                     n = n->next.get())
                    if (n->value == v) return 1L;
                return 0L;
            },
            [=](done_atom) {
                if (--self->state.workers_left > 0) return;
                *final_length = self->state.length;
                self->quit();
            }};
}

struct worker_state {
    savina::lcg rng{0};
    long left = 0, replies = 0;
};

caf::behavior worker(caf::stateful_actor<worker_state>* self, caf::actor target, long id, long m,
                     std::atomic<long>* replies) {
    self->state.rng = savina::lcg{static_cast<std::uint64_t>(id + 7)};
    self->state.left = m;
    auto next = [=] {
        auto& rng = self->state.rng;
        const long r = rng.below(100);
        const long v = rng.below(100'000);
        if (r < 1) self->send(target, size_atom::value);
        else if (r < 11) self->send(target, write_atom::value, v);
        else self->send(target, contains_atom::value, v);
    };
    next();
    return {[=](long) {
        ++self->state.replies;
        if (--self->state.left > 0) {
            next();
            return;
        }
        replies->fetch_add(self->state.replies);
        self->send(target, done_atom::value);
        self->quit();
    }};
}

SAVINA_BENCH(concsll) {
    const long workers = info.size("workers_n", 20, 20);
    const long m = info.size("m", 1'500, 200);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    long final_length = 0;
    std::atomic<long> replies{0};
    bench::stopwatch t;
    {
        auto list = system.spawn(list_actor, workers, &final_length);
        for (long i = 0; i < workers; ++i) system.spawn(worker, list, i, m, &replies);
    }
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(replies.load()) * 1'000'003 +
                             static_cast<std::uint64_t>(final_length)};
}

}  // namespace savina_concsll
