#pragma once
// CRC-32C (Castagnoli), the checksum of TFRecord framing, with TFRecord's masking.

#include <cstddef>
#include <cstdint>
#include <span>

namespace sluice {

// CRC-32C of `bytes`, continuing from `crc` (0 to start). Uses the SSE4.2 instruction where
// the CPU has it, a table otherwise; both give the same result.
std::uint32_t crc32c(std::span<const std::byte> bytes, std::uint32_t crc = 0);
// The portable table implementation, exposed so tests can compare the two paths.
std::uint32_t crc32cPortable(std::span<const std::byte> bytes, std::uint32_t crc = 0);

// TFRecord stores CRCs masked, so that a CRC of data containing CRCs stays well distributed.
constexpr std::uint32_t maskCrc32c(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

} // namespace sluice
