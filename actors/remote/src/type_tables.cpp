// Process-wide tables filled during static initialisation (before main,
// before any world exists) and read-only afterwards: message names, and how
// each (actor type, message name) pair is delivered.
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "troupe/remote/message.hpp"
#include "type_tables.hpp"

namespace troupe::remote::detail {

namespace {

std::uint64_t pair_key(std::uint64_t actor_key, std::uint64_t msg_key) noexcept {
    return actor_key ^ (msg_key * 0x9e3779b97f4a7c15ull);
}

struct tables {
    std::mutex m;  // registrations may run from several threads (dlopen)
    std::unordered_map<std::uint64_t, pair_info> pairs;
    std::map<std::string, std::string, std::less<>> names;  // name -> type
    std::vector<std::string> conflicts;
};

tables& the_tables() {
    static tables* t = new tables;  // outlives every static registrar
    return *t;
}

}  // namespace

bool register_pair(std::string_view actor_type, std::string_view msg_name, deliver_fn fn) noexcept {
    tables& t = the_tables();
    std::lock_guard g{t.m};
    t.pairs.try_emplace(pair_key(name_key(actor_type), name_key(msg_name)),
                        pair_info{std::string{actor_type}, std::string{msg_name}, fn});
    return true;
}

const pair_info* find_pair(std::uint64_t actor_key, std::uint64_t msg_key) noexcept {
    // Read-only once main runs: no lock.
    tables& t = the_tables();
    auto it = t.pairs.find(pair_key(actor_key, msg_key));
    return it == t.pairs.end() ? nullptr : &it->second;
}

bool register_message_name(std::string_view name, std::string_view type) noexcept {
    tables& t = the_tables();
    std::lock_guard g{t.m};
    auto [it, fresh] = t.names.try_emplace(std::string{name}, std::string{type});
    if (!fresh && it->second != type)
        t.conflicts.push_back("message name \"" + std::string{name} +
                              "\" is registered for two types: " + it->second + " and " +
                              std::string{type});
    return true;
}

const std::string* registered_type(std::string_view name) noexcept {
    tables& t = the_tables();
    auto it = t.names.find(name);
    return it == t.names.end() ? nullptr : &it->second;
}

std::vector<std::string> name_conflicts() {
    tables& t = the_tables();
    std::lock_guard g{t.m};
    return t.conflicts;
}

}  // namespace troupe::remote::detail
