// BatchNormalization over the last axis (channels last), as Keras defines it. In training each
// channel is normalised by the mean and biased variance of the replica's own rows (every axis
// but the last), as Keras's layer does under MirroredStrategy; at inference by the moving
// statistics.
//
// The moving statistics are weights that no optimizer touches (ParamSpec::trainable false).
// Their update rides on the gradient all-reduce: backward adds to their "gradient"
//   share * (1 - momentum) * (batch statistic - moving statistic),
// share being the replica's rows over the global batch's, and the trainer adds the reduced sum
// to the weights. Summed over replicas and processes that is Keras's
//   moving = momentum * moving + (1 - momentum) * statistic
// with the statistic averaged over the replicas, as Keras's ON_READ / MEAN aggregation gives.
#include "train/layers/basic_layers.h"
#include "train/layers/layer_util.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace sluice::train {
namespace {

using detail::layerError;

// Rows are summed in fixed blocks, each block's partial sums in double, then the blocks in
// order: the same sums whatever the number of threads.
constexpr std::int64_t kBlockRows = 256;

class BatchNormalization final : public Layer
{
public:
    BatchNormalization(std::string name, BatchNormalizationOptions options) : Layer(std::move(name)), m_opt(std::move(options)) {}

    std::string className() const override { return "BatchNormalization"; }

