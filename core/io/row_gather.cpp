#include "io/row_gather.h"

#include <cassert>
#include <cstring>

namespace sluice {
namespace {

// Rows ahead of the copy whose first cache lines are requested early: random rows miss in
// the TLB and the caches, and overlapping those misses is most of the gather's speed.
constexpr std::size_t kPrefetchDistance = 8;

} // namespace

void gatherRows(const NdArray &array, std::span<const std::uint64_t> indices, std::byte *out)
{
    assert(array.isRowContiguous());
    const std::byte *base = array.data().data();
    const std::size_t rowBytes = std::size_t(array.rowBytes());
    const std::size_t n = indices.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (i + kPrefetchDistance < n)
            __builtin_prefetch(base + indices[i + kPrefetchDistance] * rowBytes);
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
