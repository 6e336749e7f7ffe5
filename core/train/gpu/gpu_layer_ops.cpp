// Layer passes on a GPU (gpu_layer_ops.h). Shapes are per sample; a layer over the last axis
// sees its input as rows x lastDimension with rows = samples * (elements / lastDimension).
#include "train/gpu/gpu_layer_ops.h"

#include "train/cuda/kernels/activation_kernels.h"
#include "train/cuda/kernels/batch_norm_kernels.h"
#include "train/cuda/kernels/dropout_kernels.h"
#include "train/cuda/kernels/embedding_kernels.h"
#include "train/cuda/kernels/layer_norm_kernels.h"

#include <stdexcept>

namespace sluice::train::gpu {

namespace {

using Kind = LayerKernelSpec::Kind;

std::int64_t lastDim(const Shape &s) { return s.empty() ? 1 : s.back(); }

// Rows of the last axis in `samples` samples of shape s.
std::int64_t axisRows(std::int64_t samples, const Shape &s)
{
    const std::int64_t last = lastDim(s);
    return last > 0 ? samples * (shapeCount(s) / last) : 0;
}

// C = op(A) op(B) (+ beta C) in the context's precision; bf16 operands are converted by the caller.
void product(const DeviceContext &dc, bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, const float *A, std::int64_t lda,
             const float *B, std::int64_t ldb, float beta, float *C, std::int64_t ldc)
{
    dc.blas->gemm(dc.stream, transA, transB, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc, dc.mode);
}

void denseForward(const DeviceContext &dc, const LayerCall &call, float *y, LayerScratch &s)
{
    const Shape &in = call.inputShapes[0];
    const std::int64_t F = lastDim(in), U = call.spec.units, R = axisRows(call.rows, in);
    if (dc.bf16) {
        ensureSize(s.inputBf16, std::size_t(R * F));
        ensureSize(s.kernelBf16, std::size_t(F * U));
        cuda::convertToBf16(dc.stream, call.inputs[0], s.inputBf16.data(), R * F);
        cuda::convertToBf16(dc.stream, call.params[0], s.kernelBf16.data(), F * U);
        dc.blas->gemmBf16(dc.stream, false, false, R, U, F, 1.0f, s.inputBf16.data(), F, s.kernelBf16.data(), U, 0.0f, y, U);
    } else {
        product(dc, false, false, R, U, F, call.inputs[0], F, call.params[0], U, 0.0f, y, U);
    }
    const float *bias = call.spec.useBias ? call.params[1] : nullptr;
    float *z = nullptr;
    if (activationNeedsInput(call.spec.activation)) {
        ensureSize(s.saved, std::size_t(R * U));
        z = s.saved.data();
    }
    if (bias || call.spec.activation != ActivationKind::Linear)
        cuda::biasActivationForward(dc.stream, call.spec.activation, y, bias, y, z, R, U);
}

void denseBackward(const DeviceContext &dc, const LayerCall &call, const float *y, float *dy, float *dx, std::span<float *const> grads,
                   LayerScratch &s)
{
    const Shape &in = call.inputShapes[0];
    const std::int64_t F = lastDim(in), U = call.spec.units, R = axisRows(call.rows, in);
    // dz = dy * f'(z), in place.
    if (call.spec.activation != ActivationKind::Linear)
        cuda::activationBackward(dc.stream, call.spec.activation, s.saved.empty() ? nullptr : s.saved.data(), y, dy, dy, R, U);
    if (call.spec.useBias)
        cuda::columnSums(dc.stream, dy, grads[1], R, U, true);
    if (dc.bf16) {
        ensureSize(s.gradientBf16, std::size_t(R * U));
        cuda::convertToBf16(dc.stream, dy, s.gradientBf16.data(), R * U);
        // dW (F x U) += x^T dz; dx (R x F) = dz W^T.
        dc.blas->gemmBf16(dc.stream, true, false, F, U, R, 1.0f, s.inputBf16.data(), F, s.gradientBf16.data(), U, 1.0f, grads[0], U);
        if (dx)
            dc.blas->gemmBf16(dc.stream, false, true, R, F, U, 1.0f, s.gradientBf16.data(), U, s.kernelBf16.data(), U, 0.0f, dx, F);
        return;
    }
    product(dc, true, false, F, U, R, call.inputs[0], F, dy, U, 1.0f, grads[0], U);
    if (dx)
        product(dc, false, true, R, F, U, dy, U, call.params[0], U, 0.0f, dx, F);
}

cuda::DropoutParams dropoutParams(const LayerCall &call, const PassContext &ctx)
{
    cuda::DropoutParams p;
    p.rate = call.spec.rate;
    const std::uint64_t key = cuda::dropoutLayerKey(call.spec.seed ? &*call.spec.seed : nullptr, call.layer->name());
    p.stepKey = cuda::dropoutStepKey(ctx.seed, key, ctx.step);
    p.rowOffset = ctx.globalRowOffset;
    p.rowStride = ctx.globalRowStride;
    return p;
}

// BatchNormalization's params in Keras's order: gamma (scale), beta (center), moving_mean,
// moving_variance; the same indices pick their gradients.
struct BatchNormIndices
{
    int gamma = -1, beta = -1, movingMean = 0, movingVariance = 1;
};

BatchNormIndices batchNormIndices(const LayerKernelSpec &spec)
{
    BatchNormIndices k;
    int i = 0;
    if (spec.scale)
        k.gamma = i++;
    if (spec.center)
        k.beta = i++;
    k.movingMean = i++;
    k.movingVariance = i;
    return k;
}

template <typename T>
T *nth(const std::vector<T *> &v, int i)
{
    return i >= 0 && std::size_t(i) < v.size() ? v[std::size_t(i)] : nullptr;
}

template <typename T>
T *nth(std::span<T *const> v, int i)
{
    return i >= 0 && std::size_t(i) < v.size() ? v[std::size_t(i)] : nullptr;
}

void batchNormForward(const DeviceContext &dc, const LayerCall &call, const PassContext &ctx, float *y, LayerScratch &s)
{
    const std::int64_t C = lastDim(call.outputShape), N = axisRows(call.rows, call.outputShape);
    const BatchNormIndices k = batchNormIndices(call.spec);
    ensureSize(s.saved, std::size_t(3 * C));
    cuda::batchNormForward(dc.stream, call.inputs[0], nth(call.params, k.gamma), nth(call.params, k.beta), nth(call.params, k.movingMean),
                           nth(call.params, k.movingVariance), ctx.training, y, s.saved.data(), N, C, call.spec.epsilon);
}

void batchNormBackward(const DeviceContext &dc, const LayerCall &call, const PassContext &ctx, const float *dy, float *dx,
                       std::span<float *const> grads, LayerScratch &s)
{
    const std::int64_t C = lastDim(call.outputShape), N = axisRows(call.rows, call.outputShape);
    const BatchNormIndices k = batchNormIndices(call.spec);
    // The moving statistics' share of the update, as the CPU layer computes it: the replica's
    // samples over the global batch's (ctx.lossScale), times 1 - momentum.
    const double share = double(call.rows) * ctx.lossScale * (1.0 - call.spec.momentum);
    cuda::batchNormBackward(dc.stream, call.inputs[0], nth(call.params, k.gamma), nth(call.params, k.movingMean),
                            nth(call.params, k.movingVariance), s.saved.data(), dy, dx, nth(grads, k.gamma), nth(grads, k.beta),
                            nth(grads, k.movingMean), nth(grads, k.movingVariance), N, C, share);
}

void copyValues(const DeviceContext &dc, float *dst, const float *src, std::int64_t n)
{
    if (dst != src)
        cuda::copyOnDevice(dst, src, std::size_t(n) * sizeof(float), dc.stream);
}

} // namespace

bool supportedOnGpu(const Layer &layer, const std::vector<Shape> &inputShapes, const Shape &outputShape, std::string &reason)
{
    const auto spec = layer.kernelSpec();
    if (spec.kind == Kind::None) {
        reason = "has no CUDA kernels yet (" + layer.className() + " trains on the CPU backend only)";
        return false;
    }
    if (spec.kind == Kind::Embedding && spec.sparseUpdates) {
        reason = "has sparse_updates, which the CPU backend's optimizer does only (on a GPU the whole table is updated: set it to false)";
        return false;
    }
    auto known = [](const Shape &s) {
        for (auto d : s)
            if (d < 0)
                return false;
        return true;
    };
    for (const auto &s : inputShapes)
        if (!known(s)) {
            reason = "has an input of unknown shape " + shapeString(s) + "; the CUDA backend needs fixed shapes";
            return false;
        }
    if (!known(outputShape)) {
        reason = "has an output of unknown shape " + shapeString(outputShape) + "; the CUDA backend needs fixed shapes";
        return false;
    }
    return true;
}

void layerForward(const DeviceContext &dc, const LayerCall &call, const PassContext &ctx, float *output, LayerScratch &scratch)
{
    const std::int64_t n = call.rows * shapeCount(call.outputShape);
    switch (call.spec.kind) {
    case Kind::Dense:
        denseForward(dc, call, output, scratch);
        return;
    case Kind::Activation: {
        const std::int64_t cols = lastDim(call.outputShape);
        cuda::biasActivationForward(dc.stream, call.spec.activation, call.inputs[0], nullptr, output, nullptr, axisRows(call.rows, call.outputShape), cols);
        return;
    }
    case Kind::Dropout:
        if (ctx.training && call.spec.rate > 0)
            cuda::dropoutApply(dc.stream, dropoutParams(call, ctx), call.inputs[0], output, call.rows, shapeCount(call.outputShape));
        else
            copyValues(dc, output, call.inputs[0], n);
        return;
    case Kind::LayerNormalization: {
        const std::int64_t F = lastDim(call.outputShape), R = axisRows(call.rows, call.outputShape);
        ensureSize(scratch.saved, std::size_t(2 * R));
        const float *gamma = call.spec.scale ? call.params[0] : nullptr;
        const float *beta = call.spec.center ? call.params[call.spec.scale ? 1 : 0] : nullptr;
        cuda::layerNormForward(dc.stream, call.inputs[0], gamma, beta, output, scratch.saved.data(), R, F, call.spec.epsilon);
        return;
    }
    case Kind::Reshape:
        copyValues(dc, output, call.inputs[0], n);
        return;
    case Kind::Gru:
    case Kind::Lstm:
        recurrentForward(dc, call, output, scratch);
        return;
    case Kind::RepeatVector:
        repeatVectorForward(dc, call, output);
        return;
    case Kind::Conv:
        convForward(dc, call, output, scratch);
        return;
    case Kind::Pooling:
    case Kind::GlobalPooling:
        poolingForward(dc, call, ctx, output, scratch);
        return;
    case Kind::BatchNormalization:
        batchNormForward(dc, call, ctx, output, scratch);
        return;
    case Kind::Embedding: {
        const std::int64_t ids = call.rows * shapeCount(call.inputShapes[0]);
        ensureSize(scratch.firstBad, 1);
        cuda::embeddingResetBad(dc.stream, scratch.firstBad.data());
        cuda::embeddingForward(dc.stream, call.inputs[0], call.params[0], output, ids, call.spec.units, call.spec.inputDim, scratch.firstBad.data());
        return;
    }
    case Kind::Concatenate: {
        const std::int64_t total = lastDim(call.outputShape), R = axisRows(call.rows, call.outputShape);
        std::int64_t at = 0;
        for (std::size_t j = 0; j < call.inputs.size(); ++j) {
            const std::int64_t w = lastDim(call.inputShapes[j]);
            cuda::copyRowsOnDevice(output + at, std::size_t(total) * sizeof(float), call.inputs[j], std::size_t(w) * sizeof(float),
                                   std::size_t(w) * sizeof(float), std::size_t(R), dc.stream);
            at += w;
        }
        return;
    }
    case Kind::None:
        break;
    }
    throw std::logic_error(call.layer->name() + ": no CUDA kernels");
}

void layerBackward(const DeviceContext &dc, const LayerCall &call, const PassContext &ctx, const float *output, float *dOutput,
                   std::span<float *const> dInputs, std::span<float *const> grads, LayerScratch &scratch)
{
    const std::int64_t n = call.rows * shapeCount(call.outputShape);
    float *dx = dInputs.empty() ? nullptr : dInputs[0];
    switch (call.spec.kind) {
    case Kind::Dense:
        denseBackward(dc, call, output, dOutput, dx, grads, scratch);
        return;
    case Kind::Activation:
        if (dx)
            cuda::activationBackward(dc.stream, call.spec.activation, call.inputs[0], output, dOutput, dx, axisRows(call.rows, call.outputShape),
                                     lastDim(call.outputShape));
        return;
    case Kind::Dropout:
        if (!dx)
            return;
        if (ctx.training && call.spec.rate > 0)
            cuda::dropoutApply(dc.stream, dropoutParams(call, ctx), dOutput, dx, call.rows, shapeCount(call.outputShape));
        else
            copyValues(dc, dx, dOutput, n);
        return;
    case Kind::LayerNormalization: {
        const std::int64_t F = lastDim(call.outputShape), R = axisRows(call.rows, call.outputShape);
        const float *gamma = call.spec.scale ? call.params[0] : nullptr;
        float *dGamma = call.spec.scale ? grads[0] : nullptr;
        float *dBeta = call.spec.center ? grads[call.spec.scale ? 1 : 0] : nullptr;
        cuda::layerNormBackward(dc.stream, call.inputs[0], gamma, scratch.saved.data(), dOutput, dx, dGamma, dBeta, R, F);
        return;
    }
    case Kind::Reshape:
        if (dx)
            copyValues(dc, dx, dOutput, n);
        return;
    case Kind::Gru:
    case Kind::Lstm:
        recurrentBackward(dc, call, dOutput, dx, grads, scratch);
        return;
    case Kind::RepeatVector:
        if (dx)
            repeatVectorBackward(dc, call, dOutput, dx, scratch);
        return;
    case Kind::Conv:
        convBackward(dc, call, output, dOutput, dx, grads, scratch);
        return;
    case Kind::Pooling:
    case Kind::GlobalPooling:
        poolingBackward(dc, call, dOutput, dx, scratch);
        return;
    case Kind::BatchNormalization:
        batchNormBackward(dc, call, ctx, dOutput, dx, grads, scratch);
        return;
    case Kind::Embedding: {
        // The table's gradient region holds zeros (the replica zeroes the whole buffer each step):
        // the GPU updates the whole table, Keras's semantics.
        const std::int64_t ids = call.rows * shapeCount(call.inputShapes[0]);
        ensureSize(scratch.sortScratch, cuda::embeddingBackwardScratchBytes(ids, call.spec.inputDim));
        cuda::embeddingBackward(dc.stream, call.inputs[0], dOutput, grads[0], ids, call.spec.units, call.spec.inputDim, scratch.sortScratch.data(),
                                scratch.sortScratch.size());
        if (dx) // ids are not differentiable
            cuda::fillBytes(dx, 0, std::size_t(ids) * sizeof(float), dc.stream);
        return;
    }
    case Kind::Concatenate: {
        const std::int64_t total = lastDim(call.outputShape), R = axisRows(call.rows, call.outputShape);
        std::int64_t at = 0;
        for (std::size_t j = 0; j < call.inputs.size(); ++j) {
            const std::int64_t w = lastDim(call.inputShapes[j]);
            if (j < dInputs.size() && dInputs[j])
                cuda::copyRowsOnDevice(dInputs[j], std::size_t(w) * sizeof(float), dOutput + at, std::size_t(total) * sizeof(float),
                                       std::size_t(w) * sizeof(float), std::size_t(R), dc.stream);
            at += w;
        }
        return;
    }
    case Kind::None:
        break;
    }
    throw std::logic_error(call.layer->name() + ": no CUDA kernels");
}

} // namespace sluice::train::gpu
