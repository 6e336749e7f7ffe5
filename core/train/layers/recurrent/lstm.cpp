// LSTM as Keras computes it (gate order i, f, c, o; one bias of 4U):
//   [i f g o] = x W + h U + b;  i, f, o through rec_act, g through act
//   c' = f * c + i * g           h' = o * act(c')
// The input projections of all time steps are one [B*T, F] x [F, 4U] gemm; each step is one
// [B, U] x [U, 4U] gemm and a pass over the gates. Backward is BPTT whose weight gradients
// are two large gemms after the time loop.
#include "train/cpu/gemm.h"
#include "train/layers/layer_util.h"
#include "train/layers/recurrent/recurrent_internal.h"

#include <algorithm>
#include <cassert>

namespace sluice::train::detail {
namespace {

// LayerState slots.
enum Slot : std::size_t {
    kInputProj,     // forward: x W + b [B, T, 4U]; backward: the gate pre-activation gradients, same layout
    kGates,         // i, f, g, o per step [T, B, 4U]
    kCells,         // c_{-1} = 0, c_0 .. c_{T-1} [T + 1, B, U]
    kCellAct,       // act(c_t) [T, B, U]
    kStates,        // h_{-1} = 0, h_0 .. h_{T-1} [T + 1, B, U]
    kRecurrentProj, // forward: h_{t-1} U [B, 4U]; backward: the pre-activation gradients, time-major [T, B, 4U]
    kDh,            // backward: dLoss/dh carried to the previous step [B, U]
    kDc,            // backward: dLoss/dc carried to the previous step [B, U]
    kSlotCount
};

struct ForwardStep
{
    const float *xw; // x W + b at this step, row b at xw + b * xwStride
    std::int64_t xwStride;
    const float *rec; // h_{t-1} U [B, 4U]
    const float *cPrev;
    float *gates, *c, *cAct, *h;
    std::int64_t U;
    GateActivation act, recAct;
};

void forwardRows(const ForwardStep &s, std::int64_t b0, std::int64_t b1)
{
    const std::int64_t U = s.U, G = 4 * U;
    for (std::int64_t b = b0; b < b1; ++b) {
        const float *xw = s.xw + b * s.xwStride, *rc = s.rec + b * G, *cp = s.cPrev + b * U;
        float *g = s.gates + b * G, *c = s.c + b * U, *ca = s.cAct + b * U, *h = s.h + b * U;
        for (std::int64_t j = 0; j < G; ++j)
            g[j] = xw[j] + rc[j];
        activate(s.recAct, g, 2 * U);      // i, f
        activate(s.act, g + 2 * U, U);     // g
        activate(s.recAct, g + 3 * U, U); // o
        for (std::int64_t j = 0; j < U; ++j) {
            const float cj = g[U + j] * cp[j] + g[j] * g[2 * U + j];
            c[j] = cj;
            ca[j] = cj;
        }
        activate(s.act, ca, U);
        for (std::int64_t j = 0; j < U; ++j)
            h[j] = g[3 * U + j] * ca[j];
    }
}

struct BackwardStep
{
    const float *gates, *cPrev, *cAct; // this step's [B, ...]
    const float *dOut;                 // dLoss/dh_t from the output, null when none flows in here
    std::int64_t dOutStride;
    float *dPre; // gate pre-activation gradients at this step, row b at dPre + b * dPreStride
    std::int64_t dPreStride;
    float *dPreT;  // the same, time-major [B, 4U] for the recurrent kernel's gradient
    const float *dh; // dLoss/dh_t from later steps (through U)
    float *dc;       // in: dLoss/dc_t from later steps; out: dLoss/dc_{t-1}
    std::int64_t U;
    GateActivation act, recAct;
};

void backwardRows(const BackwardStep &s, std::int64_t b0, std::int64_t b1)
{
    const std::int64_t U = s.U, G = 4 * U;
    for (std::int64_t b = b0; b < b1; ++b) {
        const float *g = s.gates + b * G, *cp = s.cPrev + b * U, *ca = s.cAct + b * U, *dh = s.dh + b * U;
        const float *dout = s.dOut ? s.dOut + b * s.dOutStride : nullptr;
        float *dp = s.dPre + b * s.dPreStride, *dc = s.dc + b * U;
        for (std::int64_t j = 0; j < U; ++j) {
            const float d = dout ? dh[j] + dout[j] : dh[j];
            dp[3 * U + j] = d * ca[j];       // do
            dp[2 * U + j] = d * g[3 * U + j]; // d act(c), for now
        }
        scaleByDerivative(s.recAct, g + 3 * U, dp + 3 * U, U);
        scaleByDerivative(s.act, ca, dp + 2 * U, U); // dc through h_t
        for (std::int64_t j = 0; j < U; ++j) {
            const float dcj = dc[j] + dp[2 * U + j];
            dp[j] = dcj * g[2 * U + j];     // di
            dp[U + j] = dcj * cp[j];        // df
            dp[2 * U + j] = dcj * g[j];     // dg
            dc[j] = dcj * g[U + j];
        }
        scaleByDerivative(s.recAct, g, dp, 2 * U);
        scaleByDerivative(s.act, g + 2 * U, dp + 2 * U, U);
        std::copy(dp, dp + G, s.dPreT + b * G);
    }
}

class Lstm final : public RecurrentLayer
{
public:
    Lstm(std::string name, RecurrentOptions options) : RecurrentLayer(std::move(name), std::move(options), 4, LayerKernelSpec::Kind::Lstm) {}

