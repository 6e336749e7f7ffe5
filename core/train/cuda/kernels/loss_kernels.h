#pragma once
// The losses' per-sample values and gradients on the device, as core's Loss::compute gives
// them (train/objectives/losses.cpp, train/objectives/losses_crossentropy.cpp): Keras's formulas, the per-sample loss
// the mean over the non-batch elements (positions for the cross-entropies), the gradient that of
// scale * sum_i w_i * loss_i. Plain C++ header; defined in loss_kernels.cu.

#include "train/cuda/runtime.h"

#include <cstdint>

namespace sluice::train::cuda {

enum class LossKind { Mse, Mae, Huber, BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy };

struct LossParams
{
    LossKind kind = LossKind::Mse;
    bool fromLogits = false;     // cross-entropies
    float delta = 1.0f;          // huber
    float labelSmoothing = 0.0f; // binary / categorical cross-entropy
};

// pred: [batch, n] (n = every non-batch element); target: [batch, n], or [batch, n / classes]
// class indices (as floats) for the sparse loss; weights: batch values or null (all 1);
// `classes` is the size of the last axis (the cross-entropies' class axis; ignored otherwise).
// Writes perSample[batch] and, where dPred is not null, dPred[batch, n].
void computeLoss(Stream stream, const LossParams &params, const float *pred, const float *target, const float *weights, float scale,
                 std::int64_t batch, std::int64_t n, std::int64_t classes, float *perSample, float *dPred);

} // namespace sluice::train::cuda
