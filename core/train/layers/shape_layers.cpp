// Layers that only move values: RepeatVector, Flatten, Reshape.
#include "train/layers/basic_layers.h"
#include "train/layers/layer_util.h"

#include <algorithm>

namespace sluice::train {
namespace {

using detail::layerError;

bool allKnown(const Shape &s)
{
    return std::all_of(s.begin(), s.end(), [](std::int64_t d) { return d >= 0; });
}

// The shape of [B, per-sample target] for a batch of `batchRows` rows of `rowSize` values, with
// a -1 in the target resolved from the row size.
Shape batchShape(std::int64_t batchRows, std::int64_t rowSize, const Shape &target)
{
    Shape out{batchRows};
    std::int64_t known = 1;
    for (auto d : target)
        known *= d >= 0 ? d : 1;
    for (auto d : target)
        out.push_back(d >= 0 ? d : (known > 0 ? rowSize / known : 0));
    return out;
}

// Base of the layers whose output is their input's values in another shape.
class CopyLayer : public Layer
{
public:
    using Layer::Layer;

    // Row-major values are unchanged: on a GPU the output is a copy in the new shape.
    LayerKernelSpec kernelSpec() const override
    {
        LayerKernelSpec k;
        k.kind = LayerKernelSpec::Kind::Reshape;
        return k;
    }

    void forward(const PassContext &, std::span<const float *const>, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &) const override
    {
        const FloatTensor &x = *inputs[0];
        output.resize(batchShape(x.rows(), x.rowSize(), m_target));
        std::copy(x.data.begin(), x.data.end(), output.data.begin());
    }

    void backward(const PassContext &, std::span<const float *const>, std::span<const FloatTensor *const> inputs, const FloatTensor &,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const>, LayerState &) const override
    {
        if (dInputs.empty() || !dInputs[0])
            return;
        dInputs[0]->resize(inputs[0]->shape);
        std::copy(dOutput.data.begin(), dOutput.data.end(), dInputs[0]->data.begin());
    }

protected:
    Shape m_target; // per sample, -1 where the input's shape is not known until run time
};

class Flatten final : public CopyLayer
{
public:
    using CopyLayer::CopyLayer;
    std::string className() const override { return "Flatten"; }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectInputs(*this, inputShapes, 1); !s)
            return s.error();
        m_target = {allKnown(inputShapes[0]) ? shapeCount(inputShapes[0]) : -1};
        return m_target;
    }
};

class Reshape final : public CopyLayer
{
public:
    Reshape(std::string name, Shape target) : CopyLayer(std::move(name)), m_requested(std::move(target)) {}
    std::string className() const override { return "Reshape"; }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectInputs(*this, inputShapes, 1); !s)
            return s.error();
        const Shape &in = inputShapes[0];
        const auto unknown = std::count(m_requested.begin(), m_requested.end(), -1);
        if (unknown > 1 || std::any_of(m_requested.begin(), m_requested.end(), [](std::int64_t d) { return d < -1; }))
            return layerError(*this, "target_shape " + shapeString(m_requested) + " may hold at most one -1 and no other negative dimension");
        m_target = m_requested;
        if (!allKnown(in))
            return m_target;
        const std::int64_t count = shapeCount(in);
        std::int64_t known = 1;
        for (auto d : m_requested)
            known *= d >= 0 ? d : 1;
        const bool fits = unknown ? (known > 0 ? count % known == 0 : count == 0) : known == count;
        if (!fits)
            return layerError(*this, "cannot reshape inputs of shape " + shapeString(in) + " (" + std::to_string(count) + " values a sample) to " +
                                         shapeString(m_requested));
        for (auto &d : m_target)
            if (d < 0)
                d = known > 0 ? count / known : 0;
        return m_target;
    }

private:
    Shape m_requested;
};

class RepeatVector final : public Layer
{
public:
    RepeatVector(std::string name, std::int64_t n) : Layer(std::move(name)), m_n(n) {}
    std::string className() const override { return "RepeatVector"; }
    LayerKernelSpec kernelSpec() const override
    {
        LayerKernelSpec k;
        k.kind = LayerKernelSpec::Kind::RepeatVector;
        k.repeats = m_n;
        return k;
    }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectInputs(*this, inputShapes, 1); !s)
            return s.error();
        const Shape &in = inputShapes[0];
        if (in.size() != 1)
            return layerError(*this, "expects inputs of shape (features,) per sample, got shape " + shapeString(in));
        return Shape{m_n, in[0]};
    }

    void forward(const PassContext &, std::span<const float *const>, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &) const override
    {
        const FloatTensor &x = *inputs[0];
        const std::int64_t B = x.rows(), F = x.rowSize();
        output.resize({B, m_n, F});
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t t = 0; t < m_n; ++t)
                std::copy_n(x.ptr() + b * F, F, output.ptr() + (b * m_n + t) * F);
    }

    void backward(const PassContext &, std::span<const float *const>, std::span<const FloatTensor *const> inputs, const FloatTensor &,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const>, LayerState &) const override
    {
        if (dInputs.empty() || !dInputs[0])
            return;
        const FloatTensor &x = *inputs[0];
        const std::int64_t B = x.rows(), F = x.rowSize();
        FloatTensor &dx = *dInputs[0];
        dx.resize(x.shape);
        dx.zero();
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t t = 0; t < m_n; ++t) {
                const float *src = dOutput.ptr() + (b * m_n + t) * F;
                float *dst = dx.ptr() + b * F;
                for (std::int64_t f = 0; f < F; ++f)
                    dst[f] += src[f];
            }
    }

private:
    std::int64_t m_n;
};

} // namespace

std::unique_ptr<Layer> makeRepeatVector(std::string name, std::int64_t n) { return std::make_unique<RepeatVector>(std::move(name), n); }
std::unique_ptr<Layer> makeFlatten(std::string name) { return std::make_unique<Flatten>(std::move(name)); }
std::unique_ptr<Layer> makeReshape(std::string name, Shape target) { return std::make_unique<Reshape>(std::move(name), std::move(target)); }

} // namespace sluice::train
