// FarmHash Fingerprint64 and SipHash-2-4, written from their published definitions (Google's
// farmhash.cc, namespace farmhashna; Aumasson and Bernstein's SipHash paper) and checked against
// TensorFlow's to_hash_bucket_fast/strong over strings of every length branch (tests/data/categorical).
// Both read their input as little-endian words whatever the machine, as the originals do on x86.
#include "pipeline/functions/string_hash.h"

#include <cstring>
#include <utility>

namespace sluice::pipeline {
namespace {

std::uint64_t fetch64(const char *p)
{
    unsigned char b[8];
    std::memcpy(b, p, 8);
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = (v << 8) | b[i];
    return v;
}

std::uint64_t fetch32(const char *p)
{
    unsigned char b[4];
    std::memcpy(b, p, 4);
    return std::uint64_t(b[0]) | std::uint64_t(b[1]) << 8 | std::uint64_t(b[2]) << 16 | std::uint64_t(b[3]) << 24;
}

// farmhash rotates right.
std::uint64_t rotate(std::uint64_t v, int shift)
{
    return shift == 0 ? v : (v >> shift) | (v << (64 - shift));
}

constexpr std::uint64_t k0 = 0xc3a5c85c97cb3127ull;
constexpr std::uint64_t k1 = 0xb492b66fbe98f273ull;
constexpr std::uint64_t k2 = 0x9ae16a3b2f90404full;

std::uint64_t shiftMix(std::uint64_t v)
{
    return v ^ (v >> 47);
}

std::uint64_t hashLen16(std::uint64_t u, std::uint64_t v, std::uint64_t mul)
{
    std::uint64_t a = (u ^ v) * mul;
    a ^= a >> 47;
    std::uint64_t b = (v ^ a) * mul;
    b ^= b >> 47;
    return b * mul;
}

std::uint64_t hashLen0to16(const char *s, std::size_t len)
{
    if (len >= 8) {
        const std::uint64_t mul = k2 + len * 2;
        const std::uint64_t a = fetch64(s) + k2;
        const std::uint64_t b = fetch64(s + len - 8);
        const std::uint64_t c = rotate(b, 37) * mul + a;
        const std::uint64_t d = (rotate(a, 25) + b) * mul;
        return hashLen16(c, d, mul);
    }
    if (len >= 4) {
        const std::uint64_t mul = k2 + len * 2;
        const std::uint64_t a = fetch32(s);
        return hashLen16(len + (a << 3), fetch32(s + len - 4), mul);
    }
    if (len > 0) {
        const std::uint8_t a = std::uint8_t(s[0]), b = std::uint8_t(s[len >> 1]), c = std::uint8_t(s[len - 1]);
        const std::uint32_t y = std::uint32_t(a) + (std::uint32_t(b) << 8);
        const std::uint32_t z = std::uint32_t(len) + (std::uint32_t(c) << 2);
        return shiftMix(y * k2 ^ z * k0) * k2;
    }
    return k2;
}

std::uint64_t hashLen17to32(const char *s, std::size_t len)
{
    const std::uint64_t mul = k2 + len * 2;
    const std::uint64_t a = fetch64(s) * k1;
    const std::uint64_t b = fetch64(s + 8);
    const std::uint64_t c = fetch64(s + len - 8) * mul;
    const std::uint64_t d = fetch64(s + len - 16) * k2;
    return hashLen16(rotate(a + b, 43) + rotate(c, 30) + d, a + rotate(b + k2, 18) + c, mul);
}

std::uint64_t hashLen33to64(const char *s, std::size_t len)
{
    const std::uint64_t mul = k2 + len * 2;
    const std::uint64_t a = fetch64(s) * k2;
    const std::uint64_t b = fetch64(s + 8);
    const std::uint64_t c = fetch64(s + len - 8) * mul;
    const std::uint64_t d = fetch64(s + len - 16) * k2;
    const std::uint64_t y = rotate(a + b, 43) + rotate(c, 30) + d;
    const std::uint64_t z = hashLen16(y, a + rotate(b + k2, 18) + c, mul);
    const std::uint64_t e = fetch64(s + 16) * mul;
    const std::uint64_t f = fetch64(s + 24);
    const std::uint64_t g = (y + fetch64(s + len - 32)) * mul;
    const std::uint64_t h = (z + fetch64(s + len - 24)) * mul;
    return hashLen16(rotate(e + f, 43) + rotate(g, 30) + h, e + rotate(f + a, 18) + g, mul);
}

using Pair = std::pair<std::uint64_t, std::uint64_t>;

// 16 bytes of hash from s[0, 32) and two seeds ("quick and dirty", farmhash says).
Pair weakHashLen32WithSeeds(const char *s, std::uint64_t a, std::uint64_t b)
{
    const std::uint64_t w = fetch64(s), x = fetch64(s + 8), y = fetch64(s + 16), z = fetch64(s + 24);
    a += w;
    b = rotate(b + a + z, 21);
    const std::uint64_t c = a;
    a += x;
    a += y;
    b += rotate(a, 44);
    return {a + z, b + c};
}

} // namespace

std::uint64_t farmhashFingerprint64(std::string_view bytes)
{
    const char *s = bytes.data();
    const std::size_t len = bytes.size();
    if (len <= 16)
        return hashLen0to16(s, len);
    if (len <= 32)
        return hashLen17to32(s, len);
    if (len <= 64)
        return hashLen33to64(s, len);

    // Over 64 bytes: 64-byte blocks into 56 bytes of state (v, w, x, y, z), then the last 64
    // bytes of the input (which may overlap the last block) once more.
    constexpr std::uint64_t seed = 81;
    std::uint64_t x = seed;
    std::uint64_t y = seed * k1 + 113;
    std::uint64_t z = shiftMix(y * k2 + 113) * k2;
    Pair v{0, 0}, w{0, 0};
    x = x * k2 + fetch64(s);
    const char *end = s + ((len - 1) / 64) * 64;
    const char *last64 = end + ((len - 1) & 63) - 63;
    do {
        x = rotate(x + y + v.first + fetch64(s + 8), 37) * k1;
        y = rotate(y + v.second + fetch64(s + 48), 42) * k1;
        x ^= w.second;
        y += v.first + fetch64(s + 40);
        z = rotate(z + w.first, 33) * k1;
        v = weakHashLen32WithSeeds(s, v.second * k1, x + w.first);
        w = weakHashLen32WithSeeds(s + 32, z + w.second, y + fetch64(s + 16));
        std::swap(z, x);
        s += 64;
    } while (s != end);
    const std::uint64_t mul = k1 + ((z & 0xff) << 1);
    s = last64;
    w.first += (len - 1) & 63;
    v.first += w.first;
    w.first += v.first;
    x = rotate(x + y + v.first + fetch64(s + 8), 37) * mul;
    y = rotate(y + v.second + fetch64(s + 48), 42) * mul;
    x ^= w.second * 9;
    y += v.first * 9 + fetch64(s + 40);
    z = rotate(z + w.first, 33) * mul;
    v = weakHashLen32WithSeeds(s, v.second * mul, x + w.first);
    w = weakHashLen32WithSeeds(s + 32, z + w.second, y + fetch64(s + 16));
    std::swap(z, x);
    return hashLen16(hashLen16(v.first, w.first, mul) + shiftMix(y) * k0 + z, hashLen16(v.second, w.second, mul) + x, mul);
}

std::uint64_t sipHash24(std::uint64_t key0, std::uint64_t key1, std::string_view bytes)
{
    std::uint64_t v0 = 0x736f6d6570736575ull ^ key0;
    std::uint64_t v1 = 0x646f72616e646f6dull ^ key1;
    std::uint64_t v2 = 0x6c7967656e657261ull ^ key0;
    std::uint64_t v3 = 0x7465646279746573ull ^ key1;
    const auto rotl = [](std::uint64_t v, int b) { return (v << b) | (v >> (64 - b)); };
    const auto round = [&] {
        v0 += v1;
        v1 = rotl(v1, 13);
        v1 ^= v0;
        v0 = rotl(v0, 32);
        v2 += v3;
        v3 = rotl(v3, 16);
        v3 ^= v2;
        v0 += v3;
        v3 = rotl(v3, 21);
        v3 ^= v0;
        v2 += v1;
        v1 = rotl(v1, 17);
        v1 ^= v2;
        v2 = rotl(v2, 32);
    };
    const auto compress = [&](std::uint64_t m) { // the "2" of SipHash-2-4: two rounds per word
        v3 ^= m;
        round();
        round();
        v0 ^= m;
    };
    const std::size_t len = bytes.size();
    std::size_t i = 0;
    for (; i + 8 <= len; i += 8)
        compress(fetch64(bytes.data() + i));
    // The last word: the remaining bytes, little-endian, with the length's low byte on top.
    std::uint64_t last = std::uint64_t(len & 0xff) << 56;
    for (std::size_t j = 0; i + j < len; ++j)
        last |= std::uint64_t(std::uint8_t(bytes[i + j])) << (8 * j);
    compress(last);
    v2 ^= 0xff;
    for (int r = 0; r < 4; ++r) // the "4": finalization rounds
        round();
    return v0 ^ v1 ^ v2 ^ v3;
}

} // namespace sluice::pipeline
