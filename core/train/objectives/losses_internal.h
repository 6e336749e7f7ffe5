#pragma once
// Private to losses.cpp and losses_crossentropy.cpp: the options every loss is built from and
// the cross-entropy factories. Not a public header (the trainer goes through createLoss).

#include "train/objectives/loss.h"

#include <cmath>
#include <memory>
#include <span>
#include <string>

namespace sluice::train::detail {

struct LossOptions
{
    bool fromLogits = false;
    double delta = 1.0;          // huber
    double labelSmoothing = 0.0; // binary / categorical cross-entropy
};

std::unique_ptr<Loss> makeBinaryCrossentropy(const LossOptions &options);
std::unique_ptr<Loss> makeCategoricalCrossentropy(const LossOptions &options);
std::unique_ptr<Loss> makeSparseCategoricalCrossentropy(const LossOptions &options);

// Keras's backend.epsilon(): probabilities are clipped to [kEpsilon, 1 - kEpsilon].
inline constexpr float kEpsilon = 1e-7f;

inline float sampleWeight(std::span<const float> weights, std::int64_t i)
{
    return weights.empty() ? 1.0f : weights[std::size_t(i)];
}

// Pred and target of the same per-sample shape; also () against (1,) either way round, the one
// rank difference Keras squeezes away for these losses.
inline bool sameShapeOrScalar(const Shape &pred, const Shape &target)
{
    if (pred == target)
        return true;
    return shapeCount(pred) == 1 && shapeCount(target) == 1 && pred.size() + target.size() == 1;
}

} // namespace sluice::train::detail
