#pragma once
// The file format of cache(filename) (pipeline/ops/cache_op.cpp), kept apart and free of the
// pipeline so that it can be fuzzed like the other readers of untrusted bytes:
//   "SLUICE-CACHE 2\n", fact lines (what the file was written from), an empty line,
//   the elements' records, then a 24-byte end mark: "SLCEND02", the element count and the
//   header's size, little-endian.
// A record holds each feature in order: ndim (u32), the dims (i64 each), then the values
// (numbers: the raw bytes; strings: a count (u64), and each string's length (u64) and bytes).
//
// Threading: pure functions.

#include "io/error.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sluice {

constexpr std::size_t kCacheTrailerSize = 24;

std::string cacheHeader(const std::vector<std::string> &facts);
std::array<std::byte, kCacheTrailerSize> cacheTrailer(std::uint64_t elements, std::uint64_t headerSize);

struct CacheFileLayout
{
    std::vector<std::string> facts;
    std::size_t payloadBegin = 0, payloadEnd = 0; // the records lie in [payloadBegin, payloadEnd)
};

// The file's layout once its header and end mark check out, or why it cannot be replayed
// (another format, another version, cut short); `path` names it in the error.
Result<CacheFileLayout> readCacheLayout(const std::string &path, std::span<const std::byte> bytes);

// What a record's feature must be: its rank, strings or numbers of `itemSize` bytes.
struct CacheFeatureSpec
{
    std::size_t ndim = 0;
    bool isString = false;
    std::size_t itemSize = 1;
};

struct CacheTensorRecord
{
    std::vector<std::int64_t> shape;
    std::span<const std::byte> data;  // numbers: the values' bytes, inside the file
    std::vector<std::string> strings; // strings: the values
};

// The record at `offset` in bytes[.. end) (advanced past it), a tensor per feature; nothing
// when it disagrees with `spec` or runs past `end`. Sizes are checked before anything is
// allocated, so a damaged file costs no more memory than it holds.
std::optional<std::vector<CacheTensorRecord>> readCacheRecord(std::span<const std::byte> bytes, std::size_t &offset, std::size_t end,
                                                              std::span<const CacheFeatureSpec> spec);

} // namespace sluice
