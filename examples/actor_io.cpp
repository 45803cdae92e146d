// Actors and I/O: an actor receives what a socket reads as messages, and
// answers through a writer, without a behaviour ever waiting on the socket.
//
// io::reader reads the connection on a user thread of its own and calls a
// function per chunk: here it sends the actor a `chunk` message. The actor
// counts words and posts replies to an io::writer (post never blocks; the
// writer's own thread writes them in order).
//
// Output:
//   client got: words so far: 2
//   client got: words so far: 5
//   client got: words so far: 9
//   counter saw 9 words in 3 lines, then end of stream
#include <cstdio>
#include <string>

#include "troupe/actors.hpp"
#include "troupe/core.hpp"
#include "troupe/io.hpp"

namespace io = troupe::io;

struct chunk : troupe::message {
    std::string bytes;
    explicit chunk(std::string b) : troupe::message(troupe::Delete), bytes(std::move(b)) {}
};
struct end_of_stream : troupe::message {
    end_of_stream() : troupe::message(troupe::Delete) {}
};

struct word_counter : troupe::actor {
    io::writer* out = nullptr;
    std::string partial;
    int words = 0, lines = 0;
    bool ended = false;
    troupe::future<int> done;

    troupe::allocation receive(chunk& c) {
        partial += c.bytes;
        for (std::size_t nl; (nl = partial.find('\n')) != std::string::npos;) {
            const std::string line = partial.substr(0, nl);
            partial.erase(0, nl + 1);
            bool in_word = false;
            for (char ch : line) {
                const bool letter = ch != ' ';
                if (letter && !in_word) ++words;
                in_word = letter;
            }
            ++lines;
            out->post("words so far: " + std::to_string(words) + "\n");  // never blocks
        }
        return troupe::Nodelete;
    }
    troupe::allocation receive(end_of_stream&) {
        ended = true;
        done.fulfil(words);
        return troupe::Nodelete;
    }
};

int main() {
    troupe::actor_system actors{1};
    auto ln = io::listener::listen(io::address::parse("127.0.0.1:0"));
    auto client = io::connection::connect(ln.local());
    io::connection server = ln.accept();

    word_counter counter;
    {
        io::writer out{server};
        counter.out = &out;
        io::reader in{server,
                      [&](std::span<const std::byte> b) {
                          counter | *new chunk(std::string(reinterpret_cast<const char*>(b.data()),
                                                           b.size()));
                      },
                      [&](std::exception_ptr) { counter | *new end_of_stream(); }};

        // The client: one line at a time, reading each reply before the next.
        const char* lines[] = {"hello world\n", "three more words\n", "and four more words\n"};
        std::string reply;
        char buf[64];
        for (const char* l : lines) {
            client.write_all(l);
            reply.clear();
            while (reply.find('\n') == std::string::npos) {
                const std::size_t n = client.read_some(buf);
                if (n == 0) break;
                reply.append(buf, n);
            }
            std::printf("client got: %s", reply.c_str());
        }
        client.shutdown();   // the reader sees end of file...
        counter.done.get();  // ...and the actor its end_of_stream message
    }                        // the reader and the writer join here
    std::printf("counter saw %d words in %d lines, then %s\n", counter.words, counter.lines,
                counter.ended ? "end of stream" : "no end");
    counter | troupe::finished_msg;
    actors.stop();
}
