#pragma once
// The optimizer's update on one GPU: the CPU Optimizer's hyperparameters (Optimizer::
// hyperparameters) and slots (in Optimizer::slots() order) over the device's copy of the
// weights, with the update kernels of train/cuda/kernels/optimizer_kernels.h. Plain C++; CUDA builds only.

#include "train/cuda/device_buffer.h"
#include "train/objectives/optimizer.h"

#include <cstdint>
#include <vector>

namespace sluice::train::gpu {

class GpuOptimizer
{
public:
    // On the current device; `slotNames` as Optimizer::slots() names them. `parameterCount` is
    // the optimizer's part of the buffer, Model::trainableParameterCount(): the non-trainable
    // state after it is never updated (nor clipped) here.
    GpuOptimizer(nlohmann::json hyperparameters, std::vector<std::string> slotNames, std::size_t parameterCount);

    void apply(cuda::Stream stream, float *weights, const float *grads, float learningRate, std::int64_t iteration);

    void upload(const std::vector<OptimizerSlot> &slots, cuda::Stream stream);
    void download(std::vector<OptimizerSlot> &slots, cuda::Stream stream) const;

private:
    nlohmann::json m_h;
    std::string m_type;
    std::size_t m_count;
    std::vector<std::string> m_names;
    std::vector<cuda::DeviceBuffer<float>> m_slots;
    float *slot(const char *name);
};

} // namespace sluice::train::gpu
