// Kernels for recurrent_kernels.h: one grid-stride thread per (row, unit) of a time step.
#include "train/cuda/check.h"
#include "train/cuda/device_util.cuh"
#include "train/cuda/kernels/recurrent_kernels.h"

namespace sluice::train::cuda {
namespace {

__device__ inline float gate(GateKind k, float x) { return k == GateKind::Tanh ? tanhf(x) : 1.0f / (1.0f + expf(-x)); }
// f'(x) from y = f(x).
__device__ inline float gateDerivative(GateKind k, float y) { return k == GateKind::Tanh ? 1.0f - y * y : y * (1.0f - y); }

__global__ void gruForwardKernel(RecurrentStep s, const float *xw, std::int64_t xwStride, const float *rec, const float *rb, const float *hPrev,
                                 float *gates, float *recH, float *h)
{
    const std::int64_t U = s.units, G = 3 * U, n = s.rows * U;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
        const std::int64_t b = i / U, j = i % U;
        const float *x = xw + b * xwStride;
        const float *rc = rec ? rec + b * G : nullptr;
        auto recurrent = [&](std::int64_t k) { return (rc ? rc[k] : 0.0f) + (rb ? rb[k] : 0.0f); };
        const float z = gate(s.recurrentActivation, x[j] + recurrent(j));
        const float r = gate(s.recurrentActivation, x[U + j] + recurrent(U + j));
        const float rr = recurrent(2 * U + j);
        const float hh = gate(s.activation, x[2 * U + j] + r * rr);
        float *g = gates + b * G;
        g[j] = z;
        g[U + j] = r;
        g[2 * U + j] = hh;
        recH[i] = rr;
        h[i] = hh + z * (hPrev[i] - hh);
    }
}

__global__ void gruBackwardKernel(RecurrentStep s, const float *gates, const float *recH, const float *hPrev, const float *dOut,
                                  std::int64_t dOutStride, float *dxw, std::int64_t dxwStride, float *dRec, float *dh)
{
    const std::int64_t U = s.units, G = 3 * U, n = s.rows * U;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
        const std::int64_t b = i / U, j = i % U;
        const float *g = gates + b * G;
        const float d = dh[i] + (dOut ? dOut[b * dOutStride + j] : 0.0f);
        const float z = g[j], r = g[U + j], hh = g[2 * U + j];
        const float dz = d * (hPrev[i] - hh) * gateDerivative(s.recurrentActivation, z);
        const float dhh = d * (1.0f - z) * gateDerivative(s.activation, hh);
        const float dr = dhh * recH[i] * gateDerivative(s.recurrentActivation, r);
        dh[i] = d * z;
        float *dx = dxw + b * dxwStride, *drc = dRec + b * G;
        dx[j] = dz;
        dx[U + j] = dr;
        dx[2 * U + j] = dhh;
        drc[j] = dz;
        drc[U + j] = dr;
        drc[2 * U + j] = dhh * r;
    }
}

__global__ void lstmForwardKernel(RecurrentStep s, const float *xw, std::int64_t xwStride, const float *rec, const float *cPrev, float *gates,
                                  float *c, float *cAct, float *h)
{
    const std::int64_t U = s.units, G = 4 * U, n = s.rows * U;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
        const std::int64_t b = i / U, j = i % U;
        const float *x = xw + b * xwStride;
        const float *rc = rec ? rec + b * G : nullptr;
        auto pre = [&](std::int64_t k) { return x[k] + (rc ? rc[k] : 0.0f); };
        const float in = gate(s.recurrentActivation, pre(j));
        const float f = gate(s.recurrentActivation, pre(U + j));
        const float gg = gate(s.activation, pre(2 * U + j));
        const float o = gate(s.recurrentActivation, pre(3 * U + j));
        const float cj = f * cPrev[i] + in * gg;
        const float ca = gate(s.activation, cj);
        float *g = gates + b * G;
        g[j] = in;
        g[U + j] = f;
        g[2 * U + j] = gg;
        g[3 * U + j] = o;
        c[i] = cj;
        cAct[i] = ca;
        h[i] = o * ca;
    }
}

