// Dense: one gemm, then bias and activation fused in a single pass over the output.
#include "train/cpu/gemm.h"
#include "train/layers/basic_layers.h"
#include "train/layers/bias_activation.h"
#include "train/layers/layer_util.h"

#include <cassert>

namespace sluice::train {
namespace {

using detail::layerError;

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
        detail::biasActivationForward(m_opt.activation, bias, output.ptr(), z, R, U);
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
            detail::activationGradientRows(m_opt.activation, z, output.ptr(), dOutput.ptr(), buf, R, U);
            dZ = buf;
        }

        // dKernel += X^T dZ; dBias += column sums of dZ (every element one deterministic sum,
        // whatever the thread count).
        if (grads[0] && R > 0)
            cpu::gemm(true, false, F, U, R, 1.0f, x.ptr(), F, dZ, U, 1.0f, grads[0], U);
        if (m_opt.useBias && grads[1])
            detail::addBiasGradient(dZ, R, U, grads[1]);
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
