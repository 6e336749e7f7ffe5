#pragma once
// Helpers shared by the layer implementations (not part of the layer API).

#include "io/error.h"
#include "train/model/layer.h"

#include <cstdint>
#include <functional>
#include <string>

namespace sluice::train::detail {

// Calls fn(begin, end) over [0, rows): inline when rows * costPerRow is small, else in chunks
// run as oneTBB tasks in the calling arena. Only for work whose result does not depend on how
// the rows are split (each row written by exactly one call).
void parallelRows(std::int64_t rows, std::int64_t costPerRow, const std::function<void(std::int64_t, std::int64_t)> &fn);

// Error::invalid naming the layer: what = its name, reason = "<Class> <reason>".
Error layerError(const Layer &layer, const std::string &reason);

// Checks that a build() got exactly `count` inputs.
Status expectInputs(const Layer &layer, const std::vector<Shape> &inputs, std::size_t count);

// Scratch tensor `index` of a LayerState, created on first use and resized to `shape`.
FloatTensor &scratch(LayerState &state, std::size_t index, const Shape &shape);

} // namespace sluice::train::detail
