#pragma once
/// Errors of troupe-remote.
///
///     try { bank.ask(q).get(); }
///     catch (const troupe::remote::remote_exception& e) {
///         // the remote behaviour threw: e.rank(), e.type_name(), e.message()
///     }
///
/// All derive from `remote_error` (a std::runtime_error), whose what() is a
/// complete sentence naming the ranks, names and types involved.
#include <stdexcept>
#include <string>
#include <utility>

namespace troupe::remote {

/// Base of every troupe-remote error.
class remote_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A behaviour on another rank threw while handling a request; delivered
/// through the asker's future. Carries the exception's dynamic type name and
/// its what() (the exception object itself cannot cross processes).
class remote_exception : public remote_error {
public:
    remote_exception(int rank, std::string type, std::string message)
        : remote_error("troupe::remote: the behaviour on rank " + std::to_string(rank) + " threw " +
                       type + ": " + message),
          rank_(rank),
          type_(std::move(type)),
          message_(std::move(message)) {}
    /// The rank whose behaviour threw.
    int rank() const noexcept { return rank_; }
    /// The thrown exception's dynamic type ("std::out_of_range").
    const std::string& type_name() const noexcept { return type_; }
    /// The thrown exception's what().
    const std::string& message() const noexcept { return message_; }

private:
    int rank_;
    std::string type_, message_;
};

/// A lookup found no actor under that name, or one of another type.
class lookup_error : public remote_error {
public:
    using remote_error::remote_error;
};

/// Bad input from the network (an unknown message name, a truncated or
/// malformed frame, a message the addressed actor cannot receive), or a
/// message for an actor that has finished. Passed to the world's error
/// handler (world_options::on_error); the frame is dropped.
class network_error : public remote_error {
public:
    network_error(int from_rank, std::string type, const std::string& what)
        : remote_error(what), rank_(from_rank), type_(std::move(type)) {}
    /// The rank the bad input came from.
    int rank() const noexcept { return rank_; }
    /// The message type name in the frame ("" if the frame did not get that far).
    const std::string& type_name() const noexcept { return type_; }

private:
    int rank_;
    std::string type_;
};

}  // namespace troupe::remote
