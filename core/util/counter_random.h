#pragma once
// Sluice's counter-based random numbers, in one place: every random stream (shuffle orders,
// global_shuffle's permutation, the map functions' per-element draws, weight initializers,
// Dropout masks on CPU and GPU, synthetic datasets) is a pure function of a seed and counters,
// so that it is the same on every machine, thread count and chunking, and a resumed run draws
// what an uninterrupted one drew. std:: engines and distributions are not used for this: their
// results differ between standard libraries.
//
// Two mixers: SplitMix64's finalizer (Steele, Lea & Flood 2014) for the streams and hashes, and
// MurmurHash3's fmix64 for the synthetic datasets' draws (kept so that `sluice gen` writes the
// same files it always wrote). Header-only and constexpr, callable from CUDA device code.

#include <cstdint>

#if defined(__CUDACC__)
#define SLUICE_HOST_DEVICE __host__ __device__
#else
#define SLUICE_HOST_DEVICE
#endif

namespace sluice::random {

inline constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ull; // 2^64 / golden ratio: SplitMix64's step
inline constexpr std::uint64_t kMix1 = 0xbf58476d1ce4e5b9ull, kMix2 = 0x94d049bb133111ebull;
inline constexpr std::uint64_t kSecond = 0x632be59bd9b4e019ull; // offsets a second word from the first

// SplitMix64's output function: a bijection of 64-bit words with full avalanche.
SLUICE_HOST_DEVICE constexpr std::uint64_t splitMixFinal(std::uint64_t z)
{
    z = (z ^ (z >> 30)) * kMix1;
    z = (z ^ (z >> 27)) * kMix2;
    return z ^ (z >> 31);
}

// The SplitMix64 value at counter x: what a generator seeded with x gives first.
SLUICE_HOST_DEVICE constexpr std::uint64_t splitMixAt(std::uint64_t x) { return splitMixFinal(x + kGolden); }

// A hash of two words, for keys like (seed, step), (row key, column).
SLUICE_HOST_DEVICE constexpr std::uint64_t mixHash(std::uint64_t a, std::uint64_t b)
{
    return splitMixFinal(splitMixFinal(a + kGolden) ^ (b + kSecond));
}

// A hash of three words (the map functions' per-element draws: seed, element, feature).
SLUICE_HOST_DEVICE constexpr std::uint64_t hash3(std::uint64_t a, std::uint64_t b, std::uint64_t c)
{
    return splitMixFinal(a * kGolden ^ (b + kSecond) * kMix1 ^ c * kMix2);
}

// A hash of two words that weighs their order (boost's hash_combine, then mixed): a shuffle
// buffer's draw from (seed, epoch).
SLUICE_HOST_DEVICE constexpr std::uint64_t combine(std::uint64_t a, std::uint64_t b)
{
    return splitMixFinal(a ^ (b + kGolden + (a << 6) + (a >> 2)));
}

// MurmurHash3's fmix64.
SLUICE_HOST_DEVICE constexpr std::uint64_t murmurFinal(std::uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

// One 64-bit draw per (seed, stream, index): the synthetic datasets' generator.
SLUICE_HOST_DEVICE constexpr std::uint64_t draw(std::uint64_t seed, std::uint64_t stream, std::uint64_t index)
{
    return murmurFinal(murmurFinal(seed ^ (stream * kGolden)) ^ (index * 0xd6e8feb86659fd93ull) ^ kSecond);
}

// A uniform double in [0, 1) from 53 bits of a draw.
SLUICE_HOST_DEVICE constexpr double unitInterval(std::uint64_t bits) { return double(bits >> 11) * 0x1.0p-53; }

// A SplitMix64 stream: the state is the counter.
class SplitMix64
{
public:
    constexpr explicit SplitMix64(std::uint64_t seed) : m_state(seed) {}
    constexpr std::uint64_t next() { return splitMixFinal(m_state += kGolden); }
    // Uniform in [0, n), Lemire's multiply-shift: no division, and uniform enough for n far
    // below 2^64.
    std::uint64_t below(std::uint64_t n)
    {
        __extension__ using U128 = unsigned __int128;
        return std::uint64_t(U128(next()) * n >> 64);
    }
    constexpr std::uint64_t state() const { return m_state; }

private:
    std::uint64_t m_state;
};

} // namespace sluice::random