    std::string className() const override { return "LSTM"; }

    void forward(const PassContext &, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &state) const override
    {
        const FloatTensor &x = *inputs[0];
        const std::int64_t B = x.rows(), T = m_steps, F = m_features, U = units(), G = gateWidth();
        assert(x.shape.size() == 3 && x.shape[1] == T && x.shape[2] == F);
        if (state.saved.size() < kSlotCount)
            state.saved.resize(kSlotCount); // scratch() below never reallocates the vector
        FloatTensor &xw = scratch(state, kInputProj, {B, T, G});
        FloatTensor &gates = scratch(state, kGates, {T, B, G});
        FloatTensor &cs = scratch(state, kCells, {T + 1, B, U});
        FloatTensor &cAct = scratch(state, kCellAct, {T, B, U});
        FloatTensor &hs = scratch(state, kStates, {T + 1, B, U});
        FloatTensor &rec = scratch(state, kRecurrentProj, {B, G});

        projectInputs(x, params, xw.ptr());
        std::fill_n(hs.ptr(), B * U, 0.0f);
        std::fill_n(cs.ptr(), B * U, 0.0f);
        forwardSteps(B, hs.ptr(), params[1], rec, [&](std::int64_t t) {
            const ForwardStep step{xw.ptr() + t * G,
                                   T * G,
                                   rec.ptr(),
                                   cs.ptr() + t * B * U,
                                   gates.ptr() + t * B * G,
                                   cs.ptr() + (t + 1) * B * U,
                                   cAct.ptr() + t * B * U,
                                   hs.ptr() + (t + 1) * B * U,
                                   U,
                                   m_opt.activation,
                                   m_opt.recurrentActivation};
            parallelRows(B, 8 * G, [&step](std::int64_t b0, std::int64_t b1) { forwardRows(step, b0, b1); });
        });
        writeOutput(hs.ptr(), B, T, U, m_opt.returnSequences, output);
    }

    void backward(const PassContext &, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, const FloatTensor &,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const> grads,
                  LayerState &state) const override
    {
        const FloatTensor &x = *inputs[0];
        const std::int64_t B = x.rows(), T = m_steps, F = m_features, U = units(), G = gateWidth();
        assert(state.saved.size() >= kSlotCount);
        const FloatTensor &gates = state.saved[kGates], &cs = state.saved[kCells], &cAct = state.saved[kCellAct],
                          &hs = state.saved[kStates];
        FloatTensor &dPre = scratch(state, kInputProj, {B, T, G});
        FloatTensor &dPreT = scratch(state, kRecurrentProj, {T, B, G});
        FloatTensor &dh = scratch(state, kDh, {B, U});
        FloatTensor &dc = scratch(state, kDc, {B, U});
        dh.zero();
        dc.zero();

        // dLoss/dh_{t-1} comes through U alone: the gemm sets it.
        backwardSteps(B, dOutput, params[1], dPreT.ptr(), dh.ptr(), false, [&](std::int64_t t, const float *dOut, std::int64_t dOutStride) {
            const BackwardStep step{gates.ptr() + t * B * G,
                                    cs.ptr() + t * B * U,
                                    cAct.ptr() + t * B * U,
                                    dOut,
                                    dOutStride,
                                    dPre.ptr() + t * G,
                                    T * G,
                                    dPreT.ptr() + t * B * G,
                                    dh.ptr(),
                                    dc.ptr(),
                                    U,
                                    m_opt.activation,
                                    m_opt.recurrentActivation};
            parallelRows(B, 6 * G, [&step](std::int64_t b0, std::int64_t b1) { backwardRows(step, b0, b1); });
        });

        weightAndInputGradients(x.ptr(), dPre.ptr(), hs.ptr(), dPreT.ptr(), B, T, F, U, G, params[0], grads[0], grads[1],
                                dInputs.empty() ? nullptr : dInputs[0]);
        if (m_opt.useBias)
            addColumnSums(dPre.ptr(), B * T, G, grads[2]);
    }

private:
    // Keras: ones for the forget gate, bias_initializer elsewhere (the registry allows only
    // "zeros" and "ones" with unit_forget_bias).
    ParamSpec biasParam() const override
    {
        const bool forgetOnes = m_opt.unitForgetBias && m_opt.biasInitializer == "zeros";
        return {"bias", {gateWidth()}, forgetOnes ? std::string(kLstmUnitForgetBias) : m_opt.biasInitializer};
    }
};

} // namespace
} // namespace sluice::train::detail

namespace sluice::train {

std::unique_ptr<Layer> makeLstm(std::string name, RecurrentOptions options)
{
    return std::make_unique<detail::Lstm>(std::move(name), std::move(options));
}

} // namespace sluice::train
