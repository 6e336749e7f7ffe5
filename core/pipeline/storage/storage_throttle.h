#pragma once
// A slow storage device, simulated, so that tests of the profiler's storage verdict control the
// cause they check: while set, every page a pass reads from a mapping (PassStorage::beforeRead)
// waits `perPage` off the CPU, as a read from a slow device would, and counts as read from
// storage (storageReadBytes(), process_io.h). Off in normal use. Tests set it; the environment
// variable SLUICE_STORAGE_THROTTLE_US (microseconds per page) sets it for trying the verdict by
// hand (docs/profiling.md).
//
// Threading: any thread; the setting is an atomic.

#include <chrono>
#include <cstdint>

namespace sluice::pipeline {

void setStorageThrottle(std::chrono::microseconds perPage); // zero: off
std::chrono::microseconds storageThrottle();
// Waits for `pages` pages as the throttle says, and counts them as read. Nothing when it is off.
void throttleStorageRead(std::uint64_t pages);

} // namespace sluice::pipeline
