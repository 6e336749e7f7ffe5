// Kernels for dropout_kernels.h. The hash is train/model/initializers.cpp's mixHash (SplitMix64's
// finaliser), written once more for the device; tst_cuda_kernels checks that both give the
// same masks bit for bit.
#include "train/cuda/check.h"
#include "train/cuda/device_util.cuh"
#include "train/cuda/kernels/dropout_kernels.h"
#include "util/counter_random.h"

#include <cmath>

namespace sluice::train::cuda {
namespace {

// The CPU layer's hash (train/layers/dropout.cpp), the same function: the same masks.
using random::mixHash;

// One warp per row: the row's key is hashed once, its elements then by lane.
__global__ void dropoutKernel(std::uint64_t stepKey, std::int64_t rowOffset, std::int64_t rowStride, std::uint64_t threshold, float scale,
                              const float *in, float *out, std::int64_t rows, std::int64_t rowSize)
{
    const int lane = threadIdx.x % detail::kWarp;
    for (std::int64_t r = blockIdx.x * std::int64_t(detail::kRowsPerBlock) + threadIdx.x / detail::kWarp; r < rows;
         r += std::int64_t(gridDim.x) * detail::kRowsPerBlock) {
        const std::uint64_t rowKey = mixHash(stepKey, std::uint64_t(rowOffset + r * rowStride));
        const float *src = in + r * rowSize;
        float *dst = out + r * rowSize;
        for (std::int64_t c = lane; c < rowSize; c += detail::kWarp)
            dst[c] = (mixHash(rowKey, std::uint64_t(c)) >> 11) < threshold ? 0.0f : src[c] * scale;
    }
}

} // namespace

void dropoutApply(Stream stream, const DropoutParams &p, const float *in, float *out, std::int64_t rows, std::int64_t rowSize)
{
    detail::require(rows >= 0 && rowSize >= 0, "dropoutApply", "rows and rowSize must not be negative");
    detail::require(p.rate >= 0.0 && p.rate < 1.0, "dropoutApply", "rate must be in [0, 1)");
    if (rows == 0 || rowSize == 0)
        return;
    detail::require(in && out, "dropoutApply", "in and out must be device pointers");
    if (p.rate == 0.0) { // the CPU layer copies
        if (in != out)
            copyOnDevice(out, in, std::size_t(rows * rowSize) * sizeof(float), stream);
        return;
    }
    const std::uint64_t threshold = std::uint64_t(std::ldexp(p.rate, 53));
    const float scale = float(1.0 / (1.0 - p.rate));
    dropoutKernel<<<detail::rowBlocks(rows), detail::kRowsPerBlock * detail::kWarp, 0, stream>>>(p.stepKey, p.rowOffset, p.rowStride, threshold,
                                                                                               scale, in, out, rows, rowSize);
    SLUICE_CUDA_CHECK_LAUNCH();
}

} // namespace sluice::train::cuda
