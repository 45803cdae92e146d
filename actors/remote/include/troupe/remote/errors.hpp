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

/// A message for an actor that was published and is gone: destroyed (say,
/// by a rank unwinding from an exception in main) or finished. Not the
/// network's fault and not the sender's: the receiving rank drops the
/// message and passes this to world_options::on_gone (default: one line on
/// stderr per actor, the job goes on); an ask fails with it, through the
/// asker's future.
class actor_gone : public remote_error {
public:
    actor_gone(int rank, std::string actor_name, std::string actor_type, std::string message_type,
               const std::string& what)
        : remote_error(what),
          rank_(rank),
          name_(std::move(actor_name)),
          actor_type_(std::move(actor_type)),
          message_type_(std::move(message_type)) {}
    /// The rank the actor was published on.
    int rank() const noexcept { return rank_; }
    /// The name it was published under.
    const std::string& actor_name() const noexcept { return name_; }
    /// Its type ("bank::account").
    const std::string& actor_type() const noexcept { return actor_type_; }
    /// The dropped message's registered name ("bank.deposit").
    const std::string& message_type() const noexcept { return message_type_; }

private:
    int rank_;
    std::string name_, actor_type_, message_type_;
};

/// A rank this one needed has ended: its world was destroyed (it returned
/// from main, early or late, or unwound from an exception) while this rank
/// still asked it, looked an actor up there, sent to it or waited for it
/// in a collective (barrier, stop). Every ask and lookup awaiting that rank
/// fails with it at once (through its future), later ones at once too, a
/// send to it throws it, and a barrier or stop it will never join throws
/// it. what() names the rank and what failed. Other modules build on it:
/// world_options::on_rank_lost is called with one once per lost rank.
class rank_lost : public remote_error {
public:
    /// Why the rank is lost.
    enum class reason : unsigned char {
        /// Its world was destroyed: the rank said goodbye and answers no
        /// more. (A rank that dies without that takes the job down: MPI's
        /// default error handler aborts every rank.)
        ended,
    };
    rank_lost(int rank, reason why, const std::string& what)
        : remote_error(what), rank_(rank), why_(why) {}
    /// The rank that is lost.
    int rank() const noexcept { return rank_; }
    /// Why it is lost.
    reason why() const noexcept { return why_; }

private:
    int rank_;
    reason why_;
};

/// Bad input from the network (an unknown message name, a truncated or
/// malformed frame, a message the addressed actor cannot receive). Passed to the world's error
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
