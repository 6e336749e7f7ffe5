// Activation: an activation function as a layer, softmax over the last axis.
#include "train/layers/basic_layers.h"
#include "train/layers/layer_util.h"

namespace sluice::train {
namespace {

std::int64_t lastDim(const Shape &batchShape) { return batchShape.size() > 1 ? batchShape.back() : 1; }

class Activation final : public Layer
{
public:
    Activation(std::string name, ActivationKind kind) : Layer(std::move(name)), m_kind(kind) {}

    std::string className() const override { return "Activation"; }
    LayerKernelSpec kernelSpec() const override
    {
        LayerKernelSpec k;
        k.kind = LayerKernelSpec::Kind::Activation;
        k.activation = m_kind;
        return k;
    }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectInputs(*this, inputShapes, 1); !s)
            return s.error();
        return inputShapes[0];
    }

    void forward(const PassContext &, std::span<const float *const>, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &) const override
    {
        const FloatTensor &x = *inputs[0];
        output.resize(x.shape);
        const std::int64_t row = lastDim(x.shape), rows = row > 0 ? std::int64_t(x.size()) / row : 0;
        detail::parallelRows(rows, 4 * row, [&](std::int64_t r0, std::int64_t r1) {
            activationForward(m_kind, x.ptr() + r0 * row, output.ptr() + r0 * row, (r1 - r0) * row, row);
        });
    }

    void backward(const PassContext &, std::span<const float *const>, std::span<const FloatTensor *const> inputs, const FloatTensor &output,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const>, LayerState &) const override
    {
        if (dInputs.empty() || !dInputs[0])
            return;
        const FloatTensor &x = *inputs[0];
        FloatTensor &dx = *dInputs[0];
        dx.resize(x.shape);
        const std::int64_t row = lastDim(x.shape), rows = row > 0 ? std::int64_t(x.size()) / row : 0;
        detail::parallelRows(rows, 4 * row, [&](std::int64_t r0, std::int64_t r1) {
            const std::int64_t o = r0 * row;
            activationBackward(m_kind, x.ptr() + o, output.ptr() + o, dOutput.ptr() + o, dx.ptr() + o, (r1 - r0) * row, row);
        });
    }

private:
    ActivationKind m_kind;
};

} // namespace

std::unique_ptr<Layer> makeActivation(std::string name, ActivationKind activation)
{
    return std::make_unique<Activation>(std::move(name), activation);
}

} // namespace sluice::train
