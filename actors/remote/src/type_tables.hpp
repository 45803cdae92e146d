#pragma once
// Internal: the process-wide tables of type_tables.cpp, filled during static
// initialisation (before main, before any world exists) and read-only
// afterwards, so lookups take no lock. No MPI.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/remote/detail/engine_api.hpp"

namespace troupe::remote::detail {

/// How a message named `msg_name` reaches an actor of type `actor_type`.
struct pair_info {
    std::string actor_type, msg_name;
    deliver_fn fn;
};
/// The delivery of a message (name key `msg_key`) to an actor type (name
/// key `actor_key`), or nullptr if this program never sends that pair.
const pair_info* find_pair(std::uint64_t actor_key, std::uint64_t msg_key) noexcept;
/// The type spelling registered under message name `name`, or nullptr.
const std::string* registered_type(std::string_view name) noexcept;
/// Names registered for two different types (reported when a world starts).
std::vector<std::string> name_conflicts();

}  // namespace troupe::remote::detail
