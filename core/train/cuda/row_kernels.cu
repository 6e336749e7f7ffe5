// Row-wise and column-wise kernels for activation_kernels.h: softmax over rows (a warp per row,
// the row held in registers where it fits), its backward, and the bias gradient's column sums.
// Softmax is the CPU's softmaxRow: exp(x - max) in float, their sum in double, times 1 / sum.
#include "train/cuda/activation_kernels.h"
#include "train/cuda/check.h"
#include "train/cuda/column_reduce.cuh"
#include "train/cuda/device_util.cuh"

namespace sluice::train::cuda {
namespace {

using detail::kRowsPerBlock;
using detail::kWarp;

// One warp per row; the row is read once into registers where it fits (detail::LaneRow).
template <int PerLane>
__global__ void softmaxRowsKernel(const float *x, float *y, std::int64_t rows, std::int64_t cols)
{
    const int lane = threadIdx.x % kWarp;
    for (std::int64_t r = blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / kWarp; r < rows; r += std::int64_t(gridDim.x) * kRowsPerBlock) {
        const detail::LaneRow<PerLane> xr(x + r * cols, cols, lane);
        float *yr = y + r * cols;
        float top = -INFINITY;
        xr.forEach([&](std::int64_t, float v) { top = fmaxf(top, v); });
        top = detail::warpMax(top);
        double sum = 0;
        xr.forEach([&](std::int64_t, float v) { sum += expf(v - top); });
        const float inv = float(1.0 / detail::warpSum(sum));
        // In place is safe: every read of this row (by this lane, of its own elements) is done.
        xr.forEach([&](std::int64_t i, float v) { yr[i] = expf(v - top) * inv; });
    }
}

__global__ void softmaxBackwardKernel(const float *y, const float *dy, float *dx, std::int64_t rows, std::int64_t cols)
{
    const int lane = threadIdx.x % kWarp;
    for (std::int64_t r = blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / kWarp; r < rows; r += std::int64_t(gridDim.x) * kRowsPerBlock) {
        const float *yr = y + r * cols, *dyr = dy + r * cols;
        float *dxr = dx + r * cols;
        double dot = 0;
        for (std::int64_t i = lane; i < cols; i += kWarp)
            dot += double(dyr[i]) * yr[i];
        const float d = float(detail::warpSum(dot));
        for (std::int64_t i = lane; i < cols; i += kWarp)
            dxr[i] = yr[i] * (dyr[i] - d);
    }
}

// The bias gradient's term: the element itself.
struct ElementTerm
{
    const float *dz;
    std::int64_t cols;
    __device__ void operator()(std::int64_t r, std::int64_t c, double (&acc)[1]) const { acc[0] += dz[r * cols + c]; }
};

void checkShape(const char *op, std::int64_t rows, std::int64_t cols)
{
    detail::require(rows >= 0 && cols >= 0, op, "rows and cols must not be negative");
}

} // namespace

void softmaxRows(Stream stream, const float *x, float *y, std::int64_t rows, std::int64_t cols)
{
    checkShape("softmaxRows", rows, cols);
    if (rows == 0 || cols == 0)
        return;
    detail::require(x && y, "softmaxRows", "x and y must be device pointers");
    detail::byRowWidth(cols, [&](auto perLane) {
        softmaxRowsKernel<decltype(perLane)::value><<<detail::rowBlocks(rows), kRowsPerBlock * kWarp, 0, stream>>>(x, y, rows, cols);
    });
    SLUICE_CUDA_CHECK_LAUNCH();
}

void softmaxRowsBackward(Stream stream, const float *y, const float *dy, float *dx, std::int64_t rows, std::int64_t cols)
{
    checkShape("softmaxRowsBackward", rows, cols);
    if (rows == 0 || cols == 0)
        return;
    detail::require(y && dy && dx, "softmaxRowsBackward", "y, dy and dx must be device pointers");
    softmaxBackwardKernel<<<detail::rowBlocks(rows), kRowsPerBlock * kWarp, 0, stream>>>(y, dy, dx, rows, cols);
    SLUICE_CUDA_CHECK_LAUNCH();
}

void columnSums(Stream stream, const float *dz, float *sums, std::int64_t rows, std::int64_t cols, bool accumulate)
{
    checkShape("columnSums", rows, cols);
    if (cols == 0)
        return;
    detail::require(sums && (dz || rows == 0), "columnSums", "dz and sums must be device pointers");
    detail::reduceColumns<1>(stream, ElementTerm{dz, cols}, rows, cols, {{sums}}, accumulate);
}

} // namespace sluice::train::cuda
