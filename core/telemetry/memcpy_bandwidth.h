#pragma once
// This machine's single-thread memcpy bandwidth, the yardstick `sluice bench read` reports
// its figures against.

#include <cstdint>

namespace sluice {

// Copies a buffer of `bufferBytes` (larger than the caches) repeatedly for about `seconds`
// and returns the best bytes/s seen over the repetitions.
double measureMemcpyBandwidth(std::uint64_t bufferBytes = 128u << 20, double seconds = 0.5);

} // namespace sluice
