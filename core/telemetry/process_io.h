#pragma once
// Bytes this process has caused to be read from storage (the kernel's per-process I/O
// accounting, /proc/self/io read_bytes): page faults on mappings and their readahead included,
// pages served from the page cache not. What the profile reports as the storage read rate.

#include <cstdint>
#include <optional>

namespace sluice {

// Nothing where the kernel does not account I/O per process. Reads of the simulated slow device
// (pipeline/storage/storage_throttle.h) are added.
std::optional<std::uint64_t> storageReadBytes();
void addSimulatedStorageRead(std::uint64_t bytes);

} // namespace sluice
