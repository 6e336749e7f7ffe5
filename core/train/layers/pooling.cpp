// MaxPooling1D/2D and AveragePooling1D/2D over channels-last windows (conv_geometry.h), with
// TensorFlow's semantics at the padding: max pooling ignores padded positions, average pooling
// divides by the number of positions inside the input. Max pooling keeps nothing between the
// passes: backward finds each window's maximum again.
#include "train/layers/conv/conv_geometry.h"
#include "train/layers/conv/conv_layers.h"
#include "train/layers/layer_util.h"

#include <algorithm>
#include <cassert>

namespace sluice::train {
namespace {

using detail::layerError;

// The part of output (oy, ox)'s window inside the input: rows [y0, y1), columns [x0, x1).
// Never empty: "same" padding is always smaller than the window.
struct Span
{
    std::int64_t y0, y1, x0, x1;
    std::int64_t count() const { return (y1 - y0) * (x1 - x0); }
};

Span windowSpan(const detail::Window2D &win, std::int64_t oy, std::int64_t ox)
{
    const std::int64_t ys = win.h.start(oy), xs = win.w.start(ox);
    Span s{std::max<std::int64_t>(ys, 0), std::min(ys + win.h.size, win.h.in), std::max<std::int64_t>(xs, 0), std::min(xs + win.w.size, win.w.in)};
    assert(s.y0 < s.y1 && s.x0 < s.x1);
    return s;
}

class Pooling final : public Layer
{
public:
    Pooling(std::string name, PoolingOptions options) : Layer(std::move(name)), m_opt(std::move(options))
    {
        assert(m_opt.rank == 1 || m_opt.rank == 2);
        assert(m_opt.poolSize.size() == std::size_t(m_opt.rank) && m_opt.strides.size() == std::size_t(m_opt.rank));
    }

    std::string className() const override
    {
        return std::string(m_opt.kind == PoolKind::Max ? "MaxPooling" : "AveragePooling") + (m_opt.rank == 1 ? "1D" : "2D");
    }

    LayerKernelSpec kernelSpec() const override
    {
        LayerKernelSpec k;
        k.kind = LayerKernelSpec::Kind::Pooling;
        k.maxPooling = m_opt.kind == PoolKind::Max;
        k.window = detail::kernelWindow(m_win);
        return k;
    }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectSpatialInput(*this, inputShapes, m_opt.rank); !s)
            return s.error();
        const Shape &in = inputShapes[0];
        const Shape ones(std::size_t(m_opt.rank), 1);
        m_win = detail::makeWindow(m_opt.rank, in, m_opt.poolSize, m_opt.strides, ones, m_opt.padding);
        if (m_win.outPositions() == 0)
            return layerError(*this, "pool_size " + shapeString(m_opt.poolSize) + " does not fit inputs of shape " + shapeString(in) +
                                         " with padding \"valid\"");
        Shape out;
        if (m_opt.rank == 2)
            out.push_back(m_win.h.out);
        out.push_back(m_win.w.out);
        out.push_back(in.back());
        m_outSample = out;
        return out;
    }

    void forward(const PassContext &, std::span<const float *const>, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &) const override
    {
        const FloatTensor &x = *inputs[0];
        assert(x.shape.size() == std::size_t(m_opt.rank) + 2 && x.shape.back() == m_win.channels);
        const std::int64_t B = x.shape[0], C = m_win.channels, W = m_win.w.in, OW = m_win.w.out;
        Shape outShape{B};
        outShape.insert(outShape.end(), m_outSample.begin(), m_outSample.end());
        output.resize(outShape);
        const bool isMax = m_opt.kind == PoolKind::Max;
        // A task per output row (b, oy): each output is written by one task.
        detail::parallelRows(B * m_win.h.out, OW * m_win.taps() * C, [&](std::int64_t r0, std::int64_t r1) {
            for (std::int64_t r = r0; r < r1; ++r) {
                const std::int64_t b = r / m_win.h.out, oy = r % m_win.h.out;
                const float *sample = x.ptr() + b * m_win.inPositions() * C;
                for (std::int64_t ox = 0; ox < OW; ++ox) {
                    float *o = output.ptr() + (r * OW + ox) * C;
                    const Span s = windowSpan(m_win, oy, ox);
                    std::copy_n(sample + (s.y0 * W + s.x0) * C, C, o);
                    for (std::int64_t iy = s.y0; iy < s.y1; ++iy)
                        for (std::int64_t ix = iy == s.y0 ? s.x0 + 1 : s.x0; ix < s.x1; ++ix) {
                            const float *__restrict v = sample + (iy * W + ix) * C;
                            float *__restrict out = o;
                            // Branch-free over the channels, so the loop vectorises; `v > o`
                            // keeps the first maximum in window order.
                            if (isMax)
                                for (std::int64_t c = 0; c < C; ++c)
                                    out[c] = v[c] > out[c] ? v[c] : out[c];
                            else
                                for (std::int64_t c = 0; c < C; ++c)
                                    out[c] += v[c];
                        }
                    if (!isMax) {
                        const float count = float(s.count());
                        for (std::int64_t c = 0; c < C; ++c)
                            o[c] /= count;
                    }
                }
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
        dx.zero();
        const std::int64_t B = x.shape[0], C = m_win.channels, W = m_win.w.in, OH = m_win.h.out, OW = m_win.w.out;
        const bool isMax = m_opt.kind == PoolKind::Max;
        // Windows of different output rows overlap unless the stride is at least the window:
        // then a task per output row (b, oy), else a task per sample, so that every input
        // gradient is summed by one task in a fixed order.
        const std::int64_t rowsPerUnit = m_win.h.stride >= m_win.h.size ? 1 : OH;
        detail::parallelRows(B * OH / rowsPerUnit, rowsPerUnit * OW * m_win.taps() * C, [&](std::int64_t u0, std::int64_t u1) {
            for (std::int64_t r = u0 * rowsPerUnit; r < u1 * rowsPerUnit; ++r) {
                const std::int64_t b = r / OH, oy = r % OH;
                const float *sample = x.ptr() + b * m_win.inPositions() * C;
                float *dSample = dx.ptr() + b * m_win.inPositions() * C;
                for (std::int64_t ox = 0; ox < OW; ++ox) {
                    const float *dy = dOutput.ptr() + (r * OW + ox) * C;
                    const Span s = windowSpan(m_win, oy, ox);
                    if (!isMax) {
                        const float count = float(s.count());
                        for (std::int64_t iy = s.y0; iy < s.y1; ++iy)
                            for (std::int64_t ix = s.x0; ix < s.x1; ++ix) {
                                float *d = dSample + (iy * W + ix) * C;
                                for (std::int64_t c = 0; c < C; ++c)
                                    d[c] += dy[c] / count;
                            }
                        continue;
                    }
                    for (std::int64_t c = 0; c < C; ++c) {
                        std::int64_t best = s.y0 * W + s.x0;
                        float max = sample[best * C + c];
                        for (std::int64_t iy = s.y0; iy < s.y1; ++iy)
                            for (std::int64_t ix = s.x0; ix < s.x1; ++ix)
                                if (const float v = sample[(iy * W + ix) * C + c]; v > max) {
                                    max = v;
                                    best = iy * W + ix;
                                }
                        dSample[best * C + c] += dy[c];
                    }
                }
            }
        });
    }

private:
    PoolingOptions m_opt;
    detail::Window2D m_win;
    Shape m_outSample;
};

} // namespace

std::unique_ptr<Layer> makePooling(std::string name, PoolingOptions options)
{
    return std::make_unique<Pooling>(std::move(name), std::move(options));
}

} // namespace sluice::train
