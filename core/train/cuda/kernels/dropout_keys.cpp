// The dropout keys of dropout_kernels.h, computed with the CPU layer's own hash functions
// (train/model/initializers.h) so that the device draws the CPU's masks.
#include "train/cuda/kernels/dropout_kernels.h"
#include "train/model/initializers.h"

namespace sluice::train::cuda {

std::uint64_t dropoutLayerKey(const std::uint64_t *layerSeed, const std::string &layerName)
{
    return layerSeed ? mixHash(*layerSeed, 0x44726F706F7574ull /* "Dropout" */) : hashString(layerName);
}

std::uint64_t dropoutStepKey(std::uint64_t runSeed, std::uint64_t layerKey, std::uint64_t step)
{
    return mixHash(mixHash(runSeed, layerKey), step);
}

} // namespace sluice::train::cuda
