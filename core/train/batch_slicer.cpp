#include "train/batch_slicer.h"

#include "io/dtype.h"
#include "pipeline/element.h"

#include <cstring>

namespace sluice::train {

namespace {

// Rows [begin, end) of a batched feature as fp32, shaped [end - begin, ...].
void toFloat(const pipeline::Tensor &t, std::int64_t begin, std::int64_t end, FloatTensor &out)
{
    Shape shape(t.shape().begin(), t.shape().end());
    const std::int64_t rowElems = shape.empty() ? 1 : shapeCount(Shape(shape.begin() + 1, shape.end()));
    if (shape.empty())
        shape = {1};
    shape[0] = end - begin;
    out.resize(shape);
    const auto n = std::size_t((end - begin) * rowElems);
    const std::size_t first = std::size_t(begin * rowElems);
    const DType dtype = t.dtype();
    switch (dtype) {
    case DType::Float32:
        std::memcpy(out.ptr(), t.as<float>() + first, n * sizeof(float));
        return;
    case DType::Float64:
        for (std::size_t i = 0; i < n; ++i)
            out.data[i] = float(t.as<double>()[first + i]);
        return;
    case DType::Int64:
        for (std::size_t i = 0; i < n; ++i)
            out.data[i] = float(t.as<std::int64_t>()[first + i]);
        return;
    case DType::Int32:
        for (std::size_t i = 0; i < n; ++i)
            out.data[i] = float(t.as<std::int32_t>()[first + i]);
        return;
    default: {
        const std::size_t item = itemSize(dtype);
        const TypeDescr descr{dtype};
        for (std::size_t i = 0; i < n; ++i)
            out.data[i] = float(loadAsDouble(t.data() + (first + i) * item, descr));
    }
    }
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

std::vector<std::int64_t> splitRows(std::int64_t rows, int parts)
{
    std::vector<std::int64_t> bounds(std::size_t(parts) + 1, 0);
    const std::int64_t base = rows / parts, extra = rows % parts;
    for (int p = 0; p < parts; ++p)
        bounds[std::size_t(p) + 1] = bounds[std::size_t(p)] + base + (p < extra ? 1 : 0);
    return bounds;
}

} // namespace sluice::train
