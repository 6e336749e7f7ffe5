#include "train/layers/layer_util.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>

namespace sluice::train::detail {

namespace {
// About 64 K multiply-adds or transcendental calls per task: less is not worth a task.
constexpr std::int64_t kChunkWork = 1 << 16;
} // namespace

void parallelRows(std::int64_t rows, std::int64_t costPerRow, const std::function<void(std::int64_t, std::int64_t)> &fn)
{
    if (rows <= 0)
        return;
    const std::int64_t cost = std::max<std::int64_t>(costPerRow, 1);
    const std::int64_t chunk = std::max<std::int64_t>(1, kChunkWork / cost);
    if (rows <= chunk) {
        fn(0, rows);
        return;
    }
    const std::int64_t chunks = (rows + chunk - 1) / chunk;
    oneapi::tbb::parallel_for(std::int64_t(0), chunks, [&](std::int64_t c) { fn(c * chunk, std::min(rows, (c + 1) * chunk)); });
}

Error layerError(const Layer &layer, const std::string &reason) { return Error::invalid(layer.name(), layer.className() + " " + reason); }

Status expectInputs(const Layer &layer, const std::vector<Shape> &inputs, std::size_t count)
{
    if (inputs.size() == count)
        return Status::success();
    return layerError(layer, "expects " + std::to_string(count) + " input" + (count == 1 ? "" : "s") + ", got " + std::to_string(inputs.size()));
}

FloatTensor &scratch(LayerState &state, std::size_t index, const Shape &shape)
{
    if (state.saved.size() <= index)
        state.saved.resize(index + 1);
    state.saved[index].resize(shape);
    return state.saved[index];
}

} // namespace sluice::train::detail
