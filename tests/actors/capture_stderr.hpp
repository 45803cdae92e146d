#pragma once
// Captures what the process writes to stderr (file descriptor 2) while it
// lives, for tests of reports the library prints there.
#include <unistd.h>

#include <cstdio>
#include <string>

namespace troupe_test {

class capture_stderr {
public:
    capture_stderr() {
        std::fflush(stderr);
        file_ = std::tmpfile();
        saved_ = ::dup(2);
        ::dup2(::fileno(file_), 2);
    }
    ~capture_stderr() {
        restore();
        if (file_) std::fclose(file_);
    }
    capture_stderr(const capture_stderr&) = delete;

    /// Stops capturing and returns everything captured.
    std::string text() {
        restore();
        std::string s;
        std::rewind(file_);
        char buf[512];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) s.append(buf, n);
        return s;
    }

private:
    void restore() {
        if (saved_ < 0) return;
        std::fflush(stderr);
        ::dup2(saved_, 2);
        ::close(saved_);
        saved_ = -1;
    }
    std::FILE* file_ = nullptr;
    int saved_ = -1;
};

}  // namespace troupe_test
