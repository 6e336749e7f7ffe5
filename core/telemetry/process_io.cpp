#include "telemetry/process_io.h"

#include <fstream>
#include <string>

namespace sluice {

std::optional<std::uint64_t> storageReadBytes()
{
    std::ifstream in("/proc/self/io");
    std::string key;
    std::uint64_t value = 0;
    while (in >> key >> value)
        if (key == "read_bytes:")
            return value;
    return std::nullopt;
}

} // namespace sluice
