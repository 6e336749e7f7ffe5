// GRU as Keras computes it with reset_after=True (gate order z, r, h):
//   z = rec_act(x W_z + b_z + h U_z + rb_z)      r = rec_act(x W_r + b_r + h U_r + rb_r)
//   hh = act(x W_h + b_h + r * (h U_h + rb_h))   h' = z * h + (1 - z) * hh
// The input projections of all time steps are one [B*T, F] x [F, 3U] gemm; each step is one
// [B, U] x [U, 3U] gemm and a pass over the gates. Backward is BPTT whose weight gradients
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
    kInputProj,     // forward: x W + b_in [B, T, 3U]; backward: its gradient, same layout
    kGates,         // z, r, hh per step [T, B, 3U]
    kRecurrentH,    // h_{t-1} U_h + rb_h per step [T, B, U]
    kStates,        // h_{-1} = 0, h_0 .. h_{T-1} [T + 1, B, U]
    kRecurrentProj, // forward: h_{t-1} U [B, 3U]; backward: its gradient per step [T, B, 3U]
    kDh,            // backward: dLoss/dh carried to the previous step [B, U]
    kZeroBias,      // 3U zeros when use_bias is false
    kSlotCount
};

struct ForwardStep
{
    const float *xw;      // x W + b_in at this step, row b at xw + b * xwStride
    std::int64_t xwStride;
    const float *rec;     // h_{t-1} U [B, 3U]
    const float *rb;      // recurrent bias [3U]
    const float *hPrev;   // [B, U]
    float *gates, *recH, *h;
    std::int64_t U;
    GateActivation act, recAct;
};

void forwardRows(const ForwardStep &s, std::int64_t b0, std::int64_t b1)
{
    const std::int64_t U = s.U, G = 3 * U;
    for (std::int64_t b = b0; b < b1; ++b) {
        const float *xw = s.xw + b * s.xwStride, *rc = s.rec + b * G, *hp = s.hPrev + b * U;
        float *g = s.gates + b * G, *rh = s.recH + b * U, *h = s.h + b * U;
        for (std::int64_t j = 0; j < 2 * U; ++j)
            g[j] = xw[j] + rc[j] + s.rb[j];
        activate(s.recAct, g, 2 * U); // z, r
        for (std::int64_t j = 0; j < U; ++j) {
            const float r = rc[2 * U + j] + s.rb[2 * U + j];
            rh[j] = r;
            g[2 * U + j] = xw[2 * U + j] + g[U + j] * r;
        }
        activate(s.act, g + 2 * U, U); // hh
        for (std::int64_t j = 0; j < U; ++j)
            h[j] = g[2 * U + j] + g[j] * (hp[j] - g[2 * U + j]);
    }
}

struct BackwardStep
{
    const float *gates, *recH, *hPrev; // this step's [B, ...]
    const float *dOut;                 // dLoss/dh_t from the output, null when none flows in here
    std::int64_t dOutStride;
    float *dxw; // gradient of x W + b_in at this step, row b at dxw + b * dxwStride
    std::int64_t dxwStride;
    float *dRec; // gradient of h_{t-1} U + rb [B, 3U]
    float *dh;   // in: dLoss/dh_t from later steps; out: the part of dLoss/dh_{t-1} not through U
    std::int64_t U;
    GateActivation act, recAct;
};

void backwardRows(const BackwardStep &s, std::int64_t b0, std::int64_t b1)
{
    const std::int64_t U = s.U, G = 3 * U;
    for (std::int64_t b = b0; b < b1; ++b) {
        const float *g = s.gates + b * G, *rh = s.recH + b * U, *hp = s.hPrev + b * U;
        const float *dout = s.dOut ? s.dOut + b * s.dOutStride : nullptr;
        float *dx = s.dxw + b * s.dxwStride, *dr = s.dRec + b * G, *dh = s.dh + b * U;
        for (std::int64_t j = 0; j < U; ++j) {
            const float d = dout ? dh[j] + dout[j] : dh[j];
            const float z = g[j], hh = g[2 * U + j];
            dx[j] = d * (hp[j] - hh);      // dz
            dx[2 * U + j] = d * (1.0f - z); // dhh
            dh[j] = d * z;
        }
        scaleByDerivative(s.recAct, g, dx, U);
        scaleByDerivative(s.act, g + 2 * U, dx + 2 * U, U);
        for (std::int64_t j = 0; j < U; ++j) {
            const float dhh = dx[2 * U + j];
            dx[U + j] = dhh * rh[j];         // dr
            dr[2 * U + j] = dhh * g[U + j]; // d(h U_h + rb_h)
        }
        scaleByDerivative(s.recAct, g + U, dx + U, U);
        std::copy(dx, dx + 2 * U, dr); // z and r see x W and h U alike
    }
}

