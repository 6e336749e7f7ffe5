// Kernels for layer_norm_kernels.h: one warp per row for the row statistics and dx; dGamma and
// dBeta are column sums over the rows (column_reduce.cuh).
#include "train/cuda/check.h"
#include "train/cuda/column_reduce.cuh"
#include "train/cuda/device_util.cuh"
#include "train/cuda/layer_norm_kernels.h"

namespace sluice::train::cuda {
namespace {

using detail::kRowsPerBlock;
using detail::kWarp;

#define SLUICE_ROWS_PER_WARP(r, rows) \
    for (std::int64_t r = blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / kWarp; r < (rows); r += std::int64_t(gridDim.x) * kRowsPerBlock)

// Each row is read once into registers where it fits (detail::LaneRow), then passed over for
// the mean, the variance and the output.
template <int PerLane>
__global__ void forwardKernel(const float *x, const float *gamma, const float *beta, float *y, float *stats, std::int64_t rows,
                              std::int64_t F, double epsilon)
{
    const int lane = threadIdx.x % kWarp;
    SLUICE_ROWS_PER_WARP(r, rows)
    {
        const detail::LaneRow<PerLane> xr(x + r * F, F, lane);
        float *yr = y + r * F;
        double sum = 0;
        xr.forEach([&](std::int64_t, float v) { sum += v; });
        const double mean = detail::warpSum(sum) / double(F);
        double sq = 0;
        xr.forEach([&](std::int64_t, float v) { sq += (v - mean) * (v - mean); });
        sq = detail::warpSum(sq);
        const float inv = float(1.0 / sqrt(sq / double(F) + epsilon));
        const float m = float(mean);
        if (lane == 0) {
            stats[2 * r] = m;
            stats[2 * r + 1] = inv;
        }
        xr.forEach([&](std::int64_t i, float xv) {
            float v = (xv - m) * inv;
            if (gamma)
                v *= gamma[i];
            if (beta)
                v += beta[i];
            yr[i] = v;
        });
    }
}

// dx per row, x and dy read once into registers where they fit.
template <int PerLane>
__global__ void dxKernel(const float *x, const float *gamma, const float *stats, const float *dy, float *dx, std::int64_t rows, std::int64_t F)
{
    const int lane = threadIdx.x % kWarp;
    SLUICE_ROWS_PER_WARP(r, rows)
    {
        const detail::LaneRow<PerLane> xr(x + r * F, F, lane), dyr(dy + r * F, F, lane);
        float *dxr = dx + r * F;
        const float m = stats[2 * r], inv = stats[2 * r + 1];
        double sumG = 0, sumGX = 0;
        xr.forEachWith(dyr, [&](std::int64_t i, float xv, float d) {
            const float g = gamma ? d * gamma[i] : d;
            sumG += g;
            sumGX += double(g) * ((xv - m) * inv);
        });
        const float meanG = float(detail::warpSum(sumG) / double(F)), meanGX = float(detail::warpSum(sumGX) / double(F));
        xr.forEachWith(dyr, [&](std::int64_t i, float xv, float d) {
            const float g = gamma ? d * gamma[i] : d;
            dxr[i] = inv * (g - meanG - (xv - m) * inv * meanGX);
        });
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
    detail::byRowWidth(features, [&](auto perLane) {
        forwardKernel<decltype(perLane)::value>
            <<<detail::rowBlocks(rows), kRowsPerBlock * kWarp, 0, stream>>>(x, gamma, beta, y, stats, rows, features, epsilon);
    });
    SLUICE_CUDA_CHECK_LAUNCH();
}

void layerNormBackward(Stream stream, const float *x, const float *gamma, const float *stats, const float *dy, float *dx, float *dGamma,
                       float *dBeta, std::int64_t rows, std::int64_t features)
{
    detail::require(rows >= 0 && features > 0, "layerNormBackward", "needs rows >= 0 and features > 0");
    if (rows == 0)
        return;
    detail::require(x && stats && dy, "layerNormBackward", "x, stats and dy must be device pointers");
    if (dGamma || dBeta) {
        detail::reduceColumns<2>(stream, ParamGradTerm{x, stats, dy, features}, rows, features, {{dGamma, dBeta}}, true);
    }
    if (dx) {
        detail::byRowWidth(features, [&](auto perLane) {
            dxKernel<decltype(perLane)::value><<<detail::rowBlocks(rows), kRowsPerBlock * kWarp, 0, stream>>>(x, gamma, stats, dy, dx, rows, features);
        });
        SLUICE_CUDA_CHECK_LAUNCH();
    }
}

} // namespace sluice::train::cuda
