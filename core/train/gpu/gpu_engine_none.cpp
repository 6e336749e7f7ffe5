// The trainer's GPU entry points in a build without the CUDA backend: no device is ever used.
#include "train/gpu/gpu_engine.h"

namespace sluice::train {

Result<std::vector<int>> resolveGpuDevices(const std::vector<int> &, std::string &reason)
{
    reason = "this Sluice was built without the CUDA backend; training on the CPU";
    return std::vector<int>{};
}

Result<std::unique_ptr<GpuEngine>> createGpuEngine(const Model &, Optimizer &, const GpuEngineOptions &)
{
    return Error::unsupported("training.devices", "this Sluice was built without the CUDA backend");
}

} // namespace sluice::train
