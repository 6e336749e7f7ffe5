// Dense: one gemm, then bias and activation fused in a single pass over the output.
#include "train/cpu/gemm.h"
#include "train/layers/basic_layers.h"
#include "train/layers/layer_util.h"

#include <algorithm>
#include <cassert>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sluice::train {
namespace {

using detail::layerError;

// y[r, :] = f(y[r, :] + bias) over rows [0, rows) of width U, for f = ReLU (`relu`) or the
// identity: one pass, four columns at a time. Bit for bit the scalar y += b, then max(y, 0).
void addBiasMaybeRelu(float *y, const float *bias, std::int64_t rows, std::int64_t U, bool relu)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        float *row = y + r * U;
        std::int64_t u = 0;
#if defined(__SSE2__)
        const __m128 zero = _mm_setzero_ps();
        for (; u + 4 <= U; u += 4) {
            __m128 v = _mm_add_ps(_mm_loadu_ps(row + u), _mm_loadu_ps(bias + u));
            _mm_storeu_ps(row + u, relu ? _mm_max_ps(zero, v) : v);
        }
#endif
        for (; u < U; ++u) {
            const float v = row[u] + bias[u];
            row[u] = relu ? std::max(v, 0.0f) : v;
        }
    }
}

// sums[u] += sum over rows of dZ[r, u], each column summed in row order (so the same at any
// thread count), columns [u0, u1) only; several columns at a time in vector registers.
void addColumnSums(const float *dZ, std::int64_t rows, std::int64_t U, std::int64_t u0, std::int64_t u1, float *sums)
{
    std::int64_t u = u0;
#if defined(__SSE2__)
    for (; u + 16 <= u1; u += 16) {
        __m128 a0 = _mm_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (std::int64_t r = 0; r < rows; ++r) {
            const float *p = dZ + r * U + u;
            a0 = _mm_add_ps(a0, _mm_loadu_ps(p));
            a1 = _mm_add_ps(a1, _mm_loadu_ps(p + 4));
            a2 = _mm_add_ps(a2, _mm_loadu_ps(p + 8));
            a3 = _mm_add_ps(a3, _mm_loadu_ps(p + 12));
        }
        _mm_storeu_ps(sums + u, _mm_add_ps(_mm_loadu_ps(sums + u), a0));
        _mm_storeu_ps(sums + u + 4, _mm_add_ps(_mm_loadu_ps(sums + u + 4), a1));
        _mm_storeu_ps(sums + u + 8, _mm_add_ps(_mm_loadu_ps(sums + u + 8), a2));
        _mm_storeu_ps(sums + u + 12, _mm_add_ps(_mm_loadu_ps(sums + u + 12), a3));
    }
    for (; u + 4 <= u1; u += 4) {
        __m128 a = _mm_setzero_ps();
        for (std::int64_t r = 0; r < rows; ++r)
            a = _mm_add_ps(a, _mm_loadu_ps(dZ + r * U + u));
        _mm_storeu_ps(sums + u, _mm_add_ps(_mm_loadu_ps(sums + u), a));
    }
#endif
    for (; u < u1; ++u) {
        float a = 0;
        for (std::int64_t r = 0; r < rows; ++r)
            a += dZ[r * U + u];
        sums[u] += a;
    }
}

class Dense final : public Layer
{
public:
    Dense(std::string name, DenseOptions options) : Layer(std::move(name)), m_opt(std::move(options)) {}

