// The default processor / worker count: affinity mask, cgroup CPU quota,
// environment override.
#include <sched.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "troupe/knobs.hpp"
#include "troupe/topology.hpp"

namespace troupe {

namespace {

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// v2 `cpu.max`: "max 100000" (unlimited) or "<quota> <period>".
std::optional<double> v2_limit(const std::string& dir) {
    auto text = read_file(dir + "/cpu.max");
    if (!text) return std::nullopt;
    std::istringstream in(*text);
    std::string quota;
    double period = 0;
    if (!(in >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
    char* end = nullptr;
    const double q = std::strtod(quota.c_str(), &end);
    if (end == quota.c_str() || q <= 0) return std::nullopt;
    return q / period;
}

// v1: cpu.cfs_quota_us (-1: unlimited) over cpu.cfs_period_us.
std::optional<double> v1_limit(const std::string& dir) {
    auto q = read_file(dir + "/cpu.cfs_quota_us");
    auto p = read_file(dir + "/cpu.cfs_period_us");
    if (!q || !p) return std::nullopt;
    const double quota = std::strtod(q->c_str(), nullptr),
                 period = std::strtod(p->c_str(), nullptr);
    if (quota <= 0 || period <= 0) return std::nullopt;
    return quota / period;
}

// The smallest limit from `root + path` up to `root`.
template <class Limit>
std::optional<double> smallest_along(const std::string& root, std::string path, Limit limit) {
    std::optional<double> best;
    for (;;) {
        while (path.size() > 1 && path.back() == '/') path.pop_back();
        const std::string dir = path == "/" || path.empty() ? root : root + path;
        if (auto l = limit(dir); l && (!best || *l < *best)) best = l;
        if (path == "/" || path.empty()) break;
        const auto slash = path.rfind('/');
        path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
    }
    return best;
}

}  // namespace

namespace detail {

std::optional<double> cgroup_cpu_limit(std::string_view proc_self_cgroup,
                                       const std::string& root) noexcept {
    try {
        std::istringstream in{std::string(proc_self_cgroup)};
        std::string line;
        std::optional<double> best;
        auto keep = [&](std::optional<double> l) {
            if (l && (!best || *l < *best)) best = l;
        };
        while (std::getline(in, line)) {
            // hierarchy-id:controllers:path
            const auto a = line.find(':');
            const auto b = a == std::string::npos ? a : line.find(':', a + 1);
            if (b == std::string::npos) continue;
            const std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1),
                              path = line.substr(b + 1);
            if (id == "0" && controllers.empty()) {
                keep(smallest_along(root, path, v2_limit));  // unified hierarchy
                continue;
            }
            std::istringstream cs(controllers);
            std::string c;
            bool cpu = false;
            while (std::getline(cs, c, ',')) cpu = cpu || c == "cpu";
            if (!cpu) continue;
            for (const char* mount : {"/cpu,cpuacct", "/cpuacct,cpu", "/cpu"})
                if (auto l = smallest_along(root + mount, path, v1_limit)) {
                    keep(l);
                    break;
                }
        }
        return best;
    } catch (...) {
        return std::nullopt;  // out of memory while parsing: no limit known
    }
}

}  // namespace detail

std::size_t affinity_cpu_count() noexcept {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return static_cast<std::size_t>(n);
    }
    const unsigned n = std::thread::hardware_concurrency();
    return n ? n : 1;
}

std::size_t available_concurrency() noexcept {
    if (const long n = knobs::get_or(knobs::processors, 0, LONG_MAX); n > 0)
        return static_cast<std::size_t>(n);
    const std::size_t cpus = affinity_cpu_count();
    std::optional<double> limit;
    try {
        if (auto text = read_file("/proc/self/cgroup"))
            limit = detail::cgroup_cpu_limit(*text, "/sys/fs/cgroup");
    } catch (...) {}
    if (!limit) return cpus;
    const auto quota = static_cast<std::size_t>(std::ceil(*limit));
    return std::min(cpus, std::max<std::size_t>(quota, 2));
}

}  // namespace troupe
