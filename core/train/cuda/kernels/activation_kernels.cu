// Elementwise kernels for activation_kernels.h: bias + activation forward, activation backward.
// The formulas are the CPU backend's (train/model/activations.cpp) written for the device: ReLU keeps
// x where !(0 > x) (NaN and -0 pass, as _mm_max_ps(0, x)), gelu is the exact erf form, sigmoid
// never exponentiates a large positive number. Each kernel is instantiated per activation (no
// switch per element) and has a float4 form for the common case (rows a multiple of 4 wide, 16-byte
// aligned buffers, fewer than 2^32 values: 32-bit indices), which keeps them at the memory's pace.
#include "train/cuda/kernels/activation_kernels.h"
#include "train/cuda/check.h"
#include "train/cuda/device_util.cuh"

#include <cstdint>
#include <initializer_list>
#include <type_traits>

namespace sluice::train::cuda {
namespace {

using Kind = ActivationKind;
template <Kind K>
using KindConstant = std::integral_constant<Kind, K>;

constexpr float kInvSqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;

__device__ inline float sigmoidOf(float x)
{
    if (x >= 0.0f)
        return 1.0f / (1.0f + expf(-x));
    const float e = expf(x);
    return e / (1.0f + e);
}

template <Kind K>
__device__ inline float activate(float v)
{
    if constexpr (K == Kind::Relu)
        return 0.0f > v ? 0.0f : v;
    else if constexpr (K == Kind::Gelu)
        return 0.5f * v * (1.0f + erff(v * kInvSqrt2));
    else if constexpr (K == Kind::Tanh)
        return tanhf(v);
    else if constexpr (K == Kind::Sigmoid)
        return sigmoidOf(v);
    else // linear
        return v;
}

// dx from the pre-activation z (gelu), the output y (relu, tanh, sigmoid) and dy.
template <Kind K>
__device__ inline float derivative(float z, float y, float dy)
{
    if constexpr (K == Kind::Relu) { // y > 0 exactly where z > 0
        return y > 0.0f ? dy : 0.0f;
    } else if constexpr (K == Kind::Gelu) { // Phi(z) + z phi(z)
        const float cdf = 0.5f * (1.0f + erff(z * kInvSqrt2));
        const float pdf = kInvSqrt2Pi * expf(-0.5f * z * z);
        return dy * (cdf + z * pdf);
    } else if constexpr (K == Kind::Tanh) {
        return dy * (1.0f - y * y);
    } else if constexpr (K == Kind::Sigmoid) {
        return dy * y * (1.0f - y);
    } else {
        return dy;
    }
}

template <Kind K>
constexpr bool kNeedsY = K == Kind::Relu || K == Kind::Tanh || K == Kind::Sigmoid;

template <Kind K>
__global__ void biasActivationKernel(const float *x, const float *bias, float *y, float *pre, std::int64_t n, std::int64_t cols)
{
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
        const float z = bias ? x[i] + bias[i % cols] : x[i];
        if (pre)
            pre[i] = z;
        y[i] = activate<K>(z);
    }
}

template <Kind K>
__global__ void biasActivationVec4Kernel(const float4 *x, const float4 *bias, float4 *y, float4 *pre, std::uint32_t n4, std::uint32_t cols4)
{
    for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        float4 z = x[i];
        if (bias) {
            const float4 b = bias[i % cols4];
            z.x += b.x;
            z.y += b.y;
            z.z += b.z;
            z.w += b.w;
        }
        if (pre)
            pre[i] = z;
        y[i] = make_float4(activate<K>(z.x), activate<K>(z.y), activate<K>(z.z), activate<K>(z.w));
    }
}

template <Kind K>
__global__ void activationBackwardKernel(const float *z, const float *y, const float *dy, float *dx, std::int64_t n)
{
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
        dx[i] = derivative<K>(K == Kind::Gelu ? z[i] : 0.0f, kNeedsY<K> ? y[i] : 0.0f, dy[i]);
}

