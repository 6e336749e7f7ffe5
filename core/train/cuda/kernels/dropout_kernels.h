#pragma once
// Dropout on the device with exactly the CPU layer's masks (train/layers/dropout.cpp): element
// (r, c) is dropped where the top 53 bits of mixHash(mixHash(stepKey, global row), c) are below
// rate * 2^53, global row = rowOffset + r * rowStride, so that a replica's slice, on any device,
// draws what one replica draws on the whole batch. Plain C++ header; defined in dropout_kernels.cu.

#include "train/cuda/runtime.h"

#include <cstdint>
#include <string>

namespace sluice::train::cuda {

struct DropoutParams
{
    double rate = 0.0;
    std::uint64_t stepKey = 0; // mixHash(mixHash(run seed, layer key), step): dropoutStepKey()
    std::int64_t rowOffset = 0;
    std::int64_t rowStride = 1;
};

// The layer key is mixHash(seed, "Dropout") for a layer with a `seed`, else hashString(name),
// as the CPU layer keys itself (defined in dropout_keys.cpp, with the CPU's hash).
std::uint64_t dropoutLayerKey(const std::uint64_t *layerSeed, const std::string &layerName);
std::uint64_t dropoutStepKey(std::uint64_t runSeed, std::uint64_t layerKey, std::uint64_t step);

// out = mask * in / (1 - rate) over [rows, rowSize]; out may alias in. Backward is the same
// call on dy (the mask and scale are the same: y = m * s * x is linear).
void dropoutApply(Stream stream, const DropoutParams &p, const float *in, float *out, std::int64_t rows, std::int64_t rowSize);

} // namespace sluice::train::cuda