    std::string className() const override { return "Dense"; }
    LayerKernelSpec kernelSpec() const override
    {
        LayerKernelSpec k;
        k.kind = LayerKernelSpec::Kind::Dense;
        k.units = m_opt.units;
        k.activation = m_opt.activation;
        k.useBias = m_opt.useBias;
        return k;
    }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectInputs(*this, inputShapes, 1); !s)
            return s.error();
        const Shape &in = inputShapes[0];
        if (in.empty())
            return layerError(*this, "expects inputs with a last dimension, got shape " + shapeString(in));
        if (in.back() <= 0)
            return layerError(*this, "needs a known, non-zero last input dimension, got shape " + shapeString(in));
        m_in = in.back();
        Shape out = in;
        out.back() = m_opt.units;
        return out;
    }

    std::vector<ParamSpec> params() const override
    {
        std::vector<ParamSpec> p{{"kernel", {m_in, m_opt.units}, m_opt.kernelInitializer}};
        if (m_opt.useBias)
            p.push_back({"bias", {m_opt.units}, m_opt.biasInitializer});
        return p;
    }

    void forward(const PassContext &, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &state) const override
    {
        const FloatTensor &x = *inputs[0];
        assert(!x.shape.empty() && x.shape.back() == m_in);
        const std::int64_t F = m_in, U = m_opt.units, R = std::int64_t(x.size()) / F;
        Shape outShape = x.shape;
        outShape.back() = U;
        output.resize(outShape);
        cpu::gemm(false, false, R, U, F, 1.0f, x.ptr(), F, params[0], U, 0.0f, output.ptr(), U);

        const float *bias = m_opt.useBias ? params[1] : nullptr;
        // Pre-activation values are kept only where the activation's derivative needs them.
        float *z = activationNeedsInput(m_opt.activation) ? detail::scratch(state, 0, outShape).ptr() : nullptr;
        if (!bias && m_opt.activation == ActivationKind::Linear)
            return;
        float *y = output.ptr();
        const bool relu = m_opt.activation == ActivationKind::Relu;
        if (bias && (relu || m_opt.activation == ActivationKind::Linear)) {
            // The common case in one pass over the output (ReLU needs no pre-activation copy).
            detail::parallelRows(R, U, [&](std::int64_t r0, std::int64_t r1) { addBiasMaybeRelu(y + r0 * U, bias, r1 - r0, U, relu); });
            return;
        }
        detail::parallelRows(R, 4 * U, [&](std::int64_t r0, std::int64_t r1) {
            if (bias)
                addBiasMaybeRelu(y + r0 * U, bias, r1 - r0, U, false);
            if (z)
                std::copy(y + r0 * U, y + r1 * U, z + r0 * U);
            activationForward(m_opt.activation, y + r0 * U, y + r0 * U, (r1 - r0) * U, U);
        });
    }

    void backward(const PassContext &, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, const FloatTensor &output,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const> grads, LayerState &state) const override
    {
        const FloatTensor &x = *inputs[0];
        const std::int64_t F = m_in, U = m_opt.units, R = std::int64_t(x.size()) / F;

        // dZ = dY * f'(Z).
        const float *dZ = dOutput.ptr();
        if (m_opt.activation != ActivationKind::Linear) {
            const float *z = activationNeedsInput(m_opt.activation) ? state.saved[0].ptr() : nullptr;
            float *buf = detail::scratch(state, 1, dOutput.shape).ptr();
            detail::parallelRows(R, 4 * U, [&](std::int64_t r0, std::int64_t r1) {
                const std::int64_t o = r0 * U;
                activationBackward(m_opt.activation, z ? z + o : nullptr, output.ptr() + o, dOutput.ptr() + o, buf + o, (r1 - r0) * U, U);
            });
            dZ = buf;
        }

        // dKernel += X^T dZ; dBias += column sums of dZ (every element one deterministic sum,
        // whatever the thread count).
        if (grads[0] && R > 0)
            cpu::gemm(true, false, F, U, R, 1.0f, x.ptr(), F, dZ, U, 1.0f, grads[0], U);
        if (m_opt.useBias && grads[1] && R > 0) {
            // Column sums of dZ, each summed over the rows in order by one task: blocks of
            // columns run in parallel, and no result depends on how they are grouped.
            constexpr std::int64_t kColumns = 64;
            const std::int64_t blocks = (U + kColumns - 1) / kColumns;
            float *dBias = grads[1];
            detail::parallelRows(blocks, R * kColumns, [&](std::int64_t b0, std::int64_t b1) {
                addColumnSums(dZ, R, U, b0 * kColumns, std::min(U, b1 * kColumns), dBias);
            });
        }
        // dX = dZ K^T.
        if (!dInputs.empty() && dInputs[0]) {
            dInputs[0]->resize(x.shape);
            cpu::gemm(false, true, R, F, U, 1.0f, dZ, U, params[0], U, 0.0f, dInputs[0]->ptr(), F);
        }
    }

private:
    DenseOptions m_opt;
    std::int64_t m_in = 0;
};

} // namespace

std::unique_ptr<Layer> makeDense(std::string name, DenseOptions options) { return std::make_unique<Dense>(std::move(name), std::move(options)); }

} // namespace sluice::train
