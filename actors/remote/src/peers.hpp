#pragma once
// Internal: what this rank knows of the other ranks' lives (rank_end.cpp
// has the protocol). No MPI.
//
// Invariants:
//   - A rank's state goes once from running (-1) to ended (the number of
//     collectives it entered, >= 0) and never back.
//   - Stores and loads are seq_cst: a sender (ask, lookup) that registers
//     what it awaits and then finds the rank running is seen by the
//     goodbye's scan, which runs after the store (a Dekker pair).
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "troupe/remote/errors.hpp"

namespace troupe::remote::detail {

class peer_states {
public:
    /// `rank`: this rank; `size`: the ranks of the job.
    peer_states(int rank, int size)
        : rank_(rank), size_(size), ended_(new std::atomic<std::int64_t>[std::size_t(size)]) {
        for (int r = 0; r < size; ++r) ended_[std::size_t(r)].store(-1);
    }

    /// Whether rank `r` has said goodbye.
    bool ended(int r) const noexcept {
        return ended_[static_cast<std::size_t>(r)].load(std::memory_order_seq_cst) >= 0;
    }
    /// Rank `r` said goodbye after entering `collectives` collectives.
    void set_ended(int r, std::uint64_t collectives) noexcept {
        ended_[static_cast<std::size_t>(r)].store(static_cast<std::int64_t>(collectives),
                                                  std::memory_order_seq_cst);
    }
    /// A rank that ended without entering collective `k`, or -1.
    int collective_blocked(std::uint64_t k) const noexcept {
        for (int r = 0; r < size_; ++r) {
            const std::int64_t n = ended_[std::size_t(r)].load(std::memory_order_seq_cst);
            if (n >= 0 && static_cast<std::uint64_t>(n) < k) return r;
        }
        return -1;
    }
    /// The error for `what` (e.g. "ask \"bank.deposit\"") needing ended rank `r`.
    rank_lost lost_error(int r, const std::string& what) const {
        return rank_lost(r, rank_lost::reason::ended,
                         "troupe::remote: rank " + std::to_string(rank_) + ": " + what +
                             " needs rank " + std::to_string(r) +
                             ", which has ended (its world was destroyed: it returned from main, "
                             "early or late, or unwound); it answers no more");
    }

private:
    const int rank_, size_;
    std::unique_ptr<std::atomic<std::int64_t>[]> ended_;
};

}  // namespace troupe::remote::detail
