#pragma once
// What a stage emits, as text for people: the stage's element spec and its first elements, each
// feature's shape and first values. `sluice preview` prints it; the workbench shows it as a table.
//
// Threading: previewStage() builds and runs its own pipeline; call it from any one thread.

#include "io/error.h"
#include "pipeline/engine/tensor.h"
#include "project/project.h"

#include <cstddef>
#include <string>
#include <vector>

namespace sluice::pipeline {

struct PreviewCell
{
    std::string shape;  // "(256, 8)"
    std::string values; // "[0.5, 1.25, …]"
};

struct StagePreview
{
    std::string node;
    std::string emits;                         // "{x: float32 (8,), y: int64 ()}"
    std::vector<std::string> features;         // column names
    std::vector<std::string> types;            // "float32", per feature
    std::vector<std::vector<PreviewCell>> rows; // one per element taken
    bool ended = false;                        // the pipeline ended before `elements`
};

// The first `limit` values of a tensor, "[1, 2.5, …]" (strings quoted, cut at 24 characters).
std::string firstValues(const Tensor &tensor, std::size_t limit = 8);

// Runs the project's pipeline up to `node` and takes `elements` elements. Build errors name the
// node and parameter, as Pipeline::build's do.
Result<StagePreview> previewStage(const Project &project, const std::string &node, std::size_t elements, std::size_t valuesPerCell = 8);

} // namespace sluice::pipeline
