#pragma once
// The non-recurrent Keras layers of the CPU backend, made from already-checked options (the
// registry, train/model/layer_registry.h, turns JSON configs into these). Each acts like its Keras
// namesake on [B, ...] batches; the weights use Keras's layout and order.
//
// Threading: the layers are immutable after build(); forward/backward may run concurrently on
// different replicas (each with its own LayerState) and split large batches over oneTBB tasks.

#include "train/model/activations.h"
#include "train/model/layer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace sluice::train {

struct DenseOptions
{
    std::int64_t units = 1;
    ActivationKind activation = ActivationKind::Linear;
    bool useBias = true;
    std::string kernelInitializer = "glorot_uniform";
    std::string biasInitializer = "zeros";
};

// activation(x . kernel + bias) over the last axis: [B, ..., F] -> [B, ..., units]; kernel
// (F, units), bias (units,).
std::unique_ptr<Layer> makeDense(std::string name, DenseOptions options);

std::unique_ptr<Layer> makeActivation(std::string name, ActivationKind activation);

// Inverted dropout: in training, each element is kept with probability 1 - rate and scaled by
// 1 / (1 - rate); the identity at inference. An element's mask depends only on the run's seed,
// the layer (its `seed` when given, else its name), the step and the element's GLOBAL row
// (PassContext::globalRowOffset + r * globalRowStride) and column, so that any split of a batch
// over replicas and processes draws the same masks.
std::unique_ptr<Layer> makeDropout(std::string name, double rate, std::optional<std::uint64_t> seed);

// Concatenation along the last axis (axis -1, or the last axis counted with the batch
// dimension, as Keras numbers them); the other dimensions must agree.
std::unique_ptr<Layer> makeConcatenate(std::string name, std::int64_t axis);

struct LayerNormalizationOptions
{
    std::int64_t axis = -1; // only the last axis is supported
    double epsilon = 1e-3;
    bool center = true; // beta
    bool scale = true;  // gamma
    std::string betaInitializer = "zeros";
    std::string gammaInitializer = "ones";
};

// Normalises each sample over its last axis; params gamma (F,) then beta (F,) as Keras orders them.
std::unique_ptr<Layer> makeLayerNormalization(std::string name, LayerNormalizationOptions options);

struct BatchNormalizationOptions
{
    std::int64_t axis = -1; // only the last (channel) axis is supported
    double momentum = 0.99;
    double epsilon = 1e-3;
    bool center = true; // beta
    bool scale = true;  // gamma
    std::string betaInitializer = "zeros";
    std::string gammaInitializer = "ones";
    std::string movingMeanInitializer = "zeros";
    std::string movingVarianceInitializer = "ones";
    bool synchronized = false; // normalise over the global batch (every replica and process)
};

// Normalises each channel (last axis) by the batch's statistics in training and the moving
// ones at inference; params gamma, beta (trainable), moving_mean, moving_variance (not), in
// Keras's order.
std::unique_ptr<Layer> makeBatchNormalization(std::string name, BatchNormalizationOptions options);

// [B, F] -> [B, n, F].
std::unique_ptr<Layer> makeRepeatVector(std::string name, std::int64_t n);

struct EmbeddingOptions
{
    std::int64_t inputDim = 1;
    std::int64_t outputDim = 1;
    std::string embeddingsInitializer = "uniform";
    bool sparseUpdates = false; // the optimizer updates only the rows a batch used (ParamSpec::sparseUpdates)
};

// Ids [B, ...] (whole numbers in [0, input_dim), as float32) -> rows of the table [B, ..., D];
// param embeddings (input_dim, output_dim) with a row-sparse gradient. An id out of range stops
// the pass with an error naming the layer and the id (LayerState::error).
std::unique_ptr<Layer> makeEmbedding(std::string name, EmbeddingOptions options);
// The error of an id out of range, the same from the CPU layer and the GPU backend: names the
// layer (Error::layer, key "input_dim"), the id and its row in the global batch.
Error embeddingIdError(const std::string &layer, float id, std::int64_t row, std::int64_t inputDim);

// [B, ...] -> [B, product of the per-sample dimensions].
std::unique_ptr<Layer> makeFlatten(std::string name);

// [B, ...] -> [B, target...]; one target dimension may be -1 (inferred).
std::unique_ptr<Layer> makeReshape(std::string name, Shape target);

// Applies `inner` (a Dense: the only class supported) to every time step of [B, T, ...]; its
// params keep the inner layer's names ("kernel", "bias"). Returns null when inner is not a Dense.
std::unique_ptr<Layer> makeTimeDistributed(std::string name, std::unique_ptr<Layer> inner);

} // namespace sluice::train
