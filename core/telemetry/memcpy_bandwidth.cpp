#include "telemetry/memcpy_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace sluice {

double measureMemcpyBandwidth(std::uint64_t bufferBytes, double seconds)
{
    std::vector<char> a(bufferBytes, 1), b(bufferBytes, 2); // written once, so pages are resident
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    double best = 0;
    int reps = 0;
    do {
        const auto t0 = Clock::now();
        std::memcpy(b.data(), a.data(), bufferBytes);
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        best = std::max(best, double(bufferBytes) / s);
        std::swap(a, b); // keep the compiler from dropping copies
        ++reps;
    } while (reps < 3 || Clock::now() < deadline);
    return best;
}

} // namespace sluice
