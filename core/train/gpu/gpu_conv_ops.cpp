// Conv1D / Conv2D and the pooling layers on a GPU (gpu_layer_ops.h): the CPU layers' structure
// (train/layers/conv/conv.cpp, pooling.cpp, global_pooling.cpp) with the kernels of
// train/cuda/kernels/conv_kernels.h and pooling_kernels.h. A convolution is im2col, then one cuBLAS
// product against the kernel read as a (kh kw C, filters) matrix, then Dense's bias and
// activation kernel; the im2col matrix is built for blocks of rows so that its memory stays
// bounded, and a 1x1 convolution with stride 1 multiplies the input itself.
#include "train/gpu/gpu_layer_ops.h"

#include "train/cuda/kernels/activation_kernels.h"
#include "train/cuda/kernels/conv_kernels.h"
#include "train/cuda/kernels/pooling_kernels.h"

#include <algorithm>

namespace sluice::train::gpu {

namespace {

// The im2col block's budget: a few times the CPU's (the products stay long enough for cuBLAS to
// run at full speed), small next to a device's memory even with a block kept per Conv layer.
constexpr std::int64_t kColsBudgetBytes = std::int64_t(64) << 20;


// Rows of the im2col matrix per block: a function of the shapes only.
std::int64_t chunkRows(const cuda::Window &w)
{
    return std::max<std::int64_t>(1, kColsBudgetBytes / (std::int64_t(sizeof(float)) * std::max<std::int64_t>(1, w.colWidth())));
}

void product(const DeviceContext &dc, bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, const float *A, std::int64_t lda,
             const float *B, std::int64_t ldb, float beta, float *C, std::int64_t ldc)
{
    dc.blas->gemm(dc.stream, transA, transB, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc, dc.mode);
}

// GlobalPooling's input seen as [samples, positions, channels].
struct GlobalDims
{
    std::int64_t positions, channels;
};

GlobalDims globalDims(const LayerCall &call)
{
    const Shape &in = call.inputShapes[0];
    const std::int64_t channels = in.empty() ? 1 : in.back();
    return {channels > 0 ? shapeCount(in) / channels : 0, channels};
}

} // namespace

cuda::Window deviceWindow(const LayerKernelSpec::Window &w)
{
    cuda::Window k;
    k.inH = w.inH;
    k.inW = w.inW;
    k.channels = w.channels;
    k.outH = w.outH;
    k.outW = w.outW;
    k.sizeH = w.sizeH;
    k.sizeW = w.sizeW;
    k.strideH = w.strideH;
    k.strideW = w.strideW;
    k.dilationH = w.dilationH;
    k.dilationW = w.dilationW;
    k.padTop = w.padTop;
    k.padLeft = w.padLeft;
    return k;
}


void convForward(const DeviceContext &dc, const LayerCall &call, float *y, LayerScratch &s)
{
    const cuda::Window w = deviceWindow(call.spec.window);
    const std::int64_t F = call.spec.units, K = w.colWidth(), rows = call.rows * w.outPositions();
    const float *x = call.inputs[0], *kernel = call.params[0];
    if (w.isPointwise()) {
        product(dc, false, false, rows, F, K, x, K, kernel, F, 0.0f, y, F);
    } else {
        const std::int64_t chunk = chunkRows(w);
        ensureSize(s.cols, std::size_t(std::min(chunk, rows) * K));
        for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
            const std::int64_t n = std::min(chunk, rows - r0);
            cuda::im2col(dc.stream, w, x, r0, r0 + n, s.cols.data());
            product(dc, false, false, n, F, K, s.cols.data(), K, kernel, F, 0.0f, y + r0 * F, F);
        }
    }
    const float *bias = call.spec.useBias ? call.params[1] : nullptr;
    // The pre-activation is kept only where the activation's derivative needs it (gelu).
    float *z = nullptr;
    if (activationNeedsInput(call.spec.activation)) {
        ensureSize(s.saved, std::size_t(rows * F));
        z = s.saved.data();
    }
    if (bias || call.spec.activation != ActivationKind::Linear)
        cuda::biasActivationForward(dc.stream, call.spec.activation, y, bias, y, z, rows, F);
}