template <Kind K>
__global__ void activationBackwardVec4Kernel(const float4 *z, const float4 *y, const float4 *dy, float4 *dx, std::uint32_t n4)
{
    const float4 none = make_float4(0, 0, 0, 0);
    for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        const float4 zv = K == Kind::Gelu ? z[i] : none, yv = kNeedsY<K> ? y[i] : none, d = dy[i];
        dx[i] = make_float4(derivative<K>(zv.x, yv.x, d.x), derivative<K>(zv.y, yv.y, d.y), derivative<K>(zv.z, yv.z, d.z),
                            derivative<K>(zv.w, yv.w, d.w));
    }
}

// f(KindConstant<K>) for the elementwise kinds (softmax's elementwise part is linear).
template <typename F>
void withKind(Kind kind, F f)
{
    switch (kind) {
    case Kind::Relu:
        return f(KindConstant<Kind::Relu>{});
    case Kind::Gelu:
        return f(KindConstant<Kind::Gelu>{});
    case Kind::Tanh:
        return f(KindConstant<Kind::Tanh>{});
    case Kind::Sigmoid:
        return f(KindConstant<Kind::Sigmoid>{});
    default:
        return f(KindConstant<Kind::Linear>{});
    }
}

bool aligned16(const void *p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Whether the float4 kernels apply: whole float4s per row, aligned buffers, 32-bit indices.
bool vectorizable(std::int64_t n, std::int64_t cols, std::initializer_list<const void *> buffers)
{
    if (cols % 4 != 0 || n >= (std::int64_t(1) << 32))
        return false;
    for (const void *p : buffers)
        if (!aligned16(p))
            return false;
    return true;
}

void checkShape(const char *op, std::int64_t rows, std::int64_t cols)
{
    detail::require(rows >= 0 && cols >= 0, op, "rows and cols must not be negative");
}

} // namespace

void biasActivationForward(Stream stream, ActivationKind kind, const float *x, const float *bias, float *y, float *preActivation,
                           std::int64_t rows, std::int64_t cols)
{
    checkShape("biasActivationForward", rows, cols);
    if (rows == 0 || cols == 0)
        return;
    detail::require(x && y, "biasActivationForward", "x and y must be device pointers");
    const std::int64_t n = rows * cols;
    const bool vec = vectorizable(n, cols, {x, bias, y, preActivation});
    withKind(kind, [&](auto k) {
        constexpr Kind K = decltype(k)::value;
        if (vec)
            biasActivationVec4Kernel<K><<<detail::elementwiseBlocks(n / 4), detail::kElementwiseThreads, 0, stream>>>(
                reinterpret_cast<const float4 *>(x), reinterpret_cast<const float4 *>(bias), reinterpret_cast<float4 *>(y),
                reinterpret_cast<float4 *>(preActivation), std::uint32_t(n / 4), std::uint32_t(cols / 4));
        else
            biasActivationKernel<K><<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(x, bias, y, preActivation, n, cols);
    });
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
    if (kind == ActivationKind::Softmax)
        return softmaxRowsBackward(stream, y, dy, dx, rows, cols);
    const std::int64_t n = rows * cols;
    const bool vec = vectorizable(n, n, {preActivation, y, dy, dx}); // elementwise: only the count matters
    withKind(kind, [&](auto k) {
        constexpr Kind K = decltype(k)::value;
        if (vec)
            activationBackwardVec4Kernel<K><<<detail::elementwiseBlocks(n / 4), detail::kElementwiseThreads, 0, stream>>>(
                reinterpret_cast<const float4 *>(preActivation), reinterpret_cast<const float4 *>(y), reinterpret_cast<const float4 *>(dy),
                reinterpret_cast<float4 *>(dx), std::uint32_t(n / 4));
        else
            activationBackwardKernel<K><<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(preActivation, y, dy, dx, n);
    });
    SLUICE_CUDA_CHECK_LAUNCH();
}

} // namespace sluice::train::cuda
