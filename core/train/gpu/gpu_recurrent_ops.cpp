// GRU, LSTM and RepeatVector on a GPU (gpu_layer_ops.h): the CPU layers' structure
// (train/layers/recurrent/gru.cpp, lstm.cpp, recurrent.cpp) with cuBLAS products and the step kernels of
// train/cuda/kernels/recurrent_kernels.h. States are kept time-major ([T + 1, B, U], h_{-1} = 0 first) so
// that one step's rows are contiguous for the recurrent product. Products are fp32 or TF32 (the
// bf16 mode converts Dense products only).
#include "train/gpu/gpu_layer_ops.h"

#include "train/cuda/kernels/activation_kernels.h"
#include "train/cuda/kernels/recurrent_kernels.h"
#include "train/cuda/kernels/reduce_kernels.h"

namespace sluice::train::gpu {

namespace {

// Scratch buffers of a recurrent layer, by index into LayerScratch::buffers.
enum Slot : std::size_t {
    kProjection, // forward: x W + b [B, T, G]; backward: its gradient, same layout
    kGates,      // per step [T, B, G]
    kRecurrentH, // GRU: h_{t-1} U_h + rb_h per step [T, B, U]
    kStates,     // h_{-1} = 0, h_0 .. h_{T-1} [T + 1, B, U]
    kRecurrent,  // forward: h_{t-1} U [B, G]; backward: the recurrent pre-activation gradients [T, B, G]
    kDh,         // backward: dLoss/dh carried to the previous step [B, U]
    kCells,      // LSTM: c_{-1} = 0, c_0 .. c_{T-1} [T + 1, B, U]
    kCellAct,    // LSTM: act(c_t) [T, B, U]
    kDc,         // LSTM backward: dLoss/dc carried to the previous step [B, U]
    kSlots
};

struct Dims
{
    std::int64_t B, T, F, U, G;
};

Dims dims(const LayerCall &call)
{
    const Shape &in = call.inputShapes[0];
    const std::int64_t U = call.spec.units;
    return {call.rows, in[0], in[1], U, (call.spec.kind == LayerKernelSpec::Kind::Gru ? 3 : 4) * U};
}

cuda::RecurrentStep step(const LayerCall &call, std::int64_t rows)
{
    auto kind = [](ActivationKind a) { return a == ActivationKind::Tanh ? cuda::GateKind::Tanh : cuda::GateKind::Sigmoid; };
    return {rows, call.spec.units, kind(call.spec.activation), kind(call.spec.recurrentActivation)};
}

float *buffer(LayerScratch &s, Slot slot, std::int64_t n)
{
    if (s.buffers.size() < kSlots)
        s.buffers.resize(kSlots);
    ensureSize(s.buffers[slot], std::size_t(n));
    return s.buffers[slot].data();
}

void gemm(const DeviceContext &dc, bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, const float *A, std::int64_t lda,
          const float *B, std::int64_t ldb, float beta, float *C, std::int64_t ldc)
{
    dc.blas->gemm(dc.stream, transA, transB, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc, dc.mode);
}

} // namespace

void recurrentForward(const DeviceContext &dc, const LayerCall &call, float *output, LayerScratch &scratch)
{
    const auto [B, T, F, U, G] = dims(call);
    const bool gru = call.spec.kind == LayerKernelSpec::Kind::Gru;
    float *xw = buffer(scratch, kProjection, B * T * G);
    float *gates = buffer(scratch, kGates, T * B * G);
    float *states = buffer(scratch, kStates, (T + 1) * B * U);
    float *rec = buffer(scratch, kRecurrent, T * B * G); // sized for backward's use
    float *recH = gru ? buffer(scratch, kRecurrentH, T * B * U) : nullptr;
    float *cells = gru ? nullptr : buffer(scratch, kCells, (T + 1) * B * U);
    float *cellAct = gru ? nullptr : buffer(scratch, kCellAct, T * B * U);
    const float *W = call.params[0], *R = call.params[1];
    const float *bias = call.spec.useBias ? call.params[2] : nullptr;

    gemm(dc, false, false, B * T, G, F, call.inputs[0], F, W, G, 0.0f, xw, G);
    if (bias) // the input bias (GRU: the first row of its (2, 3U) bias)
        cuda::biasActivationForward(dc.stream, ActivationKind::Linear, xw, bias, xw, nullptr, B * T, G);
    cuda::fillBytes(states, 0, std::size_t(B * U) * sizeof(float), dc.stream);
    if (cells)
        cuda::fillBytes(cells, 0, std::size_t(B * U) * sizeof(float), dc.stream);
    const auto s = step(call, B);
    for (std::int64_t t = 0; t < T; ++t) {
        const float *hPrev = states + t * B * U;
        const float *recurrent = nullptr; // h_{-1} U is zero
        if (t > 0) {
            gemm(dc, false, false, B, G, U, hPrev, U, R, G, 0.0f, rec, G);
            recurrent = rec;
        }
        float *h = states + (t + 1) * B * U;
        if (gru)
            cuda::gruStepForward(dc.stream, s, xw + t * G, T * G, recurrent, bias ? bias + G : nullptr, hPrev, gates + t * B * G, recH + t * B * U, h);
        else
            cuda::lstmStepForward(dc.stream, s, xw + t * G, T * G, recurrent, cells + t * B * U, gates + t * B * G, cells + (t + 1) * B * U,
                                  cellAct + t * B * U, h);
    }
    if (!call.spec.returnSequences) {
        cuda::copyOnDevice(output, states + T * B * U, std::size_t(B * U) * sizeof(float), dc.stream);
        return;
    }
    for (std::int64_t t = 0; t < T; ++t) // [T, B, U] -> [B, T, U]
        cuda::copyRowsOnDevice(output + t * U, std::size_t(T * U) * sizeof(float), states + (t + 1) * B * U, std::size_t(U) * sizeof(float),
                               std::size_t(U) * sizeof(float), std::size_t(B), dc.stream);
}

void recurrentBackward(const DeviceContext &dc, const LayerCall &call, const float *dOutput, float *dInput, std::span<float *const> grads,
                       LayerScratch &scratch)
{
    const auto [B, T, F, U, G] = dims(call);
    const bool gru = call.spec.kind == LayerKernelSpec::Kind::Gru;
    float *dxw = buffer(scratch, kProjection, B * T * G); // x W is not needed any more
    const float *gates = buffer(scratch, kGates, T * B * G);
    const float *states = buffer(scratch, kStates, (T + 1) * B * U);
    float *dRec = buffer(scratch, kRecurrent, T * B * G);
    float *dh = buffer(scratch, kDh, B * U);
    const float *recH = gru ? buffer(scratch, kRecurrentH, T * B * U) : nullptr;
    const float *cells = gru ? nullptr : buffer(scratch, kCells, (T + 1) * B * U);
    const float *cellAct = gru ? nullptr : buffer(scratch, kCellAct, T * B * U);
    float *dCell = gru ? nullptr : buffer(scratch, kDc, B * U);
    const float *W = call.params[0], *R = call.params[1];
    cuda::fillBytes(dh, 0, std::size_t(B * U) * sizeof(float), dc.stream);
    if (dCell)
        cuda::fillBytes(dCell, 0, std::size_t(B * U) * sizeof(float), dc.stream);
    const auto s = step(call, B);
    const std::int64_t dOutStride = call.spec.returnSequences ? T * U : U;
    for (std::int64_t t = T - 1; t >= 0; --t) {
        const float *dOut = call.spec.returnSequences ? dOutput + t * U : (t == T - 1 ? dOutput : nullptr);
        float *dRecT = dRec + t * B * G;
        if (gru) {
            cuda::gruStepBackward(dc.stream, s, gates + t * B * G, recH + t * B * U, states + t * B * U, dOut, dOutStride, dxw + t * G, T * G, dRecT, dh);
            if (t > 0) // dLoss/dh_{t-1} += dRec_t U^T
                gemm(dc, false, true, B, U, G, dRecT, G, R, G, 1.0f, dh, U);
        } else {
            cuda::lstmStepBackward(dc.stream, s, gates + t * B * G, cells + t * B * U, cellAct + t * B * U, dOut, dOutStride, dh, dCell, dxw + t * G,
                                   T * G, dRecT);
            if (t > 0) // dLoss/dh_{t-1} = dPre_t U^T
                gemm(dc, false, true, B, U, G, dRecT, G, R, G, 0.0f, dh, U);
        }
    }
    // dKernel += x^T dXW; dRecurrent += sum over t >= 1 of h_{t-1}^T dRec_t (h_{-1} is zero);
    // dX = dXW kernel^T.
    gemm(dc, true, false, F, G, B * T, call.inputs[0], F, dxw, G, 1.0f, grads[0], G);
    if (T > 1)
        gemm(dc, true, false, U, G, (T - 1) * B, states + B * U, U, dRec + B * G, G, 1.0f, grads[1], G);
    if (dInput)
        gemm(dc, false, true, B * T, F, G, dxw, G, W, G, 0.0f, dInput, F);
    if (call.spec.useBias) {
        cuda::columnSums(dc.stream, dxw, grads[2], B * T, G, true);
        if (gru) // the recurrent bias, the second row
            cuda::columnSums(dc.stream, dRec, grads[2] + G, T * B, G, true);
    }
}

void repeatVectorForward(const DeviceContext &dc, const LayerCall &call, float *output)
{
    const std::int64_t B = call.rows, n = call.spec.repeats, F = shapeCount(call.inputShapes[0]);
    for (std::int64_t t = 0; t < n; ++t)
        cuda::copyRowsOnDevice(output + t * F, std::size_t(n * F) * sizeof(float), call.inputs[0], std::size_t(F) * sizeof(float),
                               std::size_t(F) * sizeof(float), std::size_t(B), dc.stream);
}

void repeatVectorBackward(const DeviceContext &dc, const LayerCall &call, const float *dOutput, float *dInput, LayerScratch &scratch)
{
    // dx = sum over t of dy[:, t, :]: each repetition gathered contiguous, then summed in order.
    const std::int64_t B = call.rows, n = call.spec.repeats, F = shapeCount(call.inputShapes[0]);
    if (scratch.buffers.empty())
        scratch.buffers.resize(1);
    ensureSize(scratch.buffers[0], std::size_t(n * B * F));
    float *parts = scratch.buffers[0].data();
    std::vector<const float *> inputs;
    for (std::int64_t t = 0; t < n; ++t) {
        cuda::copyRowsOnDevice(parts + t * B * F, std::size_t(F) * sizeof(float), dOutput + t * F, std::size_t(n * F) * sizeof(float),
                               std::size_t(F) * sizeof(float), std::size_t(B), dc.stream);
        inputs.push_back(parts + t * B * F);
    }
    cuda::sumBuffers(dc.stream, inputs.data(), inputs.size(), dInput, B * F);
}

} // namespace sluice::train::gpu
