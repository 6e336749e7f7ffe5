#include "io/storage/row_gather.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace sluice {
namespace {

// Random rows miss in the TLB and the caches; overlapping those misses is most of the
// gather's speed. The rows a few ahead of the copy are requested into L2 (whose miss queue
// holds more lines in flight than L1's), about kPrefetchBytes ahead in all, and at most
// kPrefetchRowBytes of each row: past that the hardware stream prefetcher takes over.
constexpr std::size_t kPrefetchBytes = 4096;
constexpr std::size_t kPrefetchRowBytes = 2048;
constexpr std::size_t kCacheLine = 64;

inline void prefetchRow(const std::byte *row, std::size_t bytes)
{
    const std::size_t n = bytes < kPrefetchRowBytes ? bytes : kPrefetchRowBytes;
    for (std::size_t off = 0; off < n; off += kCacheLine)
        __builtin_prefetch(row + off, 0, 2);
}

} // namespace

void gatherRows(const NdArray &array, std::span<const std::uint64_t> indices, std::byte *out)
{
    assert(array.isRowContiguous());
    const std::byte *base = array.data().data();
    const std::size_t rowBytes = std::size_t(array.rowBytes());
    const std::size_t n = indices.size();
    const std::size_t ahead = std::clamp<std::size_t>(kPrefetchBytes / std::max<std::size_t>(rowBytes, 1), 1, 16);
    for (std::size_t i = 0; i < ahead && i < n; ++i)
        prefetchRow(base + indices[i] * rowBytes, rowBytes);
    for (std::size_t i = 0; i < n; ++i) {
        if (i + ahead < n)
            prefetchRow(base + indices[i + ahead] * rowBytes, rowBytes);
        std::memcpy(out + i * rowBytes, base + indices[i] * rowBytes, rowBytes);
    }
}

void copyRows(const NdArray &array, std::uint64_t begin, std::uint64_t end, std::byte *out)
{
    assert(array.isRowContiguous());
    const auto bytes = array.rowRangeBytes(begin, end);
    if (!bytes.empty())
        std::memcpy(out, bytes.data(), bytes.size());
}

} // namespace sluice
