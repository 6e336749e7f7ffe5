#pragma once
// What a training step does with the replicas' gradients, in one place for the Trainer and
// `sluice bench train`:
//  - reduceGradients all-reduces them into the first replica's buffer: the dense part as is, and
//    row-sparse tables (Embedding) only in the rows some replica or process used;
//  - applyStepUpdate adds the non-trainable state's updates (BatchNormalization's moving
//    statistics), clips the trainable gradients (Keras's global_clipnorm, when > 0) and lets the
//    optimizer update the trainable weights: a row-sparse table with sparse_updates only in its
//    used rows, every other weight in full (Keras's semantics: unused rows' moments still decay).
//
// Threading: the training thread, between steps (call inside the training arena).

#include "io/error.h"
#include "train/distribute/gradient_reducer.h"
#include "train/model/model.h"
#include "train/objectives/optimizer.h"
#include "train/loop/replica.h"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace sluice::train {

// Per Model::rowSparseParameters(): the sorted rows the global batch used.
using UsedRows = std::vector<std::vector<std::int64_t>>;

// On return replicas[0]->gradients() holds the global sum and `used` the rows it has in each
// row-sparse table (the first replica then zeroes exactly those before its next step).
Status reduceGradients(GradientReducer &reducer, const Model &model, std::span<const std::unique_ptr<Replica>> replicas, UsedRows &used);

// `used` as reduceGradients gave it; empty: every row of every table takes part.
void applyStepUpdate(const Model &model, Optimizer &optimizer, std::span<float> weights, std::span<float> grads, double globalClipnorm, float lr,
                     std::int64_t iteration, const UsedRows &used = {});

} // namespace sluice::train
