#pragma once
// Reading the directory of a ZIP archive (with ZIP64) held in memory or a mapping, and
// inflating its deflated members. Pure functions over bytes, so that they can be fuzzed.

#include "io/error.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sluice {

struct ZipEntry
{
    enum class Method { Stored, Deflated };
    std::string name;
    Method method = Method::Stored;
    std::uint32_t crc32 = 0;
    std::uint64_t compressedSize = 0;
    std::uint64_t uncompressedSize = 0;
    std::uint64_t dataOffset = 0; // absolute offset of the member's bytes in the archive
};

// Lists the members of the archive in `zip`, checking that every member lies inside it.
// `archiveName` is used in messages.
Result<std::vector<ZipEntry>> readZipDirectory(std::span<const std::byte> zip, const std::string &archiveName);

// Inflates a deflated member and checks its CRC-32. `what` names it in messages.
Result<std::vector<std::byte>> inflateZipEntry(std::span<const std::byte> zip, const ZipEntry &entry, const std::string &what);

// CRC-32 of a byte range, as zip computes it (for checking stored members on demand).
std::uint32_t zipCrc32(std::span<const std::byte> bytes);

} // namespace sluice
