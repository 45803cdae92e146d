// A small chat server: each line a client sends goes to every other client.
// It mixes the modules:
//  - io: a listener, and a user thread per client (io::serve) parked on its
//    socket;
//  - waituntil: each client's thread waits, in one statement, for its
//    socket (a line from the client), its own mailbox channel (a line from
//    someone else, to write out) and an idle timeout;
//  - channels: the mailboxes;
//  - actors: the room, which keeps the members and fans lines out (a
//    behaviour never blocks: it try_inserts into the mailboxes, and a client
//    too slow to empty its mailbox loses lines rather than stalling the room).
//
//     chat_server              a demo: three scripted clients, then stops
//     chat_server 7001         serves 0.0.0.0:7001 (try `nc localhost 7001`)
//
// The first line a client sends is its name.
//
// Output (demo):
//   alice got: * alice joined
//   alice got: * bob joined
//   alice got: bob: hi alice
//   bob got: * bob joined
//   bob got: alice: hi bob
//   carol got: * carol joined
//   carol got: idle for 300 ms: bye
//   room: 3 joined, 3 left
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "troupe/actors.hpp"
#include "troupe/channel.hpp"
#include "troupe/core.hpp"
#include "troupe/io.hpp"
#include "troupe/waituntil.hpp"

namespace io = troupe::io;
using namespace std::chrono_literals;
using mailbox = troupe::channel<std::string>;

// ---------------------------------------------------------------- the room

struct join_msg : troupe::message {
    mailbox* box;
    std::string name;
    join_msg(mailbox* b, std::string n)
        : troupe::message(troupe::Delete), box(b), name(std::move(n)) {}
};
struct say_msg : troupe::message {
    mailbox* from;
    std::string line;
    say_msg(mailbox* f, std::string l)
        : troupe::message(troupe::Delete), from(f), line(std::move(l)) {}
};
// A request: the leaver waits for the reply, so the room never touches its
// mailbox after it is gone.
struct leave_msg : troupe::request<int> {
    mailbox* box;
    explicit leave_msg(mailbox* b) : box(b) {}
};

struct room : troupe::actor {
    std::vector<mailbox*> members;
    int joined = 0, left = 0;

    void broadcast(const mailbox* except, const std::string& line) {
        for (mailbox* m : members)
            if (m != except) (void)m->try_insert(line);  // full: that client loses the line
    }
    troupe::allocation receive(join_msg& j) {
        members.push_back(j.box);
        broadcast(nullptr, "* " + j.name + " joined\n");  // the joiner too: its welcome
        ++joined;
        return troupe::Nodelete;
    }
    troupe::allocation receive(say_msg& s) {
        broadcast(s.from, s.line);
        return troupe::Nodelete;
    }
    troupe::allocation receive(leave_msg& l) {
        members.erase(std::remove(members.begin(), members.end(), l.box), members.end());
        ++left;
        l.reply(left);
        return troupe::Nodelete;
    }
};

// ----------------------------------------------------- one client's thread

void client_session(io::connection& c, room& r, std::chrono::milliseconds idle) {
    mailbox box{64, "mailbox"};
    std::string name, pending, out;
    char buf[512];
    bool open = true, joined = false;
    while (open) {
        troupe::waituntil(
            // The client wrote: split into lines; the first is its name.
            troupe::on(c.read_some(buf),
                       [&](std::size_t n) {
                           if (n == 0) {
                               open = false;
                               return;
                           }
                           pending.append(buf, n);
                           for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
                               std::string line = pending.substr(0, nl);
                               pending.erase(0, nl + 1);
                               if (!joined) {
                                   name = line;
                                   joined = true;
                                   r | *new join_msg(&box, name);
                               } else {
                                   r | *new say_msg(&box, name + ": " + line + "\n");
                               }
                           }
                       }) |
            // Someone else said something: write it to this client.
            troupe::on(box.remove_into(out), [&] { c.write_all(out); }) |
            // Nothing either way for too long: say so and hang up.
            troupe::on(troupe::timeout(idle), [&] {
                c.write_all("idle for " + std::to_string(idle.count()) + " ms: bye\n");
                open = false;
            }));
    }
    if (joined) {
        leave_msg l{&box};
        (void)troupe::ask(r, l).get();  // after this the room has forgotten `box`
    }
}

// ------------------------------------------------------------ demo clients

// A scripted client: say a line, wait for the next line.
struct client {
    std::string name;
    io::connection c;
    std::string pending;
    std::vector<std::string>* log;

    client(const io::address& at, std::string n, std::vector<std::string>& l)
        : name(std::move(n)), c(io::connection::connect(at)), log(&l) {
        say(name);
    }
    void say(const std::string& line) { c.write_all(line + "\n"); }
    std::string next() {
        char buf[256];
        for (;;) {
            if (auto nl = pending.find('\n'); nl != std::string::npos) {
                std::string line = pending.substr(0, nl);
                pending.erase(0, nl + 1);
                log->push_back(name + " got: " + line);
                return line;
            }
            const std::size_t n = c.read_some(buf, sizeof buf, 10s);
            if (n == 0) return "(hung up)";
            pending.append(buf, n);
        }
    }
};

int main(int argc, char** argv) {
    troupe::actor_system actors{1};
    room r;
    if (argc > 1) {
        auto ln =
            io::listener::listen(io::address::ip("0.0.0.0", std::uint16_t(std::atoi(argv[1]))));
        std::printf("chat server on %s\n", ln.local().to_string().c_str());
        io::serve(ln, [&](io::connection& c) { client_session(c, r, 5min); });
        return 0;
    }
    auto ln = io::listener::listen(io::address::parse("127.0.0.1:0"));
    const auto at = ln.local();
    troupe::thread server{
        [&] { io::serve(ln, [&](io::connection& c) { client_session(c, r, 300ms); }); }};

    // Each step waits for the line that proves the previous one happened,
    // so the conversation is the same in every run.
    std::vector<std::string> a_log, b_log, c_log;
    troupe::future<int> alice_in;
    troupe::thread alice{[&] {
        client a{at, "alice", a_log};
        a.next();  // * alice joined
        alice_in.fulfil(1);
        a.next();  // * bob joined
        a.say("hi bob");
        a.next();  // bob: hi alice
    }};
    troupe::thread bob{[&] {
        alice_in.get();
        client b{at, "bob", b_log};
        b.next();  // * bob joined
        b.next();  // alice: hi bob
        b.say("hi alice");
    }};
    alice.join();
    bob.join();
    troupe::thread carol{[&] {
        client c{at, "carol", c_log};
        c.next();  // * carol joined
        c.next();  // silent for 300 ms: the server says bye
    }};
    carol.join();
    ln.close();
    server.join();
    for (auto* log : {&a_log, &b_log, &c_log})
        for (auto& line : *log) std::printf("%s\n", line.c_str());
    r | troupe::finished_msg;
    actors.stop();
    std::printf("room: %d joined, %d left\n", r.joined, r.left);
    return 0;
}
