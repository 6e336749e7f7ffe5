// TimeDistributed(Dense): a Dense already acts on the last axis of any rank, so the wrapper only
// checks that there is a time axis and forwards to the inner layer.
#include "train/layers/basic_layers.h"
#include "train/layers/layer_util.h"

namespace sluice::train {
namespace {

class TimeDistributed final : public Layer
{
public:
    TimeDistributed(std::string name, std::unique_ptr<Layer> inner) : Layer(std::move(name)), m_inner(std::move(inner)) {}

    std::string className() const override { return "TimeDistributed"; }
    // A Dense over the last axis already maps every time step: the inner layer's kernels do.
    LayerKernelSpec kernelSpec() const override { return m_inner->kernelSpec(); }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectInputs(*this, inputShapes, 1); !s)
            return s.error();
        const Shape &in = inputShapes[0];
        if (in.size() < 2)
            return detail::layerError(*this, "expects inputs of shape (time steps, features...) per sample, got shape " + shapeString(in));
        auto out = m_inner->build(inputShapes);
        if (!out)
            return detail::layerError(*this, "over " + out.error().reason);
        return out;
    }

    std::vector<ParamSpec> params() const override { return m_inner->params(); }

    void forward(const PassContext &ctx, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &state) const override
    {
        m_inner->forward(ctx, params, inputs, output, state);
    }

    void backward(const PassContext &ctx, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, const FloatTensor &output,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const> grads, LayerState &state) const override
    {
        m_inner->backward(ctx, params, inputs, output, dOutput, dInputs, grads, state);
    }

private:
    std::unique_ptr<Layer> m_inner;
};

} // namespace

std::unique_ptr<Layer> makeTimeDistributed(std::string name, std::unique_ptr<Layer> inner)
{
    if (!inner || inner->className() != "Dense")
        return nullptr;
    return std::make_unique<TimeDistributed>(std::move(name), std::move(inner));
}

} // namespace sluice::train
