#pragma once
// Embedding on the device with the CPU layer's semantics (train/layers/embedding.cpp): ids come
// as float32 and are truncated to whole numbers; the table gradient is summed per row in input
// order, so a GPU step gives the CPU's sums bit for bit. Plain C++ header; defined in
// embedding_kernels.cu.

#include "train/cuda/runtime.h"

#include <cstddef>
#include <cstdint>

namespace sluice::train::cuda {

// out[i, :] = table[id_i, :] for `count` ids. An id outside [0, inputDim) or NaN gives a row of
// zeros and lowers *firstBad to its position: set *firstBad to INT32_MAX before the call
// (embeddingResetBad) and read it after, to name the id in an error.
void embeddingResetBad(Stream stream, std::int32_t *firstBad);
void embeddingForward(Stream stream, const float *ids, const float *table, float *out, std::int64_t count, std::int64_t dim,
                      std::int64_t inputDim, std::int32_t *firstBad);

// Device scratch embeddingBackward needs for `count` ids, in bytes.
std::size_t embeddingBackwardScratchBytes(std::int64_t count, std::int64_t inputDim);
// dTable[id_i, :] += dOut[i, :] for the valid ids: the ids are sorted with their positions (a
// stable radix sort), then a warp per distinct id adds its rows in input order. `scratch` holds
// embeddingBackwardScratchBytes(count, inputDim) bytes.
void embeddingBackward(Stream stream, const float *ids, const float *dOut, float *dTable, std::int64_t count, std::int64_t dim,
                       std::int64_t inputDim, void *scratch, std::size_t scratchBytes);

} // namespace sluice::train::cuda