    LayerKernelSpec kernelSpec() const override
    {
        if (m_opt.synchronized)
            return {}; // its all-reduce in the middle of a pass exists on the CPU backend only
        LayerKernelSpec k;
        k.kind = LayerKernelSpec::Kind::BatchNormalization;
        k.epsilon = m_opt.epsilon;
        k.center = m_opt.center;
        k.scale = m_opt.scale;
        k.momentum = m_opt.momentum;
        return k;
    }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectInputs(*this, inputShapes, 1); !s)
            return s.error();
        const Shape &in = inputShapes[0];
        if (in.empty())
            return layerError(*this, "expects inputs with a channel (last) dimension, got shape " + shapeString(in));
        if (m_opt.axis != -1 && m_opt.axis != std::int64_t(in.size()))
            return layerError(*this, "supports only the last axis (-1, channels last), got axis " + std::to_string(m_opt.axis) +
                                         " for inputs of shape " + shapeString(in));
        if (in.back() <= 0)
            return layerError(*this, "needs a known, non-zero channel dimension, got shape " + shapeString(in));
        m_channels = in.back();
        return in;
    }

    std::vector<ParamSpec> params() const override
    {
        // Keras's order: gamma, beta, moving_mean, moving_variance.
        std::vector<ParamSpec> p;
        if (m_opt.scale)
            p.push_back({"gamma", {m_channels}, m_opt.gammaInitializer});
        if (m_opt.center)
            p.push_back({"beta", {m_channels}, m_opt.betaInitializer});
        p.push_back({"moving_mean", {m_channels}, m_opt.movingMeanInitializer, false});
        p.push_back({"moving_variance", {m_channels}, m_opt.movingVarianceInitializer, false});
        return p;
    }

    void forward(const PassContext &ctx, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &state) const override
    {
        const FloatTensor &x = *inputs[0];
        const std::int64_t C = m_channels, N = std::int64_t(x.size()) / C;
        const Params p = split(params);
        // Per channel: mean, 1/sqrt(var + eps), and the batch variance (for the moving update).
        float *mean = stats(state), *inv = mean + C, *variance = inv + C;
        if (ctx.training && N > 0) {
            batchMoments(x.ptr(), N, mean, variance);
            for (std::int64_t c = 0; c < C; ++c)
                inv[c] = float(1.0 / std::sqrt(double(variance[c]) + m_opt.epsilon));
        } else {
            for (std::int64_t c = 0; c < C; ++c) {
                mean[c] = p.movingMean[c];
                variance[c] = p.movingVariance[c];
                inv[c] = float(1.0 / std::sqrt(double(p.movingVariance[c]) + m_opt.epsilon));
            }
        }
        *count(state) = float(N);
        normalize(x, p, state, output);
    }

    void backward(const PassContext &ctx, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, const FloatTensor &,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const> grads, LayerState &state) const override
    {
        const std::int64_t C = m_channels;
        std::vector<double> sums(std::size_t(2 * C));
        gradientSums(*inputs[0], dOutput, state, sums.data());
        finishBackward(ctx, split(params), *inputs[0], dOutput, sums.data(), sums.data(), dInputs, grads, state);
    }

    // "synchronized": true: the statistics of the global batch, from sums over every replica and
    // process. Forward: per channel sum(x) and sum(x²) in double, and the row count; backward:
    // sum(dy) and sum(dy * xhat). Then every replica normalises, and differentiates, exactly as
    // one replica holding the whole batch would.
    std::size_t syncCount() const override { return m_opt.synchronized ? std::size_t(2 * m_channels + 1) : 0; }

    void forwardSums(std::span<const float *const>, std::span<const FloatTensor *const> inputs, std::span<double> sums, LayerState &) const override
    {
        const FloatTensor &x = *inputs[0];
        const std::int64_t C = m_channels, N = std::int64_t(x.size()) / C;
        reduceBlocks(N, [&](std::int64_t r0, std::int64_t r1, double *out) {
            for (std::int64_t r = r0; r < r1; ++r)
                for (std::int64_t c = 0; c < C; ++c) {
                    const double v = x.ptr()[r * C + c];
                    out[c] += v;
                    out[C + c] += v * v;
                }
        }, 2, [&](const double *total) { std::copy_n(total, 2 * C, sums.data()); });
        sums[std::size_t(2 * C)] = double(N);
    }

    void forwardSynced(const PassContext &, std::span<const float *const> params, std::span<const FloatTensor *const> inputs,
                       std::span<const double> sums, FloatTensor &output, LayerState &state) const override
    {
        const std::int64_t C = m_channels;
        const double n = std::max(1.0, sums[std::size_t(2 * C)]);
        float *mean = stats(state), *inv = mean + C, *variance = inv + C;
        for (std::int64_t c = 0; c < C; ++c) {
            const double m = sums[std::size_t(c)] / n;
            const double v = std::max(0.0, sums[std::size_t(C + c)] / n - m * m);
            mean[c] = float(m);
            variance[c] = float(v);
            inv[c] = float(1.0 / std::sqrt(v + m_opt.epsilon));
        }
        *count(state) = float(n);
        normalize(*inputs[0], split(params), state, output);
    }

    void backwardSums(std::span<const float *const>, std::span<const FloatTensor *const> inputs, const FloatTensor &dOutput,
                      std::span<double> sums, LayerState &state) const override
    {
        gradientSums(*inputs[0], dOutput, state, sums.data());
        // This replica's own sums: its share of dGamma and dBeta (the gradient all-reduce adds
        // the replicas' shares).
        std::copy_n(sums.data(), 2 * m_channels, detail::scratch(state, 2, {2 * m_channels}).ptr());
    }

    void backwardSynced(const PassContext &ctx, std::span<const float *const> params, std::span<const FloatTensor *const> inputs,
                        const FloatTensor &, const FloatTensor &dOutput, std::span<const double> sums, std::span<FloatTensor *const> dInputs,
                        std::span<float *const> grads, LayerState &state) const override
    {
        std::vector<double> own(std::size_t(2 * m_channels));
        std::copy_n(state.saved[2].ptr(), own.size(), own.data());
        finishBackward(ctx, split(params), *inputs[0], dOutput, own.data(), sums.data(), dInputs, grads, state);
    }

