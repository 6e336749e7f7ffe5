#pragma once
// Resident memory of this process, read from the kernel, for bounded-memory checks and the
// figures `sluice bench` reports.

#include <cstdint>

namespace sluice {

std::uint64_t currentRssBytes();
// Peak resident memory since the process started or since resetPeakRss().
std::uint64_t peakRssBytes();
// Resets the peak to the current value (Linux clear_refs); false where the kernel refuses.
bool resetPeakRss();
std::uint64_t physicalMemoryBytes();

} // namespace sluice
