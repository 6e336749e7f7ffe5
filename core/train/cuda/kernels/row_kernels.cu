// Row-wise and column-wise kernels for activation_kernels.h: softmax over rows (a warp per row,
// the row held in registers up to 1024 values), its backward, and the bias gradient's column sums.
// Softmax is the CPU's softmaxRow: exp(x - max) in float, their sum in double, times 1 / sum.
#include "train/cuda/kernels/activation_kernels.h"
#include "train/cuda/check.h"
#include "train/cuda/column_reduce.cuh"
#include "train/cuda/device_util.cuh"

namespace sluice::train::cuda {
namespace {

using detail::kRowsPerBlock;
using detail::kWarp;

// One warp per row. Each lane touches the same elements in every pass, so in place is safe.
// Rows of any width: three passes over memory (max, exponentials, scaling).
__global__ void softmaxRowsKernel(const float *x, float *y, std::int64_t rows, std::int64_t cols)
{
    const int lane = threadIdx.x % kWarp;
    for (std::int64_t r = blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / kWarp; r < rows; r += std::int64_t(gridDim.x) * kRowsPerBlock) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float top = -INFINITY;
        for (std::int64_t i = lane; i < cols; i += kWarp)
            top = fmaxf(top, xr[i]);
        top = detail::warpMax(top);
        double sum = 0;
        for (std::int64_t i = lane; i < cols; i += kWarp) {
            const float e = expf(xr[i] - top);
            yr[i] = e;
            sum += e;
        }
        const float inv = float(1.0 / detail::warpSum(sum));
        for (std::int64_t i = lane; i < cols; i += kWarp)
            yr[i] *= inv;
    }
}

// Rows of at most 32 * PerLane values, held in registers: one read and one write per element
// (the kernel above moves each element five times; this one measured 2964 against 1375 GB/s
// on an H100 at [65536, 1024]). Same arithmetic in the same order.
template <int PerLane>
__global__ void softmaxRowsInRegistersKernel(const float *x, float *y, std::int64_t rows, std::int64_t cols)
{
    const int lane = threadIdx.x % kWarp;
    for (std::int64_t r = blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / kWarp; r < rows; r += std::int64_t(gridDim.x) * kRowsPerBlock) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float v[PerLane];
        float top = -INFINITY;
#pragma unroll
        for (int k = 0; k < PerLane; ++k) {
            const std::int64_t i = lane + std::int64_t(k) * kWarp;
            v[k] = i < cols ? xr[i] : -INFINITY;
            top = fmaxf(top, v[k]);
        }
        top = detail::warpMax(top);
        double sum = 0;
#pragma unroll
        for (int k = 0; k < PerLane; ++k) {
            const std::int64_t i = lane + std::int64_t(k) * kWarp;
            if (i < cols) {
                v[k] = expf(v[k] - top);
                sum += v[k];
            }
        }
        const float inv = float(1.0 / detail::warpSum(sum));
#pragma unroll
        for (int k = 0; k < PerLane; ++k) {
            const std::int64_t i = lane + std::int64_t(k) * kWarp;
            if (i < cols)
                yr[i] = v[k] * inv;
        }
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
    const unsigned blocks = detail::rowBlocks(rows), threads = kRowsPerBlock * kWarp;
    if (cols <= 32)
        softmaxRowsInRegistersKernel<1><<<blocks, threads, 0, stream>>>(x, y, rows, cols);
    else if (cols <= 128)
        softmaxRowsInRegistersKernel<4><<<blocks, threads, 0, stream>>>(x, y, rows, cols);
    else if (cols <= 512)
        softmaxRowsInRegistersKernel<16><<<blocks, threads, 0, stream>>>(x, y, rows, cols);
    else if (cols <= 1024)
        softmaxRowsInRegistersKernel<32><<<blocks, threads, 0, stream>>>(x, y, rows, cols);
    else
        softmaxRowsKernel<<<blocks, threads, 0, stream>>>(x, y, rows, cols);
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
