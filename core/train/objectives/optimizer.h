#pragma once
// Keras optimizers over the model's flat parameter buffer, with Keras's update rules and
// defaults, and learning-rate schedules. State ("slots": moments, velocities) is flat buffers
// of the same length, named for checkpoints.

#include "io/error.h"
#include "train/model/float_range.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sluice::train {

class LearningRateSchedule
{
public:
    virtual ~LearningRateSchedule() = default;
    // Learning rate for the update that follows `step` completed updates (0-based, as Keras's
    // optimizer.iterations).
    virtual double at(std::int64_t step) const = 0;
};

// A number (constant), or {"type": "constant"|"step"|"cosine"|"warmup", ...}:
//  constant: {"learning_rate"}
//  step:     {"initial_learning_rate", "step_size", "gamma"}  lr * gamma^floor(step / step_size)
//  cosine:   {"initial_learning_rate", "decay_steps", "alpha"=0, "warmup_steps"=0, "warmup_target"}
//            as keras.optimizers.schedules.CosineDecay (with its linear warm-up)
//  warmup:   {"warmup_steps", "after": <schedule>}  linear from 0 to after(0) over warmup_steps
//            (lr * (step + 1) / warmup_steps), then after(step - warmup_steps)
// Errors name the key ("learning_rate.decay_steps") and why.
Result<std::unique_ptr<LearningRateSchedule>> createSchedule(const nlohmann::json &spec);

struct OptimizerSlot
{
    std::string name;         // "m", "v", "momentum", "velocity", ...
    std::vector<float> values; // one per parameter
};

class Optimizer
{
public:
    virtual ~Optimizer() = default;
    virtual std::string name() const = 0;
    // One update of weights from grads (the summed, averaged, clipped gradient), with learning
    // rate `lr`; `iteration` is the 1-based number of this update (Adam's bias correction).
    virtual void apply(std::span<float> weights, std::span<const float> grads, float lr, std::int64_t iteration) = 0;
    // The same update on `ranges` of the buffers only (disjoint, in any order): the rest of the
    // weights and of the state is left as it is. Row-sparse tables with sparse_updates use it so
    // that only the rows a batch used move (LazyAdam-style).
    virtual void applyRanges(std::span<float> weights, std::span<const float> grads, std::span<const FloatRange> ranges, float lr,
                             std::int64_t iteration) = 0;
    // Every hyperparameter, resolved with Keras's defaults: {"type", "weight_decay", "momentum",
    // "nesterov", "beta_1", "beta_2", "epsilon", "amsgrad", "rho", "centered"} (the CUDA
    // backend's update kernels take the same).
    virtual nlohmann::json hyperparameters() const = 0;
    // The state, for checkpoints (restored by writing into the same vectors).
    virtual std::vector<OptimizerSlot> &slots() = 0;
};

// {"type": "sgd", "learning_rate": 0.01 | schedule, "momentum": 0, "nesterov": false}
// {"type": "adam", "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7, "amsgrad": false}
// {"type": "adamw", ... adam's, "weight_decay": 0.004}
// {"type": "rmsprop", "rho": 0.9, "momentum": 0, "epsilon": 1e-7, "centered": false}
// plus, for every optimizer, "global_clipnorm" (read by the trainer, see clipByGlobalNorm).
// `parameterCount` sizes the slots. Errors name "optimizer.<key>".
Result<std::unique_ptr<Optimizer>> createOptimizer(const nlohmann::json &spec, std::size_t parameterCount);
const std::vector<std::string> &knownOptimizers();

// Scales grads so that their global L2 norm is at most clipnorm (Keras global_clipnorm).
// Returns the norm before clipping.
double clipByGlobalNorm(std::span<float> grads, double clipnorm);
// The same over `ranges` of grads only (the rest is zero, so the norm is the same).
double clipByGlobalNorm(std::span<float> grads, std::span<const FloatRange> ranges, double clipnorm);

} // namespace sluice::train
