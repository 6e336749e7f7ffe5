// Embedding's gather and its row-sparse gradient (embedding_kernels.h). The gradient avoids
// atomics on purpose: float additions in a data-dependent order would make a run irreproducible,
// and the CPU layer's order (input order, per row) is what replicas are checked against.
#include "train/cuda/check.h"
#include "train/cuda/device_util.cuh"
#include "train/cuda/kernels/embedding_kernels.h"

#include <cub/device/device_radix_sort.cuh>

#include <climits>

namespace sluice::train::cuda {
namespace {

__device__ bool validId(float v, std::int64_t inputDim) { return v > -1.0f && v < float(inputDim); }

// One warp per id: its row copied by the lanes.
__global__ void gatherKernel(const float *ids, const float *table, float *out, std::int64_t count, std::int64_t dim, std::int64_t inputDim,
                             std::int32_t *firstBad)
{
    const int lane = threadIdx.x % detail::kWarp;
    for (std::int64_t i = blockIdx.x * std::int64_t(detail::kRowsPerBlock) + threadIdx.x / detail::kWarp; i < count;
         i += std::int64_t(gridDim.x) * detail::kRowsPerBlock) {
        const float v = ids[i];
        float *dst = out + i * dim;
        if (!validId(v, inputDim)) {
            for (std::int64_t k = lane; k < dim; k += detail::kWarp)
                dst[k] = 0.0f;
            if (lane == 0)
                atomicMin(firstBad, std::int32_t(i));
            continue;
        }
        const float *src = table + std::int64_t(v) * dim; // truncation, as the CPU layer's cast
        for (std::int64_t k = lane; k < dim; k += detail::kWarp)
            dst[k] = src[k];
    }
}

// Sort keys: the id, or inputDim for an invalid one (sorted last and skipped).
__global__ void keysKernel(const float *ids, std::int32_t *keys, std::int32_t *positions, std::int64_t count, std::int64_t inputDim)
{
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count; i += std::int64_t(gridDim.x) * blockDim.x) {
        const float v = ids[i];
        keys[i] = validId(v, inputDim) ? std::int32_t(v) : std::int32_t(inputDim);
        positions[i] = std::int32_t(i);
    }
}

// One warp per sorted position that starts a run of equal ids: the run's rows of dOut added in
// input order (the sort is stable), then into the table's row, which holds zero before the step.
__global__ void sumRunsKernel(const std::int32_t *keys, const std::int32_t *positions, const float *dOut, float *dTable, std::int64_t count,
                              std::int64_t dim, std::int64_t inputDim)
{
    const int lane = threadIdx.x % detail::kWarp;
    for (std::int64_t j = blockIdx.x * std::int64_t(detail::kRowsPerBlock) + threadIdx.x / detail::kWarp; j < count;
         j += std::int64_t(gridDim.x) * detail::kRowsPerBlock) {
        const std::int32_t key = keys[j];
        if (key >= inputDim || (j > 0 && keys[j - 1] == key))
            continue;
        for (std::int64_t k = lane; k < dim; k += detail::kWarp) {
            float sum = dTable[std::int64_t(key) * dim + k];
            for (std::int64_t t = j; t < count && keys[t] == key; ++t)
                sum += dOut[std::int64_t(positions[t]) * dim + k];
            dTable[std::int64_t(key) * dim + k] = sum;
        }
    }
}

// Bits the sort looks at: enough for every key up to inputDim.
int keyBits(std::int64_t inputDim)
{
    int bits = 1;
    while ((std::int64_t(1) << bits) <= inputDim)
        ++bits;
    return bits;
}

std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

std::size_t sortBytes(std::int64_t count, std::int64_t inputDim)
{
    std::size_t bytes = 0;
    SLUICE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const std::int32_t *>(nullptr), static_cast<std::int32_t *>(nullptr),
                                                       static_cast<const std::int32_t *>(nullptr), static_cast<std::int32_t *>(nullptr), int(count), 0,
                                                       keyBits(inputDim)));
    return bytes;
}

} // namespace

