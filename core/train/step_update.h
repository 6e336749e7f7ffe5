#pragma once
// What a training step does with the all-reduced gradient, in one place for the Trainer and
// `sluice bench train`: the non-trainable state's updates (BatchNormalization's moving
// statistics) are added to it first, then the trainable gradients are clipped (Keras's
// global_clipnorm, when > 0) and the optimizer updates the trainable weights only.
//
// Threading: the training thread, between steps (call inside the training arena).

#include "train/model.h"
#include "train/optimizer.h"

#include <cstdint>
#include <span>

namespace sluice::train {

void applyStepUpdate(const Model &model, Optimizer &optimizer, std::span<float> weights, std::span<float> grads, double globalClipnorm, float lr,
                     std::int64_t iteration);

} // namespace sluice::train
