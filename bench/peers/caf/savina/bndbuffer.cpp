// CAF 0.17 twin of bench/savina/bndbuffer.cpp: P producers, C consumers, a
// manager with a buffer of B items.
namespace savina_bndbuffer {

using item_atom = caf::atom_constant<caf::atom("item")>;
using produce_atom = caf::atom_constant<caf::atom("produce")>;
using free_atom = caf::atom_constant<caf::atom("free")>;
using pexit_atom = caf::atom_constant<caf::atom("pexit")>;
using data_atom = caf::atom_constant<caf::atom("data")>;
using start_atom = caf::atom_constant<caf::atom("start")>;

struct manager_state {
    std::size_t capacity = 0, consumers = 0;
    long producers_left = 0;
    std::deque<long> pending;
    std::vector<caf::actor> held_producers, free_consumers;
};

caf::behavior manager(caf::stateful_actor<manager_state>* self, long capacity, long producers) {
    self->state.capacity = static_cast<std::size_t>(capacity);
    self->state.producers_left = producers;
    auto try_exit = [=] {
        auto& st = self->state;
        if (st.producers_left == 0 && st.free_consumers.size() == st.consumers) {
            for (auto& c : st.free_consumers) self->send(c, savina::stop_atom::value);
            st.free_consumers.clear();
            self->quit();
        }
    };
    return {[=](start_atom, std::vector<caf::actor>& consumers) {
                self->state.consumers = consumers.size();
                self->state.free_consumers = std::move(consumers);
            },
            [=](item_atom, long value, caf::actor& from) {
                auto& st = self->state;
                if (st.free_consumers.empty()) {
                    st.pending.push_back(value);
                } else {
                    self->send(st.free_consumers.back(), data_atom::value, value);
                    st.free_consumers.pop_back();
                }
                if (st.pending.size() >= st.capacity) st.held_producers.push_back(std::move(from));
                else self->send(from, produce_atom::value);
            },
            [=](free_atom, caf::actor& from) {
                auto& st = self->state;
                if (st.pending.empty()) {
                    st.free_consumers.push_back(std::move(from));
                    try_exit();
                    return;
                }
                self->send(from, data_atom::value, st.pending.front());
                st.pending.pop_front();
                if (!st.held_producers.empty()) {
                    self->send(st.held_producers.back(), produce_atom::value);
                    st.held_producers.pop_back();
                }
            },
            [=](pexit_atom) {
                --self->state.producers_left;
                try_exit();
            }};
}

struct producer_state {
    long made = 0;
};

caf::behavior producer(caf::stateful_actor<producer_state>* self, caf::actor mgr, long id,
                       long items) {
    return {[=](produce_atom) {
        auto& st = self->state;
        if (st.made == items) {
            self->send(mgr, pexit_atom::value);
            self->quit();
            return;
        }
        self->send(mgr, item_atom::value, id * items + st.made, caf::actor_cast<caf::actor>(self));
        ++st.made;
    }};
}

caf::behavior consumer(caf::stateful_actor<producer_state>* self, caf::actor mgr,
                       std::atomic<long>* total) {
    return {[=](data_atom, long v) {
                self->state.made += v;
                self->send(mgr, free_atom::value, caf::actor_cast<caf::actor>(self));
            },
            [=](savina::stop_atom) {
                total->fetch_add(self->state.made);
                self->quit();
            }};
}

SAVINA_BENCH(bndbuffer) {
    const long producers = info.size("producers", 40, 10);
    const long consumers = info.size("consumers", 40, 10);
    const long items = info.size("items", 5'000, 1'000);
    const long capacity = info.size("capacity", 50, 50);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::atomic<long> total{0};
    bench::stopwatch t;
    {
        auto mgr = system.spawn(manager, capacity, producers);
        std::vector<caf::actor> cs;
        for (long i = 0; i < consumers; ++i) cs.push_back(system.spawn(consumer, mgr, &total));
        caf::anon_send(mgr, start_atom::value, std::move(cs));
        for (long i = 0; i < producers; ++i)
            caf::anon_send(system.spawn(producer, mgr, i, items), produce_atom::value);
    }
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(total.load())};
}

}  // namespace savina_bndbuffer