class Gru final : public RecurrentLayer
{
public:
    Gru(std::string name, RecurrentOptions options) : RecurrentLayer(std::move(name), std::move(options), 3, LayerKernelSpec::Kind::Gru) {}

    std::string className() const override { return "GRU"; }

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
        FloatTensor &recH = scratch(state, kRecurrentH, {T, B, U});
        FloatTensor &hs = scratch(state, kStates, {T + 1, B, U});
        FloatTensor &rec = scratch(state, kRecurrentProj, {B, G});
        const float *rb = m_opt.useBias ? params[2] + G : zeros(state, G);

        projectInputs(x, params, xw.ptr());
        std::fill_n(hs.ptr(), B * U, 0.0f);
        forwardSteps(B, hs.ptr(), params[1], rec, [&](std::int64_t t) {
            const float *hPrev = hs.ptr() + t * B * U;
            const ForwardStep step{xw.ptr() + t * G, T * G, rec.ptr(), rb, hPrev, gates.ptr() + t * B * G, recH.ptr() + t * B * U,
                                   hs.ptr() + (t + 1) * B * U, U, m_opt.activation, m_opt.recurrentActivation};
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
        const FloatTensor &gates = state.saved[kGates], &recH = state.saved[kRecurrentH], &hs = state.saved[kStates];
        FloatTensor &dxw = scratch(state, kInputProj, {B, T, G});
        FloatTensor &dRec = scratch(state, kRecurrentProj, {T, B, G});
        FloatTensor &dh = scratch(state, kDh, {B, U});
        dh.zero();

        // The elementwise step leaves in dh the part of dLoss/dh_{t-1} not through U: the gemm adds to it.
        backwardSteps(B, dOutput, params[1], dRec.ptr(), dh.ptr(), true, [&](std::int64_t t, const float *dOut, std::int64_t dOutStride) {
            const BackwardStep step{gates.ptr() + t * B * G,
                                    recH.ptr() + t * B * U,
                                    hs.ptr() + t * B * U,
                                    dOut,
                                    dOutStride,
                                    dxw.ptr() + t * G,
                                    T * G,
                                    dRec.ptr() + t * B * G,
                                    dh.ptr(),
                                    U,
                                    m_opt.activation,
                                    m_opt.recurrentActivation};
            parallelRows(B, 6 * G, [&step](std::int64_t b0, std::int64_t b1) { backwardRows(step, b0, b1); });
        });

        weightAndInputGradients(x.ptr(), dxw.ptr(), hs.ptr(), dRec.ptr(), B, T, F, U, G, params[0], grads[0], grads[1],
                                dInputs.empty() ? nullptr : dInputs[0]);
        if (m_opt.useBias) {
            addColumnSums(dxw.ptr(), B * T, G, grads[2]);
            addColumnSums(dRec.ptr(), T * B, G, grads[2] + G);
        }
    }

private:
    // Rows: the input bias, the recurrent bias (reset_after=True keeps them apart).
    ParamSpec biasParam() const override { return {"bias", {2, gateWidth()}, m_opt.biasInitializer}; }

    static const float *zeros(LayerState &state, std::int64_t n)
    {
        FloatTensor &z = scratch(state, kZeroBias, {n});
        z.zero();
        return z.ptr();
    }
};

} // namespace
} // namespace sluice::train::detail

namespace sluice::train {

std::unique_ptr<Layer> makeGru(std::string name, RecurrentOptions options)
{
    return std::make_unique<detail::Gru>(std::move(name), std::move(options));
}

} // namespace sluice::train