void convBackward(const DeviceContext &dc, const LayerCall &call, const float *y, float *dy, float *dx, std::span<float *const> grads,
                  LayerScratch &s)
{
    const cuda::Window w = deviceWindow(call.spec.window);
    const std::int64_t F = call.spec.units, K = w.colWidth(), rows = call.rows * w.outPositions();
    const float *x = call.inputs[0], *kernel = call.params[0];
    // dz = dy * f'(z), in place.
    if (call.spec.activation != ActivationKind::Linear)
        cuda::activationBackward(dc.stream, call.spec.activation, activationNeedsInput(call.spec.activation) ? s.saved.data() : nullptr, y, dy, dy,
                                 rows, F);
    if (call.spec.useBias && grads.size() > 1 && grads[1])
        cuda::columnSums(dc.stream, dy, grads[1], rows, F, true);
    float *dKernel = grads.empty() ? nullptr : grads[0];
    if (rows == 0)
        return;
    if (w.isPointwise()) {
        // dKernel += X^T dz, dX = dz K^T, with X [rows, C] the input itself.
        if (dKernel)
            product(dc, true, false, K, F, rows, x, K, dy, F, 1.0f, dKernel, F);
        if (dx)
            product(dc, false, true, rows, K, F, dy, F, kernel, F, 0.0f, dx, K);
        return;
    }
    // Block by block: dKernel += cols^T dz; dCols = dz K^T, added back into dX (zeroed first:
    // the blocks' rows may share a sample).
    if (dx)
        cuda::fillBytes(dx, 0, std::size_t(call.rows * w.inPositions() * w.channels) * sizeof(float), dc.stream);
    const std::int64_t chunk = chunkRows(w);
    ensureSize(s.cols, std::size_t(std::min(chunk, rows) * K));
    for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const std::int64_t n = std::min(chunk, rows - r0);
        const float *dzBlock = dy + r0 * F;
        if (dKernel) {
            cuda::im2col(dc.stream, w, x, r0, r0 + n, s.cols.data());
            product(dc, true, false, K, F, n, s.cols.data(), K, dzBlock, F, 1.0f, dKernel, F);
        }
        if (dx) {
            product(dc, false, true, n, K, F, dzBlock, F, kernel, F, 0.0f, s.cols.data(), K);
            cuda::col2imAdd(dc.stream, w, s.cols.data(), r0, r0 + n, dx);
        }
    }
}

void poolingForward(const DeviceContext &dc, const LayerCall &call, const PassContext &ctx, float *y, LayerScratch &s)
{
    const bool isMax = call.spec.maxPooling;
    const bool global = call.spec.kind == LayerKernelSpec::Kind::GlobalPooling;
    // Only a training pass has a backward pass that needs the maxima's positions.
    std::int32_t *positions = nullptr;
    if (isMax && ctx.training) {
        ensureSize(s.positions, std::size_t(call.rows * shapeCount(call.outputShape)));
        positions = s.positions.data();
    }
    if (global) {
        const GlobalDims g = globalDims(call);
        cuda::globalPoolForward(dc.stream, isMax, call.inputs[0], y, positions, call.rows, g.positions, g.channels);
    } else {
        cuda::poolForward(dc.stream, deviceWindow(call.spec.window), isMax, call.inputs[0], y, positions, call.rows);
    }
}

void poolingBackward(const DeviceContext &dc, const LayerCall &call, const float *dy, float *dx, LayerScratch &s)
{
    if (!dx)
        return;
    const bool isMax = call.spec.maxPooling;
    const std::int32_t *positions = isMax && !s.positions.empty() ? s.positions.data() : nullptr;
    if (call.spec.kind == LayerKernelSpec::Kind::GlobalPooling) {
        const GlobalDims g = globalDims(call);
        cuda::globalPoolBackward(dc.stream, isMax, positions, dy, dx, call.rows, g.positions, g.channels);
    } else {
        cuda::poolBackward(dc.stream, deviceWindow(call.spec.window), isMax, positions, dy, dx, call.rows);
    }
}

} // namespace sluice::train::gpu
