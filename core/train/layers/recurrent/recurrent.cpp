// GRU / LSTM: the shape check they share and the gate arithmetic
// (tanh and sigmoid written with GCC/Clang vector extensions: the build's -O2 does not
// auto-vectorise them, and at typical sizes they cost as much as the recurrent gemm).
#include "train/layers/recurrent/recurrent_internal.h"

#include "train/cpu/gemm.h"
#include "train/layers/layer_util.h"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace sluice::train::detail {

namespace {

#if defined(__AVX__)
constexpr std::int64_t kLanes = 8;
#else
constexpr std::int64_t kLanes = 4;
#endif
typedef float Vf __attribute__((vector_size(kLanes * sizeof(float))));
typedef std::int32_t Vi __attribute__((vector_size(kLanes * sizeof(float))));

Vf load(const float *p)
{
    Vf v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
void store(float *p, Vf v) { std::memcpy(p, &v, sizeof v); }
Vf splat(float x) { return Vf{} + x; }
Vf select(Vi mask, Vf a, Vf b) { return (Vf)((mask & (Vi)a) | (~mask & (Vi)b)); }

// Cephes expf: e^x = 2^n * e^r with |r| <= ln2 / 2, a degree-7 polynomial for e^r. Arguments
// are clamped to [-87, 88] (the result stays a normal float); NaN passes through.
[[gnu::always_inline]] inline Vf expApprox(Vf x)
{
    x = select(x > splat(88.0f), splat(88.0f), x);
    x = select(x < splat(-87.0f), splat(-87.0f), x);
    constexpr float kRound = 12582912.0f; // 1.5 * 2^23: adding it rounds to an integer
    const Vf shifted = x * 1.44269504088896341f + kRound;
    const Vf n = shifted - kRound;
    const Vi biased = (Vi)shifted - 0x4B400000 + 127; // n + 127, from the bits of `shifted`
    Vf r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    Vf p = splat(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    return p * (Vf)(biased << 23);
}

[[gnu::always_inline]] inline Vf sigmoidApprox(Vf x) { return 1.0f / (1.0f + expApprox(-x)); }

// Cephes tanhf: an odd polynomial below |x| = 0.625, 1 - 2 / (e^2|x| + 1) with x's sign above.
[[gnu::always_inline]] inline Vf tanhApprox(Vf x)
{
    const Vi sign = (Vi)x & std::int32_t(0x80000000u);
    const Vf ax = (Vf)((Vi)x & 0x7fffffff);
    const Vf z = x * x;
    Vf p = splat(-5.70498872745e-3f);
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    const Vf small = p * z * x + x;
    const Vf large = (Vf)((Vi)(1.0f - 2.0f / (expApprox(ax + ax) + 1.0f)) | sign);
    return select(ax < splat(0.625f), small, large);
}

// x[i] = op(x[i]); the tail goes through a zero-padded block so every value is computed alike.
template <class Op>
void mapInPlace(float *x, std::int64_t n, Op op)
{
    std::int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes)
        store(x + j, op(load(x + j)));
    if (j < n) {
        float tail[kLanes] = {};
        std::copy(x + j, x + n, tail);
        store(tail, op(load(tail)));
        std::copy(tail, tail + (n - j), x + j);
    }
}

// d[i] *= op(y[i]).
template <class Op>
void scaleBy(const float *y, float *d, std::int64_t n, Op op)
{
    std::int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes)
        store(d + j, load(d + j) * op(load(y + j)));
    if (j < n) {
        float ty[kLanes] = {}, td[kLanes] = {};
        std::copy(y + j, y + n, ty);
        std::copy(d + j, d + n, td);
        store(td, load(td) * op(load(ty)));
        std::copy(td, td + (n - j), d + j);
    }
}

} // namespace

void activate(GateActivation kind, float *x, std::int64_t n)
{
    // Lambdas, not function pointers: each instantiation inlines its function.
    if (kind == GateActivation::Tanh)
        mapInPlace(x, n, [](Vf v) { return tanhApprox(v); });
    else
        mapInPlace(x, n, [](Vf v) { return sigmoidApprox(v); });
}

void scaleByDerivative(GateActivation kind, const float *y, float *d, std::int64_t n)
{
    if (kind == GateActivation::Tanh)
        scaleBy(y, d, n, [](Vf v) { return 1.0f - v * v; });
    else
        scaleBy(y, d, n, [](Vf v) { return v * (1.0f - v); });
}

void addToRows(float *m, std::int64_t rows, std::int64_t cols, const float *v)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        float *row = m + r * cols;
        std::int64_t c = 0;
        for (; c + kLanes <= cols; c += kLanes)
            store(row + c, load(row + c) + load(v + c));
        for (; c < cols; ++c)
            row[c] += v[c];
    }
}

void addColumnSums(const float *m, std::int64_t rows, std::int64_t cols, float *out)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        const float *row = m + r * cols;
        std::int64_t c = 0;
        for (; c + kLanes <= cols; c += kLanes)
            store(out + c, load(out + c) + load(row + c));
        for (; c < cols; ++c)
            out[c] += row[c];
    }
}

void writeOutput(const float *states, std::int64_t B, std::int64_t T, std::int64_t U, bool returnSequences, FloatTensor &output)
{
    if (!returnSequences) {
        output.resize({B, U});
        std::copy(states + T * B * U, states + (T + 1) * B * U, output.ptr());
        return;
    }
    output.resize({B, T, U});
    for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t b = 0; b < B; ++b) {
            const float *h = states + ((t + 1) * B + b) * U;
            std::copy(h, h + U, output.ptr() + (b * T + t) * U);
        }
}

