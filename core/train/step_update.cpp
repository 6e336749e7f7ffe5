#include "train/step_update.h"

namespace sluice::train {

void applyStepUpdate(const Model &model, Optimizer &optimizer, std::span<float> weights, std::span<float> grads, double globalClipnorm, float lr,
                     std::int64_t iteration)
{
    applyStateUpdates(model, weights, grads);
    const std::size_t trainable = model.trainableParameterCount();
    const std::span<float> trainableGrads = grads.first(trainable);
    if (globalClipnorm > 0)
        clipByGlobalNorm(trainableGrads, globalClipnorm);
    optimizer.apply(weights.first(trainable), trainableGrads, lr, iteration);
}

} // namespace sluice::train
