#include "telemetry/process_memory.h"

#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace sluice {
namespace {

// Reads a "Key:   1234 kB" line of /proc/self/status.
std::uint64_t statusKb(const char *key)
{
    std::FILE *f = std::fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    std::uint64_t kb = 0;
    const std::size_t keyLength = std::strlen(key);
    while (std::fgets(line, sizeof line, f)) {
        if (std::strncmp(line, key, keyLength) == 0 && line[keyLength] == ':') {
            unsigned long long v = 0;
            if (std::sscanf(line + keyLength + 1, "%llu", &v) == 1)
                kb = v;
            break;
        }
    }
    std::fclose(f);
    return kb * 1024;
}

} // namespace

std::uint64_t currentRssBytes() { return statusKb("VmRSS"); }
std::uint64_t peakRssBytes() { return statusKb("VmHWM"); }

bool resetPeakRss()
{
    std::FILE *f = std::fopen("/proc/self/clear_refs", "w");
    if (!f)
        return false;
    const bool ok = std::fputs("5", f) >= 0;
    return std::fclose(f) == 0 && ok;
}

std::uint64_t physicalMemoryBytes()
{
    return std::uint64_t(sysconf(_SC_PHYS_PAGES)) * std::uint64_t(sysconf(_SC_PAGESIZE));
}

} // namespace sluice
