// Kernels for layer_norm_kernels.h: one warp per row for the row statistics and dx; dGamma and
// dBeta are column sums over the rows (column_reduce.cuh). Backward thus reads x and dy twice; a
// one-pass version (dx plus per-warp dGamma / dBeta sums in shared memory) measured slower on an
// H100, 897 against 777 us at [65536, 1024] (64 KB of shared memory a block cut the blocks in flight).
#include "train/cuda/check.h"
#include "train/cuda/column_reduce.cuh"
#include "train/cuda/device_util.cuh"
#include "train/cuda/kernels/layer_norm_kernels.h"

namespace sluice::train::cuda {
namespace {

using detail::kRowsPerBlock;
using detail::kWarp;

#define SLUICE_ROWS_PER_WARP(r, rows) \
    for (std::int64_t r = blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / kWarp; r < (rows); r += std::int64_t(gridDim.x) * kRowsPerBlock)

// Mean, variance, output: three passes over the row, the later ones served by the caches. (A
// version holding the row in registers measured slower on an H100, 1650 against 2547 GB/s at
// [65536, 1024]: the registers it takes cut the warps in flight.)
__global__ void forwardKernel(const float *x, const float *gamma, const float *beta, float *y, float *stats, std::int64_t rows,
                              std::int64_t F, double epsilon)
{
    const int lane = threadIdx.x % kWarp;
    SLUICE_ROWS_PER_WARP(r, rows)
    {
        const float *xr = x + r * F;
        float *yr = y + r * F;
        double sum = 0;
        for (std::int64_t i = lane; i < F; i += kWarp)
            sum += xr[i];
        const double mean = detail::warpSum(sum) / double(F);
        double sq = 0;
        for (std::int64_t i = lane; i < F; i += kWarp)
            sq += (xr[i] - mean) * (xr[i] - mean);
        sq = detail::warpSum(sq);
        const float inv = float(1.0 / sqrt(sq / double(F) + epsilon));
        const float m = float(mean);
        if (lane == 0) {
            stats[2 * r] = m;
            stats[2 * r + 1] = inv;
        }
        for (std::int64_t i = lane; i < F; i += kWarp) {
            float v = (xr[i] - m) * inv;
            if (gamma)
                v *= gamma[i];
            if (beta)
                v += beta[i];
            yr[i] = v;
        }
    }
}

__global__ void dxKernel(const float *x, const float *gamma, const float *stats, const float *dy, float *dx, std::int64_t rows, std::int64_t F)
{
    const int lane = threadIdx.x % kWarp;
    SLUICE_ROWS_PER_WARP(r, rows)
    {
        const float *xr = x + r * F, *dyr = dy + r * F;
        float *dxr = dx + r * F;
        const float m = stats[2 * r], inv = stats[2 * r + 1];
        double sumG = 0, sumGX = 0;
        for (std::int64_t i = lane; i < F; i += kWarp) {
            const float g = gamma ? dyr[i] * gamma[i] : dyr[i];
            sumG += g;
            sumGX += double(g) * ((xr[i] - m) * inv);
        }
        const float meanG = float(detail::warpSum(sumG) / double(F)), meanGX = float(detail::warpSum(sumGX) / double(F));
        for (std::int64_t i = lane; i < F; i += kWarp) {
            const float g = gamma ? dyr[i] * gamma[i] : dyr[i];
            dxr[i] = inv * (g - meanG - (xr[i] - m) * inv * meanGX);
        }
    }
}

// dGamma's and dBeta's terms: dy * xhat and dy, xhat recomputed as the CPU layer does.
struct ParamGradTerm
{
    const float *x, *stats, *dy;
    std::int64_t F;
    __device__ void operator()(std::int64_t r, std::int64_t i, double (&acc)[2]) const
    {
        const float d = dy[r * F + i];
        acc[0] += d * ((x[r * F + i] - stats[2 * r]) * stats[2 * r + 1]);
        acc[1] += d;
    }
};

} // namespace

void layerNormForward(Stream stream, const float *x, const float *gamma, const float *beta, float *y, float *stats, std::int64_t rows,
                      std::int64_t features, double epsilon)
{
    detail::require(rows >= 0 && features > 0, "layerNormForward", "needs rows >= 0 and features > 0");
    if (rows == 0)
        return;
    detail::require(x && y && stats, "layerNormForward", "x, y and stats must be device pointers");
    forwardKernel<<<detail::rowBlocks(rows), kRowsPerBlock * kWarp, 0, stream>>>(x, gamma, beta, y, stats, rows, features, epsilon);
    SLUICE_CUDA_CHECK_LAUNCH();
}

void layerNormBackward(Stream stream, const float *x, const float *gamma, const float *stats, const float *dy, float *dx, float *dGamma,
                       float *dBeta, std::int64_t rows, std::int64_t features)
{
    detail::require(rows >= 0 && features > 0, "layerNormBackward", "needs rows >= 0 and features > 0");
    if (rows == 0)
        return;
    detail::require(x && stats && dy, "layerNormBackward", "x, stats and dy must be device pointers");
    if (dGamma || dBeta)
        detail::reduceColumns<2>(stream, ParamGradTerm{x, stats, dy, features}, rows, features, {{dGamma, dBeta}}, true);
    if (dx) {
        dxKernel<<<detail::rowBlocks(rows), kRowsPerBlock * kWarp, 0, stream>>>(x, gamma, stats, dy, dx, rows, features);
        SLUICE_CUDA_CHECK_LAUNCH();
    }
}

} // namespace sluice::train::cuda