__global__ void lstmBackwardKernel(RecurrentStep s, const float *gates, const float *cPrev, const float *cAct, const float *dOut,
                                   std::int64_t dOutStride, const float *dh, float *dc, float *dPre, std::int64_t dPreStride, float *dPreT)
{
    const std::int64_t U = s.units, G = 4 * U, n = s.rows * U;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
        const std::int64_t b = i / U, j = i % U;
        const float *g = gates + b * G;
        const float d = dh[i] + (dOut ? dOut[b * dOutStride + j] : 0.0f);
        const float in = g[j], f = g[U + j], gg = g[2 * U + j], o = g[3 * U + j], ca = cAct[i];
        const float dO = d * ca * gateDerivative(s.recurrentActivation, o);
        const float dcj = dc[i] + d * o * gateDerivative(s.activation, ca);
        const float dI = dcj * gg * gateDerivative(s.recurrentActivation, in);
        const float dF = dcj * cPrev[i] * gateDerivative(s.recurrentActivation, f);
        const float dG = dcj * in * gateDerivative(s.activation, gg);
        dc[i] = dcj * f;
        float *dp = dPre + b * dPreStride, *dt = dPreT + b * G;
        dp[j] = dt[j] = dI;
        dp[U + j] = dt[U + j] = dF;
        dp[2 * U + j] = dt[2 * U + j] = dG;
        dp[3 * U + j] = dt[3 * U + j] = dO;
    }
}

void requireStep(const RecurrentStep &s, const char *op)
{
    detail::require(s.rows >= 0 && s.units > 0, op, "rows must not be negative and units must be positive");
}

} // namespace

void gruStepForward(Stream stream, const RecurrentStep &s, const float *xw, std::int64_t xwStride, const float *rec, const float *rb,
                    const float *hPrev, float *gates, float *recH, float *h)
{
    requireStep(s, "gruStepForward");
    if (s.rows == 0)
        return;
    detail::require(xw && hPrev && gates && recH && h, "gruStepForward", "xw, hPrev, gates, recH and h must be device pointers");
    const std::int64_t n = s.rows * s.units;
    gruForwardKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(s, xw, xwStride, rec, rb, hPrev, gates, recH, h);
    SLUICE_CUDA_CHECK_LAUNCH();
}

void gruStepBackward(Stream stream, const RecurrentStep &s, const float *gates, const float *recH, const float *hPrev, const float *dOut,
                     std::int64_t dOutStride, float *dxw, std::int64_t dxwStride, float *dRec, float *dh)
{
    requireStep(s, "gruStepBackward");
    if (s.rows == 0)
        return;
    detail::require(gates && recH && hPrev && dxw && dRec && dh, "gruStepBackward", "every buffer but dOut must be a device pointer");
    const std::int64_t n = s.rows * s.units;
    gruBackwardKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(s, gates, recH, hPrev, dOut, dOutStride, dxw,
                                                                                                dxwStride, dRec, dh);
    SLUICE_CUDA_CHECK_LAUNCH();
}

void lstmStepForward(Stream stream, const RecurrentStep &s, const float *xw, std::int64_t xwStride, const float *rec, const float *cPrev,
                     float *gates, float *c, float *cAct, float *h)
{
    requireStep(s, "lstmStepForward");
    if (s.rows == 0)
        return;
    detail::require(xw && cPrev && gates && c && cAct && h, "lstmStepForward", "xw, cPrev, gates, c, cAct and h must be device pointers");
    const std::int64_t n = s.rows * s.units;
    lstmForwardKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(s, xw, xwStride, rec, cPrev, gates, c, cAct, h);
    SLUICE_CUDA_CHECK_LAUNCH();
}

void lstmStepBackward(Stream stream, const RecurrentStep &s, const float *gates, const float *cPrev, const float *cAct, const float *dOut,
                      std::int64_t dOutStride, const float *dh, float *dc, float *dPre, std::int64_t dPreStride, float *dPreT)
{
    requireStep(s, "lstmStepBackward");
    if (s.rows == 0)
        return;
    detail::require(gates && cPrev && cAct && dh && dc && dPre && dPreT, "lstmStepBackward", "every buffer but dOut must be a device pointer");
    const std::int64_t n = s.rows * s.units;
    lstmBackwardKernel<<<detail::elementwiseBlocks(n), detail::kElementwiseThreads, 0, stream>>>(s, gates, cPrev, cAct, dOut, dOutStride, dh, dc,
                                                                                                 dPre, dPreStride, dPreT);
    SLUICE_CUDA_CHECK_LAUNCH();
}

} // namespace sluice::train::cuda
