// LayerNormalization over the last axis. Forward keeps each row's mean and 1/std (2 floats a
// row); backward recomputes the normalised values from the input.
#include "train/layers/basic_layers.h"
#include "train/layers/layer_util.h"

#include <cmath>

namespace sluice::train {
namespace {

using detail::layerError;

class LayerNormalization final : public Layer
{
public:
    LayerNormalization(std::string name, LayerNormalizationOptions options) : Layer(std::move(name)), m_opt(std::move(options)) {}

    std::string className() const override { return "LayerNormalization"; }
    LayerKernelSpec kernelSpec() const override
    {
        LayerKernelSpec k;
        k.kind = LayerKernelSpec::Kind::LayerNormalization;
        k.epsilon = m_opt.epsilon;
        k.center = m_opt.center;
        k.scale = m_opt.scale;
        return k;
    }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectInputs(*this, inputShapes, 1); !s)
            return s.error();
        const Shape &in = inputShapes[0];
        if (in.empty())
            return layerError(*this, "expects inputs with a last dimension, got shape " + shapeString(in));
        if (m_opt.axis != -1 && m_opt.axis != std::int64_t(in.size()))
            return layerError(*this, "supports only the last axis (-1), got axis " + std::to_string(m_opt.axis) + " for inputs of shape " +
                                         shapeString(in));
        if (in.back() <= 0)
            return layerError(*this, "needs a known, non-zero last input dimension, got shape " + shapeString(in));
        m_features = in.back();
        return in;
    }

    std::vector<ParamSpec> params() const override
    {
        std::vector<ParamSpec> p;
        if (m_opt.scale)
            p.push_back({"gamma", {m_features}, m_opt.gammaInitializer});
        if (m_opt.center)
            p.push_back({"beta", {m_features}, m_opt.betaInitializer});
        return p;
    }

    void forward(const PassContext &, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &state) const override
    {
        const FloatTensor &x = *inputs[0];
        const std::int64_t F = m_features, R = std::int64_t(x.size()) / F;
        const float *gamma = m_opt.scale ? params[0] : nullptr;
        const float *beta = m_opt.center ? params[m_opt.scale ? 1 : 0] : nullptr;
        output.resize(x.shape);
        float *stats = detail::scratch(state, 0, {R, 2}).ptr(); // mean, 1/sqrt(var + eps)
        detail::parallelRows(R, 3 * F, [&](std::int64_t r0, std::int64_t r1) {
            for (std::int64_t r = r0; r < r1; ++r) {
                const float *xr = x.ptr() + r * F;
                float *yr = output.ptr() + r * F;
                double sum = 0;
                for (std::int64_t i = 0; i < F; ++i)
                    sum += xr[i];
                const double mean = sum / double(F);
                double sq = 0;
                for (std::int64_t i = 0; i < F; ++i)
                    sq += (xr[i] - mean) * (xr[i] - mean);
                const float inv = float(1.0 / std::sqrt(sq / double(F) + m_opt.epsilon));
                const float m = float(mean);
                stats[2 * r] = m;
                stats[2 * r + 1] = inv;
                for (std::int64_t i = 0; i < F; ++i) {
                    float v = (xr[i] - m) * inv;
                    if (gamma)
                        v *= gamma[i];
                    if (beta)
                        v += beta[i];
                    yr[i] = v;
                }
            }
        });
    }

    void backward(const PassContext &, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, const FloatTensor &,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const> grads, LayerState &state) const override
    {
        const FloatTensor &x = *inputs[0];
        const std::int64_t F = m_features, R = std::int64_t(x.size()) / F;
        const float *gamma = m_opt.scale ? params[0] : nullptr;
        const float *stats = state.saved[0].ptr();
        const float *dy = dOutput.ptr();

        // dGamma += sum_r dy * xhat, dBeta += sum_r dy: row by row, the same sums whatever the
        // number of threads.
        float *dGamma = m_opt.scale ? grads[0] : nullptr;
        float *dBeta = m_opt.center ? grads[m_opt.scale ? 1 : 0] : nullptr;
        if (dGamma || dBeta)
            for (std::int64_t r = 0; r < R; ++r) {
                const float *xr = x.ptr() + r * F, *dyr = dy + r * F;
                const float m = stats[2 * r], inv = stats[2 * r + 1];
                for (std::int64_t i = 0; i < F; ++i) {
                    if (dGamma)
                        dGamma[i] += dyr[i] * (xr[i] - m) * inv;
                    if (dBeta)
                        dBeta[i] += dyr[i];
                }
            }

        // dx = inv * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma.
        if (dInputs.empty() || !dInputs[0])
            return;
        dInputs[0]->resize(x.shape);
        float *dx = dInputs[0]->ptr();
        detail::parallelRows(R, 4 * F, [&](std::int64_t r0, std::int64_t r1) {
            for (std::int64_t r = r0; r < r1; ++r) {
                const float *xr = x.ptr() + r * F, *dyr = dy + r * F;
                float *dxr = dx + r * F;
                const float m = stats[2 * r], inv = stats[2 * r + 1];
                double sumG = 0, sumGX = 0;
                for (std::int64_t i = 0; i < F; ++i) {
                    const float g = gamma ? dyr[i] * gamma[i] : dyr[i];
                    sumG += g;
                    sumGX += double(g) * ((xr[i] - m) * inv);
                }
                const float meanG = float(sumG / double(F)), meanGX = float(sumGX / double(F));
                for (std::int64_t i = 0; i < F; ++i) {
                    const float g = gamma ? dyr[i] * gamma[i] : dyr[i];
                    dxr[i] = inv * (g - meanG - (xr[i] - m) * inv * meanGX);
                }
            }
        });
    }

private:
    LayerNormalizationOptions m_opt;
    std::int64_t m_features = 0;
};

} // namespace

std::unique_ptr<Layer> makeLayerNormalization(std::string name, LayerNormalizationOptions options)
{
    return std::make_unique<LayerNormalization>(std::move(name), std::move(options));
}

} // namespace sluice::train
