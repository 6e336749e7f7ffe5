// Dropout: masks recomputed from a counter-based hash in backward, so nothing is saved.
#include "train/model/initializers.h"
#include "train/layers/basic_layers.h"
#include "train/layers/layer_util.h"

#include <algorithm>
#include <cmath>

namespace sluice::train {
namespace {

class Dropout final : public Layer
{
public:
    Dropout(std::string name, double rate, std::optional<std::uint64_t> seed)
        : Layer(std::move(name)), m_rate(rate), m_seed(seed),
          m_key(seed ? mixHash(*seed, 0x44726F706F7574ull /* "Dropout" */) : hashString(this->name())),
          m_threshold(std::uint64_t(std::ldexp(rate, 53))), m_scale(float(1.0 / (1.0 - rate)))
    {
    }

    std::string className() const override { return "Dropout"; }
    LayerKernelSpec kernelSpec() const override
    {
        LayerKernelSpec k;
        k.kind = LayerKernelSpec::Kind::Dropout;
        k.rate = m_rate;
        k.seed = m_seed;
        return k;
    }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectInputs(*this, inputShapes, 1); !s)
            return s.error();
        return inputShapes[0];
    }

    void forward(const PassContext &ctx, std::span<const float *const>, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &) const override
    {
        apply(ctx, *inputs[0], output);
    }

    void backward(const PassContext &ctx, std::span<const float *const>, std::span<const FloatTensor *const>, const FloatTensor &,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const>, LayerState &) const override
    {
        if (!dInputs.empty() && dInputs[0])
            apply(ctx, dOutput, *dInputs[0]); // the same mask and scale: y = m * s * x is linear
    }

private:
    // out = mask * scale * in, or a copy at inference.
    void apply(const PassContext &ctx, const FloatTensor &in, FloatTensor &out) const
    {
        out.resize(in.shape);
        if (!ctx.training || m_rate == 0.0) {
            std::copy(in.data.begin(), in.data.end(), out.data.begin());
            return;
        }
        const std::int64_t rowSize = in.rowSize(), rows = rowSize > 0 ? std::int64_t(in.size()) / rowSize : 0;
        const std::uint64_t stepKey = mixHash(mixHash(ctx.seed, m_key), ctx.step);
        detail::parallelRows(rows, 2 * rowSize, [&](std::int64_t r0, std::int64_t r1) {
            for (std::int64_t r = r0; r < r1; ++r) {
                // The GLOBAL row: a replica's slice draws what one replica would on the whole batch.
                const std::uint64_t rowKey = mixHash(stepKey, std::uint64_t(ctx.globalRowOffset + std::int64_t(r) * ctx.globalRowStride));
                const float *src = in.ptr() + r * rowSize;
                float *dst = out.ptr() + r * rowSize;
                for (std::int64_t c = 0; c < rowSize; ++c)
                    dst[c] = (mixHash(rowKey, std::uint64_t(c)) >> 11) < m_threshold ? 0.0f : src[c] * m_scale;
            }
        });
    }

    double m_rate;
    std::optional<std::uint64_t> m_seed;
    std::uint64_t m_key;
    std::uint64_t m_threshold; // dropped where the top 53 bits of the element's hash are below
    float m_scale;
};

} // namespace

std::unique_ptr<Layer> makeDropout(std::string name, double rate, std::optional<std::uint64_t> seed)
{
    return std::make_unique<Dropout>(std::move(name), rate, seed);
}

} // namespace sluice::train
