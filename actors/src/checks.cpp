// Checked builds: sends to ended actors, deliveries to ended actors,
// messages destroyed unsent.
#include <array>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "executor.hpp"
#include "troupe/config.hpp"
#include "troupe/error.hpp"

namespace troupe::detail {

#if defined(TROUPE_CHECKED)

namespace {

// The record's nodes come from malloc, not operator new: the record is
// checked-build diagnostic state that outlives every actor system by design
// (an entry stays until a new actor is built at its address), so the
// tests' per-test leak check (tests/support/leak_check.hpp), which counts
// operator new blocks, must not charge its entries to the test that ended
// the actor.
template <class T>
struct record_allocator {
    using value_type = T;
    record_allocator() noexcept = default;
    template <class U>
    record_allocator(const record_allocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        if (void* p = std::malloc(n * sizeof(T))) return static_cast<T*>(p);
        throw std::bad_alloc{};
    }
    void deallocate(T* p, std::size_t) noexcept { std::free(p); }
    friend bool operator==(const record_allocator&, const record_allocator&) noexcept {
        return true;
    }
};

// Ended actors by address, so a late send is caught without touching the
// (possibly freed) actor. An address leaves the record when a new actor is
// constructed there.
struct ended_record {
    struct entry {
        allocation how;
        const executor* ex;
    };
    struct shard {
        std::mutex m;
        std::unordered_map<const void*, entry, std::hash<const void*>, std::equal_to<const void*>,
                           record_allocator<std::pair<const void* const, entry>>>
            map;
    };
    std::array<shard, 64> shards;
    std::atomic<std::size_t> count{0};

    shard& of(const void* p) {
        return shards[(reinterpret_cast<std::uintptr_t>(p) >> 4) % shards.size()];
    }
};

ended_record& record() {
    // Never destroyed, so it outlives every static actor; in static storage
    // rather than on the heap (not counted by the tests' leak check).
    alignas(ended_record) static unsigned char storage[sizeof(ended_record)];
    static ended_record* r = ::new (static_cast<void*>(storage)) ended_record;
    return *r;
}

const char* ended_how(allocation how) {
    switch (how) {
    case Delete: return "been deleted";
    case Destroy: return "been destroyed";
    default: return "finished";
    }
}

std::string q(std::string_view s) { return "'" + std::string{s} + "'"; }

}  // namespace

void note_ended(const actor* a, allocation how, const executor* ex) {
    auto& r = record();
    auto& s = r.of(a);
    std::lock_guard g{s.m};
    if (s.map.insert_or_assign(a, ended_record::entry{how, ex}).second)
        r.count.fetch_add(1, std::memory_order_relaxed);
}

void forget_ended(const actor* a) {
    auto& r = record();
    if (r.count.load(std::memory_order_relaxed) == 0) return;
    auto& s = r.of(a);
    std::lock_guard g{s.m};
    if (s.map.erase(a)) r.count.fetch_sub(1, std::memory_order_relaxed);
}

namespace {
bool lookup(const void* a, allocation& how) {
    auto& r = record();
    if (r.count.load(std::memory_order_relaxed) == 0) return false;
    auto& s = r.of(a);
    std::lock_guard g{s.m};
    auto it = s.map.find(a);
    if (it == s.map.end()) return false;
    how = it->second.how;
    return true;
}
}  // namespace

bool check_send(actor& a, message& m, const dispatch_names& names) noexcept {
    allocation how;
    if (lookup(&a, how)) {
        send_access::mark_sent(m);
        if (names.quiet_drop) return false;  // expected: counted by its sender
        report_misuse(describe("actor", user_type_name(names.actor).c_str(), &a) +
                          ": sent message " + q(user_type_name(names.message)) + " after it had " +
                          ended_how(how) + "; dropped",
                      misuse_kind::lost_message);
        send_access::mark_sent(m);  // reported here: no "destroyed unsent" follow-up
        return false;
    }
    if (worker_access::unattached(a)) {
        report_misuse(describe("actor", user_type_name(names.actor).c_str(), &a) +
                          ": sent message " + q(user_type_name(names.message)) +
                          " but it was created with no running actor system; dropped",
                      misuse_kind::lost_message);
        send_access::mark_sent(m);
        return false;
    }
    // relaxed: only its own destructor reads it, after the last receive.
    send_access::note_queued(m, names);
    return true;
}

bool check_delivery(const envelope& e) noexcept {
    allocation how;
    if (!lookup(e.receiver, how)) return true;
    if (e.names->quiet_drop) return false;  // expected: counted by its sender
    report_misuse(describe("actor", user_type_name(e.names->actor).c_str(), e.receiver) +
                      ": message " + q(user_type_name(e.names->message)) +
                      " (queued before it ended) delivered after it had " + ended_how(how) +
                      "; dropped",
                  misuse_kind::lost_message);
    return false;
}

#endif  // TROUPE_CHECKED

void message_destroyed_queued(const message& m, const dispatch_names* to,
                              std::int32_t pending) noexcept {
    const std::string type =
        to ? user_type_name(to->message) : class_of_constructor(m.origin().function_name());
    const std::string actor = to ? user_type_name(to->actor) : std::string{"?"};
    report_misuse(describe("message", type.c_str(), &m) +
                      ": destroyed while still queued for actor '" + actor + "' (" +
                      std::to_string(pending) +
                      " delivery(ies) pending; the receive would read a destroyed object). A "
                      "message sent by reference must outlive its receive: send a value with "
                      "troupe::send<" +
                      type + ">(actor, ...) instead (e.g. in a loop body)",
                  misuse_kind::error);
}

void message_destroyed_unsent(const message& m) noexcept {
    const std::string type = class_of_constructor(m.origin().function_name());
    report_misuse(describe("message", type.c_str(), &m) + ": destroyed without ever being sent",
                  misuse_kind::lost_message);
}

}  // namespace troupe::detail
