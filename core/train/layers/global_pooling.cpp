// GlobalAveragePooling1D/2D and GlobalMaxPooling1D/2D: the mean or the maximum of each channel
// over all positions of a sample. Max pooling keeps nothing between the passes: backward finds
// each maximum (the first in position order) again.
#include "train/layers/conv/conv_layers.h"
#include "train/layers/conv/conv_geometry.h"
#include "train/layers/layer_util.h"

#include <algorithm>
#include <cassert>
#include <vector>

namespace sluice::train {
namespace {

using detail::layerError;

class GlobalPooling final : public Layer
{
public:
    GlobalPooling(std::string name, GlobalPoolingOptions options) : Layer(std::move(name)), m_opt(options)
    {
        assert(m_opt.rank == 1 || m_opt.rank == 2);
    }

    std::string className() const override
    {
        return std::string(m_opt.kind == PoolKind::Max ? "GlobalMaxPooling" : "GlobalAveragePooling") + (m_opt.rank == 1 ? "1D" : "2D");
    }

    // The positions and channels come from the input's shape (LayerCall::inputShapes).
    LayerKernelSpec kernelSpec() const override
    {
        LayerKernelSpec k;
        k.kind = LayerKernelSpec::Kind::GlobalPooling;
        k.maxPooling = m_opt.kind == PoolKind::Max;
        return k;
    }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectSpatialInput(*this, inputShapes, m_opt.rank); !s)
            return s.error();
        const Shape &in = inputShapes[0];
        m_positions = shapeCount(in) / in.back();
        m_channels = in.back();
        m_outSample = m_opt.keepdims ? Shape(std::size_t(m_opt.rank), 1) : Shape{};
        m_outSample.push_back(m_channels);
        return m_outSample;
    }

    void forward(const PassContext &, std::span<const float *const>, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &) const override
    {
        const FloatTensor &x = *inputs[0];
        const std::int64_t B = x.shape[0], P = m_positions, C = m_channels;
        assert(std::int64_t(x.size()) == B * P * C);
        Shape outShape{B};
        outShape.insert(outShape.end(), m_outSample.begin(), m_outSample.end());
        output.resize(outShape);
        const bool isMax = m_opt.kind == PoolKind::Max;
        detail::parallelRows(B, P * C, [&](std::int64_t b0, std::int64_t b1) {
            std::vector<double> sums(std::size_t(isMax ? 0 : C));
            for (std::int64_t b = b0; b < b1; ++b) {
                const float *sample = x.ptr() + b * P * C;
                float *o = output.ptr() + b * C;
                if (isMax) {
                    // Strictly greater: the first maximum in position order wins.
                    std::copy_n(sample, C, o);
                    for (std::int64_t p = 1; p < P; ++p)
                        for (std::int64_t c = 0; c < C; ++c)
                            if (sample[p * C + c] > o[c])
                                o[c] = sample[p * C + c];
                    continue;
                }
                // Sums in double: many positions (a large image) would lose float precision.
                std::fill(sums.begin(), sums.end(), 0.0);
                for (std::int64_t p = 0; p < P; ++p)
                    for (std::int64_t c = 0; c < C; ++c)
                        sums[std::size_t(c)] += sample[p * C + c];
                for (std::int64_t c = 0; c < C; ++c)
                    o[c] = float(sums[std::size_t(c)] / double(P));
            }
        });
    }

    void backward(const PassContext &, std::span<const float *const>, std::span<const FloatTensor *const> inputs, const FloatTensor &,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const>, LayerState &) const override
    {
        if (dInputs.empty() || !dInputs[0])
            return;
        const FloatTensor &x = *inputs[0];
        FloatTensor &dx = *dInputs[0];
        dx.resize(x.shape);
        const std::int64_t B = x.shape[0], P = m_positions, C = m_channels;
        const bool isMax = m_opt.kind == PoolKind::Max;
        detail::parallelRows(B, P * C, [&](std::int64_t b0, std::int64_t b1) {
            for (std::int64_t b = b0; b < b1; ++b) {
                const float *sample = x.ptr() + b * P * C, *dy = dOutput.ptr() + b * C;
                float *d = dx.ptr() + b * P * C;
                if (!isMax) {
                    for (std::int64_t p = 0; p < P; ++p)
                        for (std::int64_t c = 0; c < C; ++c)
                            d[p * C + c] = dy[c] / float(P);
                    continue;
                }
                std::fill_n(d, P * C, 0.0f);
                for (std::int64_t c = 0; c < C; ++c) {
                    std::int64_t best = 0;
                    for (std::int64_t p = 1; p < P; ++p)
                        if (sample[p * C + c] > sample[best * C + c])
                            best = p;
                    d[best * C + c] = dy[c];
                }
            }
        });
    }

private:
    GlobalPoolingOptions m_opt;
    std::int64_t m_positions = 0, m_channels = 0;
    Shape m_outSample;
};

} // namespace

std::unique_ptr<Layer> makeGlobalPooling(std::string name, GlobalPoolingOptions options)
{
    return std::make_unique<GlobalPooling>(std::move(name), options);
}

} // namespace sluice::train