private:
    struct Params
    {
        const float *gamma = nullptr, *beta = nullptr, *movingMean = nullptr, *movingVariance = nullptr;
    };
    Params split(std::span<const float *const> params) const
    {
        Params p;
        std::size_t i = 0;
        if (m_opt.scale)
            p.gamma = params[i++];
        if (m_opt.center)
            p.beta = params[i++];
        p.movingMean = params[i++];
        p.movingVariance = params[i];
        return p;
    }

    // The statistics the pass normalised with, kept for backward: mean, 1/sqrt(var + eps) and
    // the variance per channel, and the number of values they are over.
    float *stats(LayerState &state) const { return detail::scratch(state, 0, {3, m_channels}).ptr(); }
    float *count(LayerState &state) const { return detail::scratch(state, 1, {1}).ptr(); }

    // y = x * a + b per channel, a = gamma * inv and b = beta - mean * a: one multiply-add an
    // element in a loop that vectorises.
    void normalize(const FloatTensor &x, const Params &p, LayerState &state, FloatTensor &output) const
    {
        const std::int64_t C = m_channels, N = std::int64_t(x.size()) / C;
        const float *mean = stats(state), *inv = mean + C;
        output.resize(x.shape);
        std::vector<float> a(static_cast<std::size_t>(C)), b(static_cast<std::size_t>(C));
        for (std::int64_t c = 0; c < C; ++c) {
            const double scale = double(inv[c]) * (p.gamma ? double(p.gamma[c]) : 1.0);
            a[std::size_t(c)] = float(scale);
            b[std::size_t(c)] = float((p.beta ? double(p.beta[c]) : 0.0) - double(mean[c]) * scale);
        }
        detail::parallelRows(N, 2 * C, [&](std::int64_t r0, std::int64_t r1) {
            const float *__restrict as = a.data(), *__restrict bs = b.data();
            for (std::int64_t r = r0; r < r1; ++r) {
                const float *__restrict xr = x.ptr() + r * C;
                float *__restrict yr = output.ptr() + r * C;
                for (std::int64_t c = 0; c < C; ++c)
                    yr[c] = xr[c] * as[c] + bs[c];
            }
        });
    }

    // sums[0..C): sum(dy), sums[C..2C): sum(dy * xhat), per channel, over this replica's rows.
    void gradientSums(const FloatTensor &x, const FloatTensor &dOutput, LayerState &state, double *sums) const
    {
        const std::int64_t C = m_channels, N = std::int64_t(x.size()) / C;
        const float *mean = stats(state), *inv = mean + C, *dy = dOutput.ptr();
        reduceBlocks(N, [&](std::int64_t r0, std::int64_t r1, double *out) {
            for (std::int64_t r = r0; r < r1; ++r)
                for (std::int64_t c = 0; c < C; ++c) {
                    const double g = dy[r * C + c];
                    out[c] += g;
                    out[C + c] += g * double((x.ptr()[r * C + c] - mean[c]) * inv[c]);
                }
        }, 2, [&](const double *total) { std::copy_n(total, 2 * C, sums); });
    }

    // dGamma and dBeta from this replica's sums (`own`), the moving statistics' updates, and
    // dx = gamma * inv / n * (n * dy - sum(dy) - xhat * sum(dy * xhat)) with the sums and the
    // count n of the batch that was normalised (`all`: the replica's or the global batch's).
    void finishBackward(const PassContext &ctx, const Params &p, const FloatTensor &x, const FloatTensor &dOutput, const double *own,
                        const double *all, std::span<FloatTensor *const> dInputs, std::span<float *const> grads, LayerState &state) const
    {
        const std::int64_t C = m_channels, N = std::int64_t(x.size()) / C;
        const float *mean = stats(state), *inv = mean + C, *variance = inv + C, *dy = dOutput.ptr();
        const double n = std::max(1.0, double(*count(state)));
        std::size_t g = 0;
        if (m_opt.scale) {
            for (std::int64_t c = 0; c < C; ++c)
                grads[g][c] += float(own[C + c]);
            ++g;
        }
        if (m_opt.center) {
            for (std::int64_t c = 0; c < C; ++c)
                grads[g][c] += float(own[c]);
            ++g;
        }
        // The moving statistics' updates (see the top of the file): only a training pass has
        // a backward pass, and only it updates them.
        const double share = double(x.rows()) * ctx.lossScale * (1.0 - m_opt.momentum);
        for (std::int64_t c = 0; c < C; ++c) {
            grads[g][c] += float(share * (double(mean[c]) - double(p.movingMean[c])));
            grads[g + 1][c] += float(share * (double(variance[c]) - double(p.movingVariance[c])));
        }
        if (dInputs.empty() || !dInputs[0])
            return;
        dInputs[0]->resize(x.shape);
        float *dx = dInputs[0]->ptr();
        std::vector<float> a(static_cast<std::size_t>(C)), b(static_cast<std::size_t>(C)), k(static_cast<std::size_t>(C));
        for (std::int64_t c = 0; c < C; ++c) {
            const double scale = (p.gamma ? double(p.gamma[c]) : 1.0) * double(inv[c]);
            k[std::size_t(c)] = float(scale);
            a[std::size_t(c)] = float(scale * all[c] / n);
            b[std::size_t(c)] = float(scale * all[C + c] / n);
        }
        detail::parallelRows(N, 3 * C, [&](std::int64_t r0, std::int64_t r1) {
            for (std::int64_t r = r0; r < r1; ++r)
                for (std::int64_t c = 0; c < C; ++c) {
                    const float xhat = (x.ptr()[r * C + c] - mean[c]) * inv[c];
                    dx[r * C + c] = k[std::size_t(c)] * dy[r * C + c] - a[std::size_t(c)] - xhat * b[std::size_t(c)];
                }
        });
    }

    // Sums `width` × C doubles over rows [0, N) in fixed blocks (blockSum adds a block's rows
    // into its zeroed buffer); `done` gets the ordered total.
    void reduceBlocks(std::int64_t N, const std::function<void(std::int64_t, std::int64_t, double *)> &blockSum, int width,
                      const std::function<void(const double *)> &done) const
    {
        const std::int64_t C = m_channels, blocks = (N + kBlockRows - 1) / kBlockRows, stride = width * C;
        std::vector<double> partial(std::size_t(std::max<std::int64_t>(blocks, 1) * stride), 0.0);
        detail::parallelRows(blocks, kBlockRows * C, [&](std::int64_t b0, std::int64_t b1) {
            for (std::int64_t b = b0; b < b1; ++b)
                blockSum(b * kBlockRows, std::min(N, (b + 1) * kBlockRows), partial.data() + b * stride);
        });
        for (std::int64_t b = 1; b < blocks; ++b)
            for (std::int64_t i = 0; i < stride; ++i)
                partial[std::size_t(i)] += partial[std::size_t(b * stride + i)];
        done(partial.data());
    }

    void batchMoments(const float *x, std::int64_t N, float *mean, float *variance) const
    {
        const std::int64_t C = m_channels;
        std::vector<double> m(static_cast<std::size_t>(C));
        reduceBlocks(N, [&](std::int64_t r0, std::int64_t r1, double *out) {
            for (std::int64_t r = r0; r < r1; ++r)
                for (std::int64_t c = 0; c < C; ++c)
                    out[c] += x[r * C + c];
        }, 1, [&](const double *total) {
            for (std::int64_t c = 0; c < C; ++c)
                m[std::size_t(c)] = total[c] / double(N);
        });
        // The variance around the mean (two passes: no cancellation).
        reduceBlocks(N, [&](std::int64_t r0, std::int64_t r1, double *out) {
            for (std::int64_t r = r0; r < r1; ++r)
                for (std::int64_t c = 0; c < C; ++c) {
                    const double d = x[r * C + c] - m[std::size_t(c)];
                    out[c] += d * d;
                }
        }, 1, [&](const double *total) {
            for (std::int64_t c = 0; c < C; ++c) {
                mean[c] = float(m[std::size_t(c)]);
                variance[c] = float(total[c] / double(N));
            }
        });
    }

    BatchNormalizationOptions m_opt;
    std::int64_t m_channels = 0;
};

} // namespace

std::unique_ptr<Layer> makeBatchNormalization(std::string name, BatchNormalizationOptions options)
{
    return std::make_unique<BatchNormalization>(std::move(name), std::move(options));
}

} // namespace sluice::train
