#pragma once
// Ids with Zipf-like popularity, as in real interaction logs (a few users and items take most
// rows), for synthetic data (`sluice gen interactions`) and benchmarks (`sluice bench train
// --ids-zipf`): a popularity rank drawn from a bounded power law, then a seeded bijection from
// ranks to ids, so that popular ids are spread over the whole range rather than being the
// smallest ones. O(1) in time and memory whatever the number of ids.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

namespace sluice {

// Popularity rank 0 … n-1 with P(rank k) ≈ ∝ (k + 1)^-s (s != 1), from a uniform u in [0, 1):
// the inverse distribution function of a bounded power law.
inline std::uint64_t zipfRank(std::uint64_t n, double s, double u)
{
    const double a = 1 - s;
    const double x = std::pow(1 + u * (std::pow(double(n) + 1, a) - 1), 1 / a);
    return std::min<std::uint64_t>(n - 1, std::uint64_t(std::max(1.0, x)) - 1);
}

// A bijection of 0 … n-1 (rank · multiplier + offset mod n, the multiplier coprime with n) drawn
// from two random 64-bit values: no table. n must stay below 2^32 so that products fit.
struct IdPermutation
{
    std::uint64_t n = 1, multiplier = 0, offset = 0;

    IdPermutation(std::uint64_t randomA, std::uint64_t randomB, std::uint64_t count) : n(count)
    {
        if (n < 2)
            return;
        multiplier = 1 + randomA % (n - 1);
        while (std::gcd(multiplier, n) != 1)
            multiplier = multiplier % (n - 1) + 1; // reaches 1, coprime with everything, at worst
        offset = randomB % n;
    }
    std::uint64_t operator()(std::uint64_t rank) const { return (rank * multiplier + offset) % n; }
};

} // namespace sluice
