#pragma once
/// What an actor system does when an exception escapes a behaviour and no
/// requester takes it (see "Exceptions escaping a behaviour" in
/// troupe/actor.hpp).
///
///     troupe::actor_system_config cfg;
///     cfg.on_behaviour_exception = [](const troupe::behaviour_exception& e) {
///         log(e.actor_type, e.message_type, e.what);
///         return troupe::Nodelete;            // keep the actor running
///     };
///     troupe::actor_system sys{cfg};
///
/// The handler runs on the worker that ran the behaviour, inside the
/// exception's handling (std::current_exception() is `error`), before the
/// message's allocation action. It returns what happens to the actor, as a
/// behaviour would: `Nodelete` keeps it receiving, `Finished` ends it,
/// `Delete`/`Destroy` also free it (only if you know how it was allocated).
/// It must not throw (std::terminate) and should not block.
#include <exception>
#include <functional>
#include <string>

#include "troupe/allocation.hpp"

namespace troupe {

class actor;

/// An exception that escaped a behaviour.
struct behaviour_exception {
    /// The actor whose behaviour threw (alive while the handler runs).
    actor& receiver;
    /// The actor's and the message's static types, as the sender wrote
    /// them ("account", "deposit").
    std::string actor_type;
    std::string message_type;
    /// The exception's type ("std::runtime_error") and its what() (empty if
    /// it is not a std::exception).
    std::string exception_type;
    std::string what;
    /// The exception itself.
    std::exception_ptr error;
};

/// Decides what happens to the actor; see above.
using behaviour_exception_handler = std::function<allocation(const behaviour_exception&)>;

/// The default handler: prints
/// "troupe: actor 'account' (0x...): receive of 'deposit' threw std::runtime_error: overdrawn; the
/// actor is terminated (as if it returned Finished)" on stderr and returns `Finished`. Nothrow.
allocation default_behaviour_exception_handler(const behaviour_exception& e) noexcept;

}  // namespace troupe
