// Kernels for activation_kernels.h. The formulas are the CPU backend's (train/activations.cpp)
// written for the device: ReLU keeps x where !(0 > x) (NaN and -0 pass, as _mm_max_ps(0, x)),
// gelu is the exact erf form, sigmoid never exponentiates a large positive number.
#include "train/cuda/activation_kernels.h"
#include "train/cuda/check.h"
#include "train/cuda/column_reduce.cuh"
#include "train/cuda/device_util.cuh"

namespace sluice::train::cuda {
namespace {

using detail::kRowsPerBlock;
using detail::kWarp;

constexpr float kInvSqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;

__device__ inline float sigmoidOf(float x)
{
    if (x >= 0.0f)
        return 1.0f / (1.0f + expf(-x));
    const float e = expf(x);
    return e / (1.0f + e);
}

__device__ inline float activate(ActivationKind kind, float v)
{
    switch (kind) {
    case ActivationKind::Relu:
        return 0.0f > v ? 0.0f : v;
    case ActivationKind::Gelu:
        return 0.5f * v * (1.0f + erff(v * kInvSqrt2));
    case ActivationKind::Tanh:
        return tanhf(v);
    case ActivationKind::Sigmoid:
        return sigmoidOf(v);
    default: // linear; softmax is done per row afterwards
        return v;
    }
}

__global__ void biasActivationKernel(ActivationKind kind, const float *x, const float *bias, float *y, float *pre, std::int64_t rows,
                                     std::int64_t cols)
{
    const std::int64_t n = rows * cols;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
        const float z = bias ? x[i] + bias[i % cols] : x[i];
        if (pre)
            pre[i] = z;
        y[i] = activate(kind, z);
    }
}

__global__ void activationBackwardKernel(ActivationKind kind, const float *z, const float *y, const float *dy, float *dx, std::int64_t n)
{
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
        float d;
        switch (kind) {
        case ActivationKind::Relu: // y > 0 exactly where z > 0
            d = y[i] > 0.0f ? dy[i] : 0.0f;
            break;
        case ActivationKind::Gelu: { // Phi(z) + z phi(z)
            const float v = z[i];
            const float cdf = 0.5f * (1.0f + erff(v * kInvSqrt2));
            const float pdf = kInvSqrt2Pi * expf(-0.5f * v * v);
            d = dy[i] * (cdf + v * pdf);
            break;
        }
        case ActivationKind::Tanh:
            d = dy[i] * (1.0f - y[i] * y[i]);
            break;
        case ActivationKind::Sigmoid:
            d = dy[i] * y[i] * (1.0f - y[i]);
            break;
        default:
            d = dy[i];
        }
        dx[i] = d;
    }
}

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

void biasActivationForward(Stream stream, ActivationKind kind, const float *x, const float *bias, float *y, float *preActivation,
                           std::int64_t rows, std::int64_t cols)
{
    checkShape("biasActivationForward", rows, cols);
    if (rows == 0 || cols == 0)
        return;
    detail::require(x && y, "biasActivationForward", "x and y must be device pointers");
    const std::int64_t n = rows * cols;
    biasActivationKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(kind, x, bias, y, preActivation, rows, cols);
    SLUICE_CUDA_CHECK_LAUNCH();
    if (kind == ActivationKind::Softmax)
        softmaxRows(stream, y, y, rows, cols);
}

void activationBackward(Stream stream, ActivationKind kind, const float *preActivation, const float *y, const float *dy, float *dx,
                        std::int64_t rows, std::int64_t cols)
{
    checkShape("activationBackward", rows, cols);
    if (rows == 0 || cols == 0)
        return;
    detail::require(dy && dx, "activationBackward", "dy and dx must be device pointers");
    detail::require(kind != ActivationKind::Gelu || preActivation, "activationBackward", "gelu needs the pre-activation values");
    detail::require(kind == ActivationKind::Linear || kind == ActivationKind::Gelu || y, "activationBackward", "this activation needs y");
    if (kind == ActivationKind::Softmax) {
        softmaxBackwardKernel<<<detail::rowBlocks(rows), kRowsPerBlock * kWarp, 0, stream>>>(y, dy, dx, rows, cols);
    } else {
        const std::int64_t n = rows * cols;
        activationBackwardKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(kind, preActivation, y, dy, dx, n);
    }
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
