#include "train/loop/batch_slicer.h"

#include "io/dtype.h"
#include "pipeline/engine/element.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cstring>

namespace sluice::train {

namespace {

// Values per row of a batched feature (1 for a scalar per row).
std::int64_t rowElements(const pipeline::Tensor &t)
{
    std::int64_t n = 1;
    const auto &shape = t.shape();
    for (std::size_t d = 1; d < shape.size(); ++d)
        n *= std::int64_t(shape[d]);
    return n;
}

// Elements [first, first + n) of a tensor as fp32 into out.
void convertRange(const pipeline::Tensor &t, std::size_t first, std::size_t n, float *out)
{
    const DType dtype = t.dtype();
    switch (dtype) {
    case DType::Float32:
        std::memcpy(out, t.as<float>() + first, n * sizeof(float));
        return;
    case DType::Float64:
        for (std::size_t i = 0; i < n; ++i)
            out[i] = float(t.as<double>()[first + i]);
        return;
    case DType::Int64:
        for (std::size_t i = 0; i < n; ++i)
            out[i] = float(t.as<std::int64_t>()[first + i]);
        return;
    case DType::Int32:
        for (std::size_t i = 0; i < n; ++i)
            out[i] = float(t.as<std::int32_t>()[first + i]);
        return;
    default: {
        const std::size_t item = itemSize(dtype);
        const TypeDescr descr{dtype};
        for (std::size_t i = 0; i < n; ++i)
            out[i] = float(loadAsDouble(t.data() + (first + i) * item, descr));
    }
    }
}

// Rows [begin, end) of a batched feature as fp32 into out, in pieces of about 1M values on the
// arena's threads when there are several.
void toFloatInto(const pipeline::Tensor &t, std::int64_t begin, std::int64_t end, float *out)
{
    const auto rowElems = std::size_t(rowElements(t));
    const std::size_t n = std::size_t(end - begin) * rowElems, first = std::size_t(begin) * rowElems;
    constexpr std::size_t kPiece = std::size_t(1) << 20;
    if (n <= kPiece) {
        convertRange(t, first, n, out);
        return;
    }
    oneapi::tbb::parallel_for(std::size_t(0), (n + kPiece - 1) / kPiece, [&](std::size_t p) {
        const std::size_t at = p * kPiece;
        convertRange(t, first + at, std::min(kPiece, n - at), out + at);
    });
}

// Rows [begin, end) of a batched feature as fp32, shaped [end - begin, ...].
void toFloat(const pipeline::Tensor &t, std::int64_t begin, std::int64_t end, FloatTensor &out)
{
    Shape shape{end - begin};
    for (std::size_t d = 1; d < t.shape().size(); ++d)
        shape.push_back(std::int64_t(t.shape()[d]));
    out.resize(shape);
    convertRange(t, std::size_t(begin * rowElements(t)), out.size(), out.ptr());
}

} // namespace

Result<std::int64_t> batchRows(const Model &model, const pipeline::Element &batch)
{
    std::int64_t rows = -1;
    auto check = [&](std::size_t index, const std::string &name) -> Status {
        const auto &shape = batch.tensors[index].shape();
        const std::int64_t r = shape.empty() ? 1 : shape[0];
        if (rows >= 0 && r != rows)
            return Error::invalid("feature '" + name + "'", "has " + std::to_string(r) + " rows in a batch of " + std::to_string(rows));
        rows = r;
        return Status::success();
    };
    for (const auto &in : model.inputs())
        if (auto s = check(in.featureIndex, in.feature); !s.ok())
            return s.error();
    for (const auto &out : model.outputs())
        if (out.hasTarget())
            if (auto s = check(out.targetIndex, out.target); !s.ok())
                return s.error();
    return rows;
}

void sliceBatch(const Model &model, const pipeline::Element &batch, const SampleWeighting &weighting, std::int64_t begin, std::int64_t end,
                BatchSlice &slice)
{
    slice.rows = end - begin;
    slice.globalRowOffset = begin;
    slice.inputs.resize(model.inputs().size());
    slice.targets.resize(model.outputs().size());
    for (std::size_t i = 0; i < model.inputs().size(); ++i)
        toFloat(batch.tensors[model.inputs()[i].featureIndex], begin, end, slice.inputs[i]);
    for (std::size_t o = 0; o < model.outputs().size(); ++o)
        if (model.outputs()[o].hasTarget())
            toFloat(batch.tensors[model.outputs()[o].targetIndex], begin, end, slice.targets[o]);
    slice.weights.clear();
    if (weighting.sampleWeightFeature) {
        FloatTensor w;
        toFloat(batch.tensors[*weighting.sampleWeightFeature], begin, end, w);
        slice.weights = std::move(w.data);
    }
    if (!weighting.classWeights.empty() && !model.outputs().empty()) {
        if (slice.weights.empty())
            slice.weights.assign(std::size_t(slice.rows), 1.0f);
        applyClassWeights(slice.targets[0], weighting.classWeights, slice.weights);
    }
}

bool gatherSlice(const Model &model, const pipeline::Element &batch, const SampleWeighting &weighting, std::int64_t begin, std::int64_t end,
                 std::span<const std::size_t> blockOffsets, float *dst, const std::function<void(const float *blockEnd)> &blockWritten)
{
    const std::size_t rows = std::size_t(end - begin);
    std::size_t k = 0;
    auto write = [&](const pipeline::Tensor &t) {
        float *block = dst + rows * blockOffsets[k++];
        toFloatInto(t, begin, end, block);
        if (blockWritten)
            blockWritten(block + std::size_t(end - begin) * std::size_t(rowElements(t)));
    };
    for (const auto &in : model.inputs())
        write(batch.tensors[in.featureIndex]);
    const std::size_t firstTarget = k;
    for (const auto &out : model.outputs())
        write(batch.tensors[out.targetIndex]);
    float *weights = dst + rows * blockOffsets[k];
    const bool classWeighted = !weighting.classWeights.empty() && !model.outputs().empty();
    if (weighting.sampleWeightFeature)
        toFloatInto(batch.tensors[*weighting.sampleWeightFeature], begin, end, weights);
    else if (classWeighted)
        std::fill_n(weights, rows, 1.0f);
    if (classWeighted) {
        // applyClassWeights reads the target as a tensor: a copy of the first target's block.
        FloatTensor target;
        Shape shape{std::int64_t(rows)};
        for (auto d : model.outputs()[0].targetShape)
            shape.push_back(d);
        target.resize(shape);
        std::copy_n(dst + rows * blockOffsets[firstTarget], target.size(), target.ptr());
        applyClassWeights(target, weighting.classWeights, std::span<float>(weights, rows));
    }
    return weighting.sampleWeightFeature.has_value() || classWeighted;
}

std::vector<std::int64_t> splitRows(std::int64_t rows, int parts)
{
    std::vector<std::int64_t> bounds(std::size_t(parts) + 1, 0);
    const std::int64_t base = rows / parts, extra = rows % parts;
    for (int p = 0; p < parts; ++p)
        bounds[std::size_t(p) + 1] = bounds[std::size_t(p)] + base + (p < extra ? 1 : 0);
    return bounds;
}

} // namespace sluice::train
