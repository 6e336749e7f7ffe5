#include "telemetry/process_io.h"

#include <atomic>
#include <fstream>
#include <string>

namespace sluice {

namespace {
std::atomic<std::uint64_t> g_simulatedReadBytes{0};
} // namespace

void addSimulatedStorageRead(std::uint64_t bytes) { g_simulatedReadBytes.fetch_add(bytes, std::memory_order_relaxed); }

std::optional<std::uint64_t> storageReadBytes()
{
    std::ifstream in("/proc/self/io");
    std::string key;
    std::uint64_t value = 0;
    while (in >> key >> value)
        if (key == "read_bytes:")
            return value + g_simulatedReadBytes.load(std::memory_order_relaxed);
    return std::nullopt;
}

} // namespace sluice
