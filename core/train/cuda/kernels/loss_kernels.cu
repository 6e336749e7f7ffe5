// Kernels for loss_kernels.h: one warp per sample. Each line follows the CPU loss it mirrors
// (same float / double mix, same clipping, same order of operations inside an element); only
// the order in which a row's terms are summed differs.
#include "train/cuda/check.h"
#include "train/cuda/device_util.cuh"
#include "train/cuda/kernels/loss_kernels.h"

namespace sluice::train::cuda {
namespace {

using detail::kRowsPerBlock;
using detail::kWarp;

constexpr float kEpsilon = 1e-7f; // Keras's backend.epsilon()
constexpr float kOneMinusEpsilon = 1.0f - kEpsilon;

__device__ inline float clip(float p) { return fminf(fmaxf(p, kEpsilon), kOneMinusEpsilon); }
__device__ inline bool inClipRange(float p) { return p >= kEpsilon && p <= kOneMinusEpsilon; }

__device__ inline float sigmoidOf(float x)
{
    if (x >= 0.0f)
        return 1.0f / (1.0f + expf(-x));
    const float e = expf(x);
    return e / (1.0f + e);
}

// The class a float target names: rounded half to even, NaN as 0, clamped to [0, classes).
__device__ inline std::int64_t classIndex(float t, std::int64_t classes)
{
    if (isnan(t))
        return 0;
    const float r = rintf(fminf(fmaxf(t, 0.0f), float(classes - 1)));
    const std::int64_t i = std::int64_t(r);
    return i < 0 ? 0 : (i > classes - 1 ? classes - 1 : i);
}

struct Row
{
    std::int64_t index; // the sample
    int lane;
};

__device__ inline float weightOf(const float *weights, std::int64_t i) { return weights ? weights[i] : 1.0f; }

// mse, mae, huber and binary cross-entropy: elementwise terms, their mean per sample. The kind
// is a template argument so that the loop holds no switch and unrolls.
template <LossKind K>
__device__ double elementwiseRow(const LossParams &p, const float *pr, const float *tr, float *d, std::int64_t n, float c, int lane)
{
    double sum = 0;
#pragma unroll 4
    for (std::int64_t j = lane; j < n; j += kWarp) {
        const float x = pr[j];
        switch (K) {
        case LossKind::Mse: {
            const float e = x - tr[j];
            sum += double(e) * e;
            if (d)
                d[j] = 2.0f * c * (x - tr[j]);
            break;
        }
        case LossKind::Mae: {
            sum += fabs(double(x) - tr[j]);
            if (d) {
                const float e = x - tr[j];
                d[j] = e > 0 ? c : (e < 0 ? -c : 0.0f);
            }
            break;
        }
        case LossKind::Huber: {
            const double e = fabs(double(x) - tr[j]);
            sum += e <= p.delta ? 0.5 * e * e : p.delta * e - 0.5 * double(p.delta) * p.delta;
            if (d) {
                const float e32 = x - tr[j];
                d[j] = c * fminf(fmaxf(e32, -p.delta), p.delta);
            }
            break;
        }
        default: { // binary cross-entropy
            const float s = p.labelSmoothing;
            const float t = s != 0 ? tr[j] * (1.0f - s) + 0.5f * s : tr[j];
            if (p.fromLogits) {
                sum += fmaxf(x, 0.0f) - x * t + log1pf(expf(-fabsf(x)));
                if (d)
                    d[j] = c * (sigmoidOf(x) - t);
            } else {
                const float q = clip(x);
                sum -= t * logf(q) + (1.0f - t) * logf(1.0f - q);
                if (d)
                    d[j] = inClipRange(x) ? c * ((1.0f - t) / (1.0f - q) - t / q) : 0.0f;
            }
        }
        }
    }
    return detail::warpSum(sum);
}

// log-sum-exp of x over `classes`, and 1 / sum(exp(x - top)) for the probabilities, as softmaxRow.
struct Lse
{
    float top;
    float inv;
    double lse;
};

__device__ Lse logSumExp(const float *x, std::int64_t classes, int lane)
{
    float top = -INFINITY;
    for (std::int64_t j = lane; j < classes; j += kWarp)
        top = fmaxf(top, x[j]);
    top = detail::warpMax(top);
    double sum = 0;
    for (std::int64_t j = lane; j < classes; j += kWarp)
        sum += expf(x[j] - top);
    sum = detail::warpSum(sum);
    return {top, float(1.0 / sum), double(top) + log(sum)};
}

// One position of categorical_crossentropy.
__device__ double categoricalPosition(const LossParams &p, const float *x, const float *target, float *d, std::int64_t classes, float c,
                                      int lane)
{
    const float s = p.labelSmoothing, k = s / float(classes);
    auto smoothed = [&](std::int64_t j) { return s != 0 ? target[j] * (1.0f - s) + k : target[j]; };
    double loss = 0;
    if (p.fromLogits) {
        const Lse l = logSumExp(x, classes, lane);
        float tsum = 0;
        for (std::int64_t j = lane; j < classes; j += kWarp) {
            const float t = smoothed(j);
            loss += double(t) * (l.lse - double(x[j]));
            tsum += t;
        }
        tsum = detail::warpSum(tsum);
        if (d)
            for (std::int64_t j = lane; j < classes; j += kWarp)
                d[j] = c * (expf(x[j] - l.top) * l.inv * tsum - smoothed(j));
        return detail::warpSum(loss);
    }
    // q = p / S clipped; dL/dp_j = (g_j - sum_k g_k q_k) / S with g_k = -t_k / q_k in range.
    double total = 0;
    for (std::int64_t j = lane; j < classes; j += kWarp)
        total += x[j];
    const float inv = float(1.0 / detail::warpSum(total));
    double gq = 0;
    for (std::int64_t j = lane; j < classes; j += kWarp) {
        const float q = x[j] * inv, t = smoothed(j);
        loss -= double(t) * logf(clip(q));
        const float g = inClipRange(q) ? -t / q : 0.0f;
        gq += double(g) * q;
    }
    gq = detail::warpSum(gq);
    if (d)
        for (std::int64_t j = lane; j < classes; j += kWarp) {
            const float q = x[j] * inv, t = smoothed(j);
            const float g = inClipRange(q) ? -t / q : 0.0f;
            d[j] = c * (g - float(gq)) * inv;
        }
    return detail::warpSum(loss);
}

// One position of sparse_categorical_crossentropy with class y.
__device__ double sparsePosition(const LossParams &p, const float *x, std::int64_t y, float *d, std::int64_t classes, float c, int lane)
{
    if (p.fromLogits) {
        const Lse l = logSumExp(x, classes, lane);
        if (d)
            for (std::int64_t j = lane; j < classes; j += kWarp) {
                const float v = c * (expf(x[j] - l.top) * l.inv);
                d[j] = j == y ? v - c : v;
            }
        return l.lse - double(x[y]);
    }
    double total = 0;
    for (std::int64_t j = lane; j < classes; j += kWarp)
        total += clip(x[j]);
    total = detail::warpSum(total);
    const float cy = clip(x[y]);
    if (d) {
        const float inv = float(1.0 / total);
        for (std::int64_t j = lane; j < classes; j += kWarp) {
            float v = inClipRange(x[j]) ? c * inv : 0.0f;
            if (j == y && inClipRange(x[y]))
                v -= c / cy;
            d[j] = v;
        }
    }
    return log(total) - log(double(cy));
}

template <LossKind K>
__global__ void lossKernel(LossParams p, const float *pred, const float *target, const float *weights, float scale, std::int64_t batch,
                           std::int64_t n, std::int64_t classes, float *perSample, float *dPred)
{
    const int lane = threadIdx.x % kWarp;
    constexpr bool categorical = K == LossKind::CategoricalCrossentropy || K == LossKind::SparseCategoricalCrossentropy;
    for (std::int64_t i = blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / kWarp; i < batch; i += std::int64_t(gridDim.x) * kRowsPerBlock) {
        float *d = dPred ? dPred + i * n : nullptr;
        if constexpr (!categorical) {
            const float c = n ? scale * weightOf(weights, i) / float(n) : 0.0f;
            const double sum = elementwiseRow<K>(p, pred + i * n, target + i * n, d, n, c, lane);
            if (lane == 0)
                perSample[i] = n ? float(sum / double(n)) : 0.0f;
            continue;
        }
        const std::int64_t steps = classes ? n / classes : 0;
        const float c = steps ? scale * weightOf(weights, i) / float(steps) : 0.0f;
        double sum = 0;
        for (std::int64_t s = 0; s < steps; ++s) {
            const std::int64_t at = (i * steps + s) * classes;
            float *ds = d ? dPred + at : nullptr;
            if (K == LossKind::SparseCategoricalCrossentropy)
                sum += sparsePosition(p, pred + at, classIndex(target[i * steps + s], classes), ds, classes, c, lane);
            else
                sum += categoricalPosition(p, pred + at, target + at, ds, classes, c, lane);
        }
        if (lane == 0)
            perSample[i] = steps ? float(sum / double(steps)) : 0.0f;
    }
}

} // namespace

void computeLoss(Stream stream, const LossParams &params, const float *pred, const float *target, const float *weights, float scale,
                 std::int64_t batch, std::int64_t n, std::int64_t classes, float *perSample, float *dPred)
{
    const char *op = "computeLoss";
    detail::require(batch >= 0 && n >= 0, op, "batch and n must not be negative");
    if (batch == 0)
        return;
    detail::require(perSample && (n == 0 || (pred && target)), op, "pred, target and perSample must be device pointers");
    const bool categorical = params.kind == LossKind::CategoricalCrossentropy || params.kind == LossKind::SparseCategoricalCrossentropy;
    if (categorical)
        detail::require(classes >= 1 && n % classes == 0, op, "the cross-entropies need classes >= 1 dividing n");
    if (params.kind == LossKind::Huber)
        detail::require(params.delta > 0, op, "huber's delta must be positive");
    const unsigned blocks = detail::rowBlocks(batch), threads = kRowsPerBlock * kWarp;
    switch (params.kind) {
#define SLUICE_LOSS_CASE(kind)                                                                                                           \
    case kind:                                                                                                                           \
        lossKernel<kind><<<blocks, threads, 0, stream>>>(params, pred, target, weights, scale, batch, n, classes, perSample, dPred); \
        break;
        SLUICE_LOSS_CASE(LossKind::Mse)
        SLUICE_LOSS_CASE(LossKind::Mae)
        SLUICE_LOSS_CASE(LossKind::Huber)
        SLUICE_LOSS_CASE(LossKind::BinaryCrossentropy)
        SLUICE_LOSS_CASE(LossKind::CategoricalCrossentropy)
        SLUICE_LOSS_CASE(LossKind::SparseCategoricalCrossentropy)
#undef SLUICE_LOSS_CASE
    }
    SLUICE_CUDA_CHECK_LAUNCH();
}

} // namespace sluice::train::cuda
