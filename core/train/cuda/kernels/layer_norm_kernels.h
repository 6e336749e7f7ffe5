#pragma once
// LayerNormalization over the last axis on the device, as the CPU layer computes it
// (train/layers/layer_normalization.cpp): forward keeps each row's mean and 1/std; backward
// recomputes the normalised values from the input. Plain C++ header; defined in layer_norm_kernels.cu.

#include "train/cuda/runtime.h"

#include <cstdint>

namespace sluice::train::cuda {

// y = (x - mean) * inv * gamma + beta per row of `features` values (gamma, beta may be null:
// scale / center off); stats[2 * r] = mean, stats[2 * r + 1] = 1 / sqrt(var + epsilon).
void layerNormForward(Stream stream, const float *x, const float *gamma, const float *beta, float *y, float *stats, std::int64_t rows,
                      std::int64_t features, double epsilon);

// dx = inv * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma (dx may be null: not
// needed); dGamma += sum_r dy * xhat and dBeta += sum_r dy where not null (ADDED, as the CPU
// layer adds into its gradients).
void layerNormBackward(Stream stream, const float *x, const float *gamma, const float *stats, const float *dy, float *dx, float *dGamma,
                       float *dBeta, std::int64_t rows, std::int64_t features);

} // namespace sluice::train::cuda
