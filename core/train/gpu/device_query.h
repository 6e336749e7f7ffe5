#pragma once
// Which CUDA devices this process can use. A CUDA build on a machine without a GPU or
// driver answers with no devices and the reason, never an abort (docs/architecture.md, decision 4).

#include <cstdint>
#include <string>
#include <vector>

namespace sluice {

struct GpuDevice
{
    int index = 0;
    std::string name;
    int computeMajor = 0, computeMinor = 0;
    std::uint64_t memoryBytes = 0;
    int multiprocessors = 0;
};

struct DeviceQuery
{
    bool builtWithCuda = false;
    int runtimeVersion = 0; // CUDA runtime the binary was built against, e.g. 13000
    int driverVersion = 0;  // 0 when no driver is installed
    std::vector<GpuDevice> devices;
    std::string reason; // why `devices` is empty, for the user
};

DeviceQuery queryGpuDevices();

} // namespace sluice
