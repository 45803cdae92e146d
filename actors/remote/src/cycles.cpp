// Request cycles across ranks: probe payloads and the cycle book
// (invariants in cycles.hpp).
#include "cycles.hpp"

#include <mutex>

namespace troupe::remote::detail {

namespace {

template <class T>
void put_int(byte_writer& w, T v) {
    w.bytes(&v, sizeof v);
}

template <class T>
T get_int(byte_reader& r, const char* what) {
    T v{};
    if (r.left() < sizeof v)
        throw truncated_payload(std::string{"probe truncated before its "} + what);
    r.bytes(&v, sizeof v);
    return v;
}

void put_text(byte_writer& w, const std::string& s) {
    const auto n =
        static_cast<std::uint32_t>(s.size() < max_probe_text ? s.size() : max_probe_text);
    w.bytes(&n, sizeof n);
    w.bytes(s.data(), n);
}

std::string get_text(byte_reader& r, const char* what) {
    const auto n = get_int<std::uint32_t>(r, what);
    if (n > max_probe_text)
        throw truncated_payload(std::string{"probe's "} + what + " claims " + std::to_string(n) +
                                " byte(s), over the limit of " + std::to_string(max_probe_text));
    if (n > r.left())
        throw truncated_payload(std::string{"probe's "} + what + " claims " + std::to_string(n) +
                                " byte(s), " + std::to_string(r.left()) + " left");
    std::string s(n, '\0');
    r.bytes(s.data(), n);
    return s;
}

}  // namespace

void put_probe(byte_writer& w, const probe& p) {
    put_int(w, p.initiator);
    put_int(w, p.key);
    put_int(w, p.seq);
    put_int(w, p.base);
    put_int(w, static_cast<std::uint32_t>(p.hops.size()));
    for (const probe_hop& h : p.hops) {
        put_int(w, h.rank);
        put_int(w, h.record);
        put_int(w, h.seq);
        put_text(w, h.subject);
        put_text(w, h.behind);
        put_text(w, h.in);
        put_text(w, h.edge);
    }
}

probe get_probe(byte_reader& r) {
    probe p;
    p.initiator = get_int<std::int32_t>(r, "initiator's rank");
    p.key = get_int<std::uint64_t>(r, "initiator");
    p.seq = get_int<std::uint64_t>(r, "number");
    p.base = get_int<std::uint64_t>(r, "base");
    const auto n = get_int<std::uint32_t>(r, "hop count");
    if (n > max_probe_hops)
        throw truncated_payload("probe has " + std::to_string(n) + " hops, over the limit of " +
                                std::to_string(max_probe_hops));
    p.hops.resize(n);
    for (probe_hop& h : p.hops) {
        h.rank = get_int<std::int32_t>(r, "hop's rank");
        h.record = get_int<std::uint64_t>(r, "hop's wait");
        h.seq = get_int<std::uint32_t>(r, "hop's wait sequence");
        h.subject = get_text(r, "hop's actor");
        h.behind = get_text(r, "hop's blocked actor");
        h.in = get_text(r, "hop's behaviour");
        h.edge = get_text(r, "hop's wait");
    }
    if (r.left() != 0)
        throw truncated_payload("probe has " + std::to_string(r.left()) +
                                " byte(s) more than its hops read");
    return p;
}

std::string cycle_text(const std::vector<probe_hop>& hops) {
    if (hops.empty()) return {};
    std::string s = "request cycle across ranks: ";
    for (std::size_t k = 0; k < hops.size(); ++k) {
        const probe_hop& h = hops[k];
        if (k) s += ' ';
        s += h.subject;
        if (!h.behind.empty()) s += ", queued behind the behaviour of " + h.behind;
        s += k ? ", which " : " ";
        s += h.in + " " + h.edge;
    }
    return s + " " + hops[0].subject;
}

cycle_book::numbers cycle_book::start(std::uint64_t key, std::uint64_t record, std::uint32_t seq) {
    std::lock_guard g{lock_};
    entry& e = entries_[key];
    if (e.record != record || e.wait_seq != seq) {
        e = entry{};
        e.record = record;
        e.wait_seq = seq;
    }
    return {e.next++, e.back_seq};
}

bool cycle_book::came_back(const probe& p) {
    if (p.hops.empty()) return false;
    std::lock_guard g{lock_};
    auto it = entries_.find(p.key);
    if (it == entries_.end()) return false;
    entry& e = it->second;
    // Another wait of the initiator's since this probe left: stale.
    if (e.record != p.hops[0].record || e.wait_seq != p.hops[0].seq) return false;
    // Confirmed: the previous probe back came back before this one left,
    // and both saw the same waits.
    const bool confirms = e.back_seq != 0 && p.base == e.back_seq && e.back_hops == p.hops;
    if (p.seq > e.back_seq) {
        e.back_seq = p.seq;
        e.back_hops = p.hops;
    }
    if (!confirms) return false;
    if (e.text.empty()) ++confirmed_;
    e.text = cycle_text(p.hops);
    return true;
}

void cycle_book::forget(std::uint64_t key) noexcept {
    std::lock_guard g{lock_};
    entries_.erase(key);
}

std::vector<cycle_book::cycle> cycle_book::cycles() const {
    std::vector<cycle> v;
    std::lock_guard g{lock_};
    for (const auto& [key, e] : entries_)
        if (!e.text.empty()) v.push_back({key, e.record, e.wait_seq, e.text});
    return v;
}

std::uint64_t cycle_book::confirmed() const noexcept {
    std::lock_guard g{lock_};
    return confirmed_;
}

}  // namespace troupe::remote::detail
