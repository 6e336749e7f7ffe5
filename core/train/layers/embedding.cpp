// Embedding: each id of the input picks a row of the table. The gradient of the table is the
// sum of the output gradient's rows per id, so it is row-sparse (ParamSpec::rowSparse): backward
// adds into the rows the batch used and lists them, and the trainer zeroes, all-reduces, clips
// and (with sparse_updates) updates those rows only (train/loop/step_update.h).
#include "train/layers/basic_layers.h"
#include "train/layers/layer_util.h"
#include "train/model/prefetch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace sluice::train {
namespace {

using detail::layerError;

// Ids travel between layers as float32, which holds every integer up to 2^24 exactly.
constexpr std::int64_t kMaxRows = std::int64_t(1) << 24;

class Embedding final : public Layer
{
public:
    Embedding(std::string name, EmbeddingOptions options) : Layer(std::move(name)), m_opt(std::move(options)) {}

    std::string className() const override { return "Embedding"; }
    LayerKernelSpec kernelSpec() const override
    {
        LayerKernelSpec k;
        k.kind = LayerKernelSpec::Kind::Embedding;
        k.units = m_opt.outputDim;
        k.inputDim = m_opt.inputDim;
        k.sparseUpdates = m_opt.sparseUpdates;
        return k;
    }

    Result<Shape> build(const std::vector<Shape> &inputShapes) override
    {
        if (auto s = detail::expectInputs(*this, inputShapes, 1); !s)
            return s.error();
        if (m_opt.inputDim > kMaxRows)
            return layerError(*this, "input_dim " + std::to_string(m_opt.inputDim) + " is larger than 16777216: ids reach the layer as float32, "
                                     "which holds integers exactly only up to 2^24");
        Shape out = inputShapes[0];
        out.push_back(m_opt.outputDim);
        return out;
    }

    std::vector<ParamSpec> params() const override
    {
        ParamSpec table{"embeddings", {m_opt.inputDim, m_opt.outputDim}, m_opt.embeddingsInitializer};
        table.rowSparse = true;
        table.sparseUpdates = m_opt.sparseUpdates;
        return {table};
    }

    void forward(const PassContext &ctx, std::span<const float *const> params, std::span<const FloatTensor *const> inputs, FloatTensor &output,
                 LayerState &state) const override
    {
        const FloatTensor &ids = *inputs[0];
        const std::int64_t D = m_opt.outputDim, n = std::int64_t(ids.size());
        Shape outShape = ids.shape;
        outShape.push_back(D);
        output.resize(outShape);
        // Checked before any row is read: an id out of range stops the step, naming it.
        for (std::int64_t i = 0; i < n; ++i) {
            const float v = ids.data[std::size_t(i)];
            if (!(v > -1.0f && v < float(m_opt.inputDim))) {
                state.error = outOfRange(ctx, v, i, ids.rowSize());
                return;
            }
        }
        const float *table = params[0];
        float *out = output.ptr();
        detail::parallelRows(n, D, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i) {
                if (i + std::int64_t(kPrefetchRows) < e)
                    prefetchRow(table + std::int64_t(ids.data[std::size_t(i) + kPrefetchRows]) * D, std::size_t(D));
                const auto row = std::int64_t(ids.data[std::size_t(i)]); // truncation, as Keras's cast to int
                std::memcpy(out + i * D, table + row * D, std::size_t(D) * sizeof(float));
            }
        });
    }

    void backward(const PassContext &, std::span<const float *const>, std::span<const FloatTensor *const> inputs, const FloatTensor &,
                  const FloatTensor &dOutput, std::span<FloatTensor *const> dInputs, std::span<float *const> grads, LayerState &state) const override
    {
        const FloatTensor &ids = *inputs[0];
        const std::int64_t D = m_opt.outputDim, n = std::int64_t(ids.size());
        float *dTable = grads[0];
        const float *dOut = dOutput.ptr();
        // In input order, one thread: the sums per row do not depend on the thread count.
        state.rows.clear();
        state.rows.reserve(std::size_t(n));
        for (std::int64_t i = 0; i < n; ++i) {
            if (i + std::int64_t(kPrefetchRows) < n)
                prefetchRow(dTable + std::int64_t(ids.data[std::size_t(i) + kPrefetchRows]) * D, std::size_t(D));
            const auto row = std::int64_t(ids.data[std::size_t(i)]);
            float *dst = dTable + row * D;
            const float *src = dOut + i * D;
            for (std::int64_t k = 0; k < D; ++k)
                dst[k] += src[k];
            state.rows.push_back(row);
        }
        std::sort(state.rows.begin(), state.rows.end());
        state.rows.erase(std::unique(state.rows.begin(), state.rows.end()), state.rows.end());
        // Ids are not differentiable: an upstream layer that asks gets zeros.
        if (dInputs[0]) {
            dInputs[0]->resize(ids.shape);
            dInputs[0]->zero();
        }
    }

private:
    Error outOfRange(const PassContext &ctx, float value, std::int64_t index, std::int64_t perRow) const
    {
        // The row in the global batch, as the user sees it, not in this replica's slice.
        const std::int64_t row = ctx.globalRowOffset + (perRow > 0 ? index / perRow : index) * ctx.globalRowStride;
        return embeddingIdError(name(), value, row, m_opt.inputDim);
    }

    EmbeddingOptions m_opt;
};

} // namespace

Error embeddingIdError(const std::string &layer, float id, std::int64_t row, std::int64_t inputDim)
{
    std::ostringstream text;
    text << id;
    Error e = Error::invalid(layer, "Embedding got id " + text.str() + " in row " + std::to_string(row) + " of the batch, outside [0, input_dim = " +
                                        std::to_string(inputDim) + "): raise input_dim, or map ids into range first (lookup, hashing)");
    e.layer = layer;
    e.key = "input_dim";
    return e;
}

std::unique_ptr<Layer> makeEmbedding(std::string name, EmbeddingOptions options)
{
    return std::make_unique<Embedding>(std::move(name), std::move(options));
}

} // namespace sluice::train