void weightAndInputGradients(const float *x, const float *dXW, const float *states, const float *dRec, std::int64_t B, std::int64_t T,
                             std::int64_t F, std::int64_t U, std::int64_t G, const float *kernel, float *dKernel, float *dRecurrent,
                             FloatTensor *dX)
{
    if (dX)
        dX->resize({B, T, F});
    if (B == 0)
        return;
    cpu::gemm(true, false, F, G, B * T, 1.0f, x, F, dXW, G, 1.0f, dKernel, G);
    // h_{-1} is zero: step 0 adds nothing to the recurrent kernel's gradient.
    if (T > 1)
        cpu::gemm(true, false, U, G, (T - 1) * B, 1.0f, states + B * U, U, dRec + B * G, G, 1.0f, dRecurrent, G);
    if (dX)
        cpu::gemm(false, true, B * T, F, G, 1.0f, dXW, G, kernel, G, 0.0f, dX->ptr(), F);
}

Result<std::pair<std::int64_t, std::int64_t>> sequenceInputShape(const Layer &layer, const std::vector<Shape> &inputShapes)
{
    if (auto s = expectInputs(layer, inputShapes, 1); !s)
        return s.error();
    const Shape &in = inputShapes[0];
    if (in.size() != 2)
        return layerError(layer, "expects inputs of shape (timesteps, features), got " + shapeString(in));
    if (in[0] <= 0)
        return layerError(layer, "needs a known number of timesteps, got inputs of shape " + shapeString(in));
    if (in[1] <= 0)
        return layerError(layer, "needs a known, non-zero number of features, got inputs of shape " + shapeString(in));
    return std::pair{in[0], in[1]};
}

RecurrentLayer::RecurrentLayer(std::string name, RecurrentOptions options, int gatesPerUnit, LayerKernelSpec::Kind kind)
    : Layer(std::move(name)), m_opt(std::move(options)), m_gatesPerUnit(gatesPerUnit), m_kind(kind)
{
}

LayerKernelSpec RecurrentLayer::kernelSpec() const
{
    auto kind = [](GateActivation a) { return a == GateActivation::Tanh ? ActivationKind::Tanh : ActivationKind::Sigmoid; };
    LayerKernelSpec k;
    k.kind = m_kind;
    k.units = m_opt.units;
    k.activation = kind(m_opt.activation);
    k.recurrentActivation = kind(m_opt.recurrentActivation);
    k.useBias = m_opt.useBias;
    k.returnSequences = m_opt.returnSequences;
    return k;
}

Result<Shape> RecurrentLayer::build(const std::vector<Shape> &inputShapes)
{
    auto shape = sequenceInputShape(*this, inputShapes);
    if (!shape)
        return shape.error();
    std::tie(m_steps, m_features) = *shape;
    return m_opt.returnSequences ? Shape{m_steps, m_opt.units} : Shape{m_opt.units};
}

std::vector<ParamSpec> RecurrentLayer::params() const
{
    std::vector<ParamSpec> p{{"kernel", {m_features, gateWidth()}, m_opt.kernelInitializer},
                             {"recurrent_kernel", {m_opt.units, gateWidth()}, m_opt.recurrentInitializer}};
    if (m_opt.useBias)
        p.push_back(biasParam());
    return p;
}

void RecurrentLayer::projectInputs(const FloatTensor &x, std::span<const float *const> params, float *xw) const
{
    const std::int64_t B = x.rows(), T = m_steps, F = m_features, G = gateWidth();
    cpu::gemm(false, false, B * T, G, F, 1.0f, x.ptr(), F, params[0], G, 0.0f, xw, G);
    if (m_opt.useBias)
        addToRows(xw, B * T, G, params[2]);
}

void RecurrentLayer::forwardSteps(std::int64_t B, const float *states, const float *R, FloatTensor &rec,
                                  const std::function<void(std::int64_t)> &step) const
{
    const std::int64_t U = m_opt.units, G = gateWidth();
    rec.zero(); // h_{-1} U
    for (std::int64_t t = 0; t < m_steps; ++t) {
        if (t > 0)
            cpu::gemm(false, false, B, G, U, 1.0f, states + t * B * U, U, R, G, 0.0f, rec.ptr(), G);
        step(t);
    }
}

void RecurrentLayer::backwardSteps(std::int64_t B, const FloatTensor &dOutput, const float *R, const float *dRec, float *dh, bool accumulate,
                                   const std::function<void(std::int64_t, const float *, std::int64_t)> &step) const
{
    const std::int64_t T = m_steps, U = m_opt.units, G = gateWidth();
    for (std::int64_t t = T - 1; t >= 0; --t) {
        const float *dOut = m_opt.returnSequences ? dOutput.ptr() + t * U : (t == T - 1 ? dOutput.ptr() : nullptr);
        step(t, dOut, m_opt.returnSequences ? T * U : U);
        if (t > 0) // dLoss/dh_{t-1} (+)= dRec_t U^T
            cpu::gemm(false, true, B, U, G, 1.0f, dRec + t * B * G, G, R, G, accumulate ? 1.0f : 0.0f, dh, U);
    }
}

} // namespace sluice::train::detail
