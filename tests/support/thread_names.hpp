#pragma once
// The kernel threads of this process by name (Linux: /proc/self/task/*/comm),
// as `top -H` and gdb show them: name -> how many threads carry it.
#include <dirent.h>

#include <fstream>
#include <map>
#include <string>

namespace troupe_test {

inline std::map<std::string, int> thread_names() {
    std::map<std::string, int> names;
    DIR* d = ::opendir("/proc/self/task");
    if (d == nullptr) return names;
    while (const dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream comm{std::string{"/proc/self/task/"} + e->d_name + "/comm"};
        std::string name;
        if (std::getline(comm, name)) ++names[name];  // a thread that ended meanwhile: skipped
    }
    ::closedir(d);
    return names;
}

/// How many more threads carry `name` in `after` than in `before` (two
/// snapshots of thread_names()).
inline int threads_added(const std::map<std::string, int>& before,
                         const std::map<std::string, int>& after, const std::string& name) {
    const auto b = before.find(name);
    const auto a = after.find(name);
    return (a == after.end() ? 0 : a->second) - (b == before.end() ? 0 : b->second);
}

}  // namespace troupe_test
