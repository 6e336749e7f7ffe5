// Kernels for optimizer_kernels.h: elementwise, grid-stride, each element's arithmetic in the
// order of the CPU loop it mirrors; per-step scalars (Adam's alpha) computed on the host exactly
// as the CPU does.
#include "train/cuda/check.h"
#include "train/cuda/device_util.cuh"
#include "train/cuda/kernels/optimizer_kernels.h"

#include <cmath>

namespace sluice::train::cuda {
namespace {

#define SLUICE_GRID_STRIDE(i, n) \
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < (n); i += std::int64_t(gridDim.x) * blockDim.x)

__global__ void sgdKernel(float lr, float mu, bool nesterov, float wd, float *w, const float *g, float *v, std::int64_t n)
{
    SLUICE_GRID_STRIDE(i, n)
    {
        float wi = w[i];
        if (wd != 0)
            wi -= wi * wd;
        if (!v) {
            wi -= g[i] * lr;
        } else {
            const float vi = -g[i] * lr + v[i] * mu;
            v[i] = vi;
            wi += nesterov ? -g[i] * lr + vi * mu : vi;
        }
        w[i] = wi;
    }
}

__global__ void adamKernel(float c1, float c2, float eps, float alpha, float wd, float *w, const float *g, float *m, float *v, float *vh,
                           std::int64_t n)
{
    SLUICE_GRID_STRIDE(i, n)
    {
        float wi = w[i];
        if (wd != 0)
            wi -= wi * wd;
        const float gi = g[i];
        const float mi = m[i] + (gi - m[i]) * c1;
        const float vi = v[i] + (gi * gi - v[i]) * c2;
        m[i] = mi;
        v[i] = vi;
        float denominatorV = vi;
        if (vh) {
            denominatorV = fmaxf(vh[i], vi);
            vh[i] = denominatorV;
        }
        w[i] = wi - mi * alpha / (sqrtf(denominatorV) + eps);
    }
}

__global__ void rmsPropKernel(float lr, float rho, float c, float eps, float mu, float wd, float *w, const float *g, float *v, float *mom,
                              float *avg, std::int64_t n)
{
    SLUICE_GRID_STRIDE(i, n)
    {
        float wi = w[i];
        if (wd != 0)
            wi -= wi * wd;
        const float gi = g[i];
        const float vi = rho * v[i] + c * (gi * gi);
        v[i] = vi;
        float denominator;
        if (avg) {
            const float ai = rho * avg[i] + c * gi;
            avg[i] = ai;
            denominator = vi - ai * ai + eps;
        } else {
            denominator = vi + eps;
        }
        const float increment = lr * gi / sqrtf(denominator);
        if (mom) {
            const float mi = mu * mom[i] + increment;
            mom[i] = mi;
            wi -= mi;
        } else {
            wi -= increment;
        }
        w[i] = wi;
    }
}

// The norm in two passes with a fixed shape (kNormBlocks blocks of kNormThreads threads, then
// one block), so that the sum's order, and its bits, do not depend on the device.
constexpr int kNormBlocks = 1024, kNormThreads = 256;

__global__ void sumSquaresKernel(const float *g, std::int64_t n, double *partial)
{
    __shared__ double s[kNormThreads];
    double acc = 0;
    for (std::int64_t i = blockIdx.x * std::int64_t(kNormThreads) + threadIdx.x; i < n; i += std::int64_t(kNormBlocks) * kNormThreads)
        acc += double(g[i]) * g[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int half = kNormThreads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            s[threadIdx.x] += s[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = s[0];
}

__global__ void normKernel(const double *partial, double *norm)
{
    __shared__ double s[kNormThreads];
    double acc = 0;
    for (int i = threadIdx.x; i < kNormBlocks; i += kNormThreads)
        acc += partial[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int half = kNormThreads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            s[threadIdx.x] += s[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *norm = sqrt(s[0]);
}

// Keras: g * clipnorm / max(norm, clipnorm); a non-finite norm is left to the trainer.
__global__ void clipKernel(float *g, std::int64_t n, double clipnorm, const double *norm)
{
    const double nv = *norm;
    if (!(clipnorm > 0 && isfinite(nv) && nv > clipnorm))
        return;
    const float factor = float(clipnorm / nv);
    SLUICE_GRID_STRIDE(i, n)
    g[i] *= factor;
}

__global__ void stateUpdateKernel(float *w, float *u, std::int64_t n)
{
    SLUICE_GRID_STRIDE(i, n)
    {
        w[i] += u[i];
        u[i] = 0.0f;
    }
}

void requireBuffers(const char *op, std::int64_t n, bool ok)
{
    detail::require(n >= 0, op, "n must not be negative");
    detail::require(n == 0 || ok, op, "weights, grads and the optimizer's slots must be device pointers");
}

} // namespace

void sgdUpdate(Stream stream, const SgdParams &p, float *weights, const float *grads, float *velocity, std::int64_t n)
{
    requireBuffers("sgdUpdate", n, weights && grads && (p.momentum == 0 || velocity));
    if (n == 0)
        return;
    const float wd = p.weightDecay * p.learningRate;
    sgdKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(p.learningRate, p.momentum, p.nesterov, wd, weights, grads,
                                                                                      p.momentum != 0 ? velocity : nullptr, n);
    SLUICE_CUDA_CHECK_LAUNCH();
}

void adamUpdate(Stream stream, const AdamParams &p, float *weights, const float *grads, float *m, float *v, float *vHat, std::int64_t n)
{
    requireBuffers("adamUpdate", n, weights && grads && m && v && (!p.amsgrad || vHat));
    detail::require(p.iteration >= 1, "adamUpdate", "iteration is 1-based");
    if (n == 0)
        return;
    const double t = double(p.iteration);
    const float alpha = float(double(p.learningRate) * std::sqrt(1.0 - std::pow(p.beta2, t)) / (1.0 - std::pow(p.beta1, t)));
    const float wd = p.weightDecay * p.learningRate;
    adamKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(
        float(1.0 - p.beta1), float(1.0 - p.beta2), float(p.epsilon), alpha, wd, weights, grads, m, v, p.amsgrad ? vHat : nullptr, n);
    SLUICE_CUDA_CHECK_LAUNCH();
}

void rmsPropUpdate(Stream stream, const RmsPropParams &p, float *weights, const float *grads, float *velocity, float *momentumSlot,
                   float *averageGradient, std::int64_t n)
{
    const bool momentum = p.momentum > 0;
    requireBuffers("rmsPropUpdate", n, weights && grads && velocity && (!momentum || momentumSlot) && (!p.centered || averageGradient));
    if (n == 0)
        return;
    const float wd = p.weightDecay * p.learningRate;
    rmsPropKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(
        p.learningRate, float(p.rho), float(1.0 - p.rho), float(p.epsilon), float(p.momentum), wd, weights, grads, velocity,
        momentum ? momentumSlot : nullptr, p.centered ? averageGradient : nullptr, n);
    SLUICE_CUDA_CHECK_LAUNCH();
}

void clipByGlobalNorm(Stream stream, float *grads, std::int64_t n, double clipnorm, double *workspace)
{
    requireBuffers("clipByGlobalNorm", n, grads != nullptr);
    detail::require(workspace != nullptr, "clipByGlobalNorm", "needs kGlobalNormWorkspace doubles of device workspace");
    double *norm = workspace, *partial = workspace + 1;
    sumSquaresKernel<<<kNormBlocks, kNormThreads, 0, stream>>>(grads, n, partial);
    SLUICE_CUDA_CHECK_LAUNCH();
    normKernel<<<1, kNormThreads, 0, stream>>>(partial, norm);
    SLUICE_CUDA_CHECK_LAUNCH();
    if (n > 0 && clipnorm > 0) {
        clipKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(grads, n, clipnorm, norm);
        SLUICE_CUDA_CHECK_LAUNCH();
    }
}

void applyStateUpdates(Stream stream, float *weights, float *updates, std::int64_t n)
{
    detail::require(n >= 0, "applyStateUpdates", "n must not be negative");
    if (n == 0)
        return;
    detail::require(weights && updates, "applyStateUpdates", "weights and updates must be device pointers");
    stateUpdateKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(weights, updates, n);
    SLUICE_CUDA_CHECK_LAUNCH();
}

} // namespace sluice::train::cuda
