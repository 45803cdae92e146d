// CAF 0.17 twin of bench/savina/fjcreate.cpp: N actors, one message each.
namespace savina_fjcreate {

caf::behavior worker(caf::event_based_actor* self, std::atomic<long>* done) {
    return {[=](double theta) {
        const double s = std::sin(theta);
        done->fetch_add(s * s <= 1.0 ? 1 : 2, std::memory_order_relaxed);
        self->quit();
    }};
}

SAVINA_BENCH(fjcreate) {
    const long n = info.size("n", 500'000, 20'000);
    caf::actor_system_config cfg;
    savina::configure(cfg, info);
    caf::actor_system system{cfg};
    std::atomic<long> done{0};
    bench::stopwatch t;
    auto keeper = system.spawn(savina::keeper);
    for (long i = 0; i < n; ++i) caf::anon_send(system.spawn(worker, &done), 37.2);
    caf::anon_send(keeper, savina::stop_atom::value);
    keeper = nullptr;
    system.await_all_actors_done();
    return {t.seconds(), static_cast<std::uint64_t>(done.load())};
}

}  // namespace savina_fjcreate
