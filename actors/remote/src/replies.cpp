// Shipping replies to requests received from other ranks. A reply is
// encoded on the progress pass that finds its future fulfilled; if the
// unsent batch for its rank has no room for it (one batch is one MPI
// message, at most the batch limit; a large direct send still in flight
// keeps later frames in the batch), it is held, whole, until a later pass
// has posted that batch: a reply is never dropped for want of room, and
// the asker never waits for a reply that was lost.
#include <cstdio>

#include "engine.hpp"

namespace troupe::remote::detail {

namespace {
// The error record for the exception being handled: a behaviour's, as
// recorded on its worker thread (captured_error), or one thrown encoding
// the value.
reply_error_record describe_current() {
    reply_error_record e;
    e.code = error_code::behaviour_threw;
    try {
        throw;
    } catch (const captured_error& c) {
        e.type = c.type;
        e.what = c.what;
    } catch (...) {
        describe_current_exception(e.type, e.what);
    }
    return e;
}
}  // namespace

bool engine::scan_replies() {
    bool did = false;
    pending_reply** pp = &replies_;
    while (pending_reply* p = *pp) {
        // `sat`: the future's fulfil claimed our node (try_claim), so the
        // value or exception is stored.
        if (p->status.load(std::memory_order_acquire) != std::uintptr_t(select_status::sat)) {
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        // Takes the future's lock: the fulfiller's commit (its last touch of
        // the node while we are awake) is over when this returns.
        p->reply_future().unregister_select(p->node);
        byte_buffer& b = scratch();
        try {
            begin_frame(b, frame_kind::reply_value, p->message_name(), name_key(p->message_name()),
                        p->token, 0);
            byte_writer w{b};
            p->encode_value(w);
            end_frame(b);
        } catch (...) {
            const reply_error_record e = describe_current();
            begin_frame(b, frame_kind::reply_error, p->message_name(), name_key(p->message_name()),
                        p->token, 0);
            byte_writer w{b};
            put_reply_error(w, e);
            end_frame(b);
        }
        // Shipped now, or (the batch for that rank is full, or replies wait
        // before it) kept whole until a later pass has room: never dropped.
        // Counted in pending_replies until it is in the outbox.
        ship_reply(p->from, b);
        p->recycle();
        did = true;
    }
    return did;
}

void engine::ship_reply(int to, byte_buffer& frame) noexcept {
    std::size_t queued = 0;
    bool shipped = false;
    bool behind = false;  // replies to `to` are held: this one goes after them
    for (const held_reply& h : held_replies_) behind |= h.to == to;
    if (!behind) {
        try {
            shipped = out_.ship_or_full(to, frame, queued);
        } catch (const rank_lost&) {
            // The asker's rank has ended: nobody waits for the reply.
            pending_replies.fetch_sub(1, std::memory_order_seq_cst);
            return;
        } catch (const std::exception& e) {
            // std::bad_alloc growing the outbox (a bad rank cannot happen:
            // `to` sent us the request). Reported; the asker's future is
            // not answered, as for a reply that cannot be built.
            report(to, "", std::string{"troupe::remote: could not send a reply: "} + e.what());
            pending_replies.fetch_sub(1, std::memory_order_seq_cst);
            return;
        }
    }
    if (shipped) {
        // After the reply is in the outbox: a termination round sees one.
        pending_replies.fetch_sub(1, std::memory_order_seq_cst);
        return;
    }
    try {
        held_replies_.push_back(held_reply{to, std::move(frame)});  // takes the buffer
    } catch (const std::bad_alloc&) {
        report(to, "", "troupe::remote: could not hold a reply (out of memory)");
        pending_replies.fetch_sub(1, std::memory_order_seq_cst);
        return;
    }
    held_count_.store(held_replies_.size(), std::memory_order_seq_cst);
}

bool engine::ship_held_replies() noexcept {
    // In order per rank: once one reply to a rank still does not fit, the
    // later ones to that rank wait behind it (replies to other ranks go).
    std::size_t keep = 0;
    bool did = false;
    for (std::size_t i = 0; i < held_replies_.size(); ++i) {
        held_reply& h = held_replies_[i];
        bool blocked = false;
        for (std::size_t k = 0; k < keep; ++k) blocked |= held_replies_[k].to == h.to;
        bool shipped = false;
        if (!blocked) {
            std::size_t queued = 0;
            try {
                shipped = out_.ship_or_full(h.to, h.frame, queued);
            } catch (const rank_lost&) {
                shipped = true;  // nobody waits for it any more: dropped
            } catch (const std::exception& e) {
                report(h.to, "",
                       std::string{"troupe::remote: could not send a reply: "} + e.what());
                shipped = true;  // dropped, and reported
            }
        }
        if (shipped) {
            pending_replies.fetch_sub(1, std::memory_order_seq_cst);
            did = true;
            continue;
        }
        if (keep != i) held_replies_[keep] = std::move(h);
        ++keep;
    }
    held_replies_.erase(held_replies_.begin() + static_cast<long>(keep), held_replies_.end());
    held_count_.store(keep, std::memory_order_seq_cst);
    return did;
}

}  // namespace troupe::remote::detail
