/* experiments/refbench/driver_util.h — what the two timing drivers (pbd_bend.cpp, fms.cpp)
 * share: a number from the command line or exit 2 naming the flag, the wall clock in
 * milliseconds, and the median of a set of timings. Header only: each driver is its own
 * program, compiled by run.sh with one reference implementation. */
#ifndef CB_REFBENCH_DRIVER_UTIL_H
#define CB_REFBENCH_DRIVER_UTIL_H

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace refbench {

/* The value of `flag`, a finite number, or a message "<prog>: <flag>: not a number" and exit 2. */
inline double parse_num(const char *prog, const char *flag, const char *s)
{
    char *end = nullptr;
    double v = std::strtod(s, &end);
    if (!s[0] || *end || !std::isfinite(v)) {
        std::fprintf(stderr, "%s: %s: not a number: '%s'\n", prog, flag, s);
        std::exit(2);
    }
    return v;
}

inline double now_ms()
{
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

/* Sorts v and returns its median (v not empty). */
inline double sorted_median(std::vector<double> &v)
{
    std::sort(v.begin(), v.end());
    const size_t m = v.size();
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

} // namespace refbench

#endif
