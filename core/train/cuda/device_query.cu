// Asks the CUDA runtime (linked statically, so no libcudart is needed at run time) which
// devices exist. Every call is checked: no driver or no device is an answer, not an error.
#include "train/gpu/device_query.h"

#include <cuda_runtime_api.h>

namespace sluice {

DeviceQuery queryGpuDevices()
{
    DeviceQuery q;
    q.builtWithCuda = true;
    cudaRuntimeGetVersion(&q.runtimeVersion);
    if (cudaDriverGetVersion(&q.driverVersion) != cudaSuccess || q.driverVersion == 0) {
        q.driverVersion = 0;
        q.reason = "no NVIDIA driver found; using the CPU backend";
        return q;
    }
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
        q.reason = std::string("no usable GPU (") + cudaGetErrorString(rc) + "); using the CPU backend";
        cudaGetLastError(); // clear the sticky-free error so later calls start clean
        return q;
    }
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
            continue;
        q.devices.push_back({i, prop.name, prop.major, prop.minor, std::uint64_t(prop.totalGlobalMem), prop.multiProcessorCount});
    }
    if (q.devices.empty())
        q.reason = "the NVIDIA driver reports no devices; using the CPU backend";
    return q;
}

} // namespace sluice
