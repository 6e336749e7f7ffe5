#include "io/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace sluice {
namespace {

constexpr std::uint32_t kPolynomial = 0x82f63b78u; // Castagnoli, reflected

// Slicing-by-8 tables: table[k][b] is the CRC of byte b followed by k zero bytes.
constexpr std::array<std::array<std::uint32_t, 256>, 8> makeTables()
{
    std::array<std::array<std::uint32_t, 256>, 8> t{};
    for (std::uint32_t b = 0; b < 256; ++b) {
        std::uint32_t c = b;
        for (int i = 0; i < 8; ++i)
            c = (c >> 1) ^ ((c & 1u) ? kPolynomial : 0u);
        t[0][b] = c;
    }
    for (std::size_t k = 1; k < 8; ++k)
        for (std::uint32_t b = 0; b < 256; ++b)
            t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xffu];
    return t;
}
constexpr auto kTables = makeTables();

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32cHardware(const unsigned char *p, std::size_t n, std::uint32_t crc)
{
    std::uint64_t c = crc;
    for (; n >= 8; n -= 8, p += 8) {
        std::uint64_t word;
        std::memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
    }
    std::uint32_t c32 = std::uint32_t(c);
    for (; n > 0; --n, ++p)
        c32 = _mm_crc32_u8(c32, *p);
    return c32;
}
const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

} // namespace

std::uint32_t crc32cPortable(std::span<const std::byte> bytes, std::uint32_t crc)
{
    const auto *p = reinterpret_cast<const unsigned char *>(bytes.data());
    std::size_t n = bytes.size();
    std::uint32_t c = ~crc;
    for (; n >= 8; n -= 8, p += 8) {
        std::uint32_t lo, hi;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + 4, 4);
        lo ^= c;
        c = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^ kTables[4][lo >> 24] ^
            kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^ kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
    }
    for (; n > 0; --n, ++p)
        c = (c >> 8) ^ kTables[0][(c ^ *p) & 0xffu];
    return ~c;
}

std::uint32_t crc32c(std::span<const std::byte> bytes, std::uint32_t crc)
{
#if defined(__x86_64__)
    if (kHaveSse42)
        return ~crc32cHardware(reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size(), ~crc);
#endif
    return crc32cPortable(bytes, crc);
}

} // namespace sluice
