// Concatenate along the last axis: per row, each input's row is copied next to the previous.
#include "train/layers/basic_layers.h"
#include "train/layers/layer_util.h"

#include <algorithm>

namespace sluice::train {
namespace {

using detail::layerError;

class Concatenate final : public Layer
{
public:
    Concatenate(std::string name, std::int64_t axis) : Layer(std::move(name)), m_axis(axis) {}

    std::string className() const override { return "Concatenate"; }
    LayerKernelSpec kernelSpec() const override
    {
        LayerKernelSpec k;
        k.kind = LayerKernelSpec::Kind::Concatenate; // the last axis only (build refuses others)
        return k;
    }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (inputShapes.empty())
            return layerError(*this, "expects at least 1 input, got none");
        const Shape &first = inputShapes[0];
        // Keras counts axes with the batch dimension: the last is -1 or the per-sample rank.
        if (m_axis != -1 && m_axis != std::int64_t(first.size()))
            return layerError(*this, "supports only the last axis (-1), got axis " + std::to_string(m_axis) + " for inputs of shape " +
                                         shapeString(first));
        Shape out = first;
        for (std::size_t i = 0; i < inputShapes.size(); ++i) {
            const Shape &s = inputShapes[i];
            if (s.empty() || s.back() < 0)
                return layerError(*this, "needs inputs with a known last dimension, input " + std::to_string(i) + " has shape " + shapeString(s));
            if (s.size() != first.size() || !std::equal(s.begin(), s.end() - 1, first.begin()))
                return layerError(*this, "needs inputs that agree in every dimension but the last; input 0 has shape " + shapeString(first) +
                                             ", input " + std::to_string(i) + " has shape " + shapeString(s));
            if (i > 0)
                out.back() += s.back();
        }
        return out;
    }

    void forward(const PassContext &, std::span<const float *const>, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &) const override
    {
        Shape outShape = inputs[0]->shape;
        outShape.back() = 0;
        for (const FloatTensor *in : inputs)
            outShape.back() += in->shape.back();
        output.resize(outShape);
        const std::int64_t width = outShape.back(), rows = width > 0 ? std::int64_t(output.size()) / width : 0;
        detail::parallelRows(rows, width, [&](std::int64_t r0, std::int64_t r1) {
            std::int64_t col = 0;
            for (const FloatTensor *in : inputs) {
                const std::int64_t w = in->shape.back();
                for (std::int64_t r = r0; r < r1; ++r)
                    std::copy_n(in->ptr() + r * w, w, output.ptr() + r * width + col);
                col += w;
            }
        });
    }

    void backward(const PassContext &, std::span<const float *const>, std::span<const FloatTensor *const> inputs, const FloatTensor &,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const>, LayerState &) const override
    {
        const std::int64_t width = dOutput.shape.back(), rows = width > 0 ? std::int64_t(dOutput.size()) / width : 0;
        for (std::size_t i = 0; i < dInputs.size(); ++i)
            if (dInputs[i])
                dInputs[i]->resize(inputs[i]->shape);
        detail::parallelRows(rows, width, [&](std::int64_t r0, std::int64_t r1) {
            std::int64_t col = 0;
            for (std::size_t i = 0; i < inputs.size(); ++i) {
                const std::int64_t w = inputs[i]->shape.back();
                if (i < dInputs.size() && dInputs[i])
                    for (std::int64_t r = r0; r < r1; ++r)
                        std::copy_n(dOutput.ptr() + r * width + col, w, dInputs[i]->ptr() + r * w);
                col += w;
            }
        });
    }

private:
    std::int64_t m_axis;
};

} // namespace

std::unique_ptr<Layer> makeConcatenate(std::string name, std::int64_t axis) { return std::make_unique<Concatenate>(std::move(name), axis); }

} // namespace sluice::train