void embeddingResetBad(Stream stream, std::int32_t *firstBad)
{
    const std::int32_t none = INT32_MAX;
    SLUICE_CUDA_CHECK(cudaMemcpyAsync(firstBad, &none, sizeof(none), cudaMemcpyHostToDevice, static_cast<cudaStream_t>(stream)));
}

void embeddingForward(Stream stream, const float *ids, const float *table, float *out, std::int64_t count, std::int64_t dim, std::int64_t inputDim,
                      std::int32_t *firstBad)
{
    detail::require(count >= 0 && dim > 0 && inputDim > 0, "embeddingForward", "count must not be negative, dim and inputDim positive");
    detail::require(count < INT32_MAX, "embeddingForward", "at most 2^31 - 1 ids a call");
    if (count == 0)
        return;
    detail::require(ids && table && out && firstBad, "embeddingForward", "ids, table, out and firstBad must be device pointers");
    gatherKernel<<<detail::rowBlocks(count), detail::kRowsPerBlock * detail::kWarp, 0, static_cast<cudaStream_t>(stream)>>>(ids, table, out, count, dim,
                                                                                                                          inputDim, firstBad);
    SLUICE_CUDA_CHECK_LAUNCH();
}

std::size_t embeddingBackwardScratchBytes(std::int64_t count, std::int64_t inputDim)
{
    if (count <= 0)
        return 0;
    return 4 * aligned(std::size_t(count) * sizeof(std::int32_t)) + aligned(sortBytes(count, inputDim));
}

void embeddingBackward(Stream stream, const float *ids, const float *dOut, float *dTable, std::int64_t count, std::int64_t dim, std::int64_t inputDim,
                       void *scratch, std::size_t scratchBytes)
{
    detail::require(count >= 0 && dim > 0 && inputDim > 0, "embeddingBackward", "count must not be negative, dim and inputDim positive");
    detail::require(count < INT32_MAX && inputDim < INT32_MAX, "embeddingBackward", "at most 2^31 - 1 ids and rows");
    if (count == 0)
        return;
    detail::require(ids && dOut && dTable && scratch, "embeddingBackward", "ids, dOut, dTable and scratch must be device pointers");
    detail::require(scratchBytes >= embeddingBackwardScratchBytes(count, inputDim), "embeddingBackward", "scratch is too small");
    const auto s = static_cast<cudaStream_t>(stream);
    const std::size_t block = aligned(std::size_t(count) * sizeof(std::int32_t));
    auto *base = static_cast<unsigned char *>(scratch);
    auto *keys = reinterpret_cast<std::int32_t *>(base), *keysSorted = reinterpret_cast<std::int32_t *>(base + block);
    auto *positions = reinterpret_cast<std::int32_t *>(base + 2 * block), *positionsSorted = reinterpret_cast<std::int32_t *>(base + 3 * block);
    void *sortTemp = base + 4 * block;
    std::size_t sortTempBytes = scratchBytes - 4 * block;

    constexpr int threads = 256;
    const auto blocks = unsigned(std::min<std::int64_t>((count + threads - 1) / threads, 65535));
    keysKernel<<<blocks, threads, 0, s>>>(ids, keys, positions, count, inputDim);
    SLUICE_CUDA_CHECK_LAUNCH();
    SLUICE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sortTemp, sortTempBytes, keys, keysSorted, positions, positionsSorted, int(count), 0,
                                                       keyBits(inputDim), s));
    sumRunsKernel<<<detail::rowBlocks(count), detail::kRowsPerBlock * detail::kWarp, 0, s>>>(keysSorted, positionsSorted, dOut, dTable, count, dim,
                                                                                            inputDim);
    SLUICE_CUDA_CHECK_LAUNCH();
}

} // namespace sluice::train::cuda
