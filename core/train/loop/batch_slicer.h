#pragma once
// Cuts a pipeline batch (an Element whose features have the batch first) into the fp32 slices
// the replicas train on: the model inputs, the targets, and per-row weights (a sample-weight
// feature times Keras class weights). Any numeric dtype converts to fp32.

#include "io/error.h"
#include "train/loop/replica.h"

#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace sluice::pipeline {
struct Element;
}

namespace sluice::train {

struct SampleWeighting
{
    std::optional<std::size_t> sampleWeightFeature;              // element index of a feature of B values
    std::vector<std::pair<std::int64_t, float>> classWeights;    // Keras class_weight (single output)
};

// Rows in the batch (its first feature's leading dimension); an error when features disagree.
Result<std::int64_t> batchRows(const Model &model, const pipeline::Element &batch);

// Fills `slice` with rows [begin, end) of `batch`; reuses its buffers.
void sliceBatch(const Model &model, const pipeline::Element &batch, const SampleWeighting &weighting, std::int64_t begin, std::int64_t end,
                BatchSlice &slice);

// The GPU replicas' staging (train/gpu/gpu_replica.h): rows [begin, end) of `batch` written as
// fp32 straight into `dst`, in blocks: every model input, every target, then the rows' weights,
// block k of a slice of R rows starting at dst + R * blockOffsets[k] (blockOffsets: the floats per
// row of the blocks before it). Large slices are converted on the calling arena's threads.
// Returns whether row weights were written (a sample-weight feature or class weights): the same
// values sliceBatch gives. `blockWritten`, when set, is called with the end of each input and
// target block as soon as it is written (the GPU replica starts its copy to the device there).
bool gatherSlice(const Model &model, const pipeline::Element &batch, const SampleWeighting &weighting, std::int64_t begin, std::int64_t end,
                 std::span<const std::size_t> blockOffsets, float *dst, const std::function<void(const float *blockEnd)> &blockWritten = {});

// Splits `rows` as tf.distribute splits a global batch over `parts` replicas: as evenly as
// possible, the first (rows % parts) replicas taking one more row. Returns parts+1 boundaries.
std::vector<std::int64_t> splitRows(std::int64_t rows, int parts);

} // namespace sluice::train
