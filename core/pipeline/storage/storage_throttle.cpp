#include "pipeline/storage/storage_throttle.h"

#include "telemetry/process_io.h"

#include <atomic>
#include <cstdlib>
#include <thread>

namespace sluice::pipeline {
namespace {

std::atomic<std::int64_t> &perPageUs()
{
    static std::atomic<std::int64_t> value = [] {
        const char *text = std::getenv("SLUICE_STORAGE_THROTTLE_US");
        return text ? std::max<std::int64_t>(0, std::strtoll(text, nullptr, 10)) : std::int64_t(0);
    }();
    return value;
}

} // namespace

void setStorageThrottle(std::chrono::microseconds perPage) { perPageUs().store(std::max<std::int64_t>(0, perPage.count())); }

std::chrono::microseconds storageThrottle() { return std::chrono::microseconds(perPageUs().load(std::memory_order_relaxed)); }

void throttleStorageRead(std::uint64_t pages)
{
    const std::int64_t us = perPageUs().load(std::memory_order_relaxed);
    if (us <= 0 || pages == 0)
        return;
    std::this_thread::sleep_for(std::chrono::microseconds(us * std::int64_t(pages)));
    addSimulatedStorageRead(pages * 4096);
}

} // namespace sluice::pipeline
