#pragma once
// Importing a Keras 3 model into a project (train/interchange/keras_import.h): what `sluice import` and the
// workbench's File ▸ Import Keras Model both do. The model is read and built against the Keras
// inputs' shapes, so that weights disagreeing with the config are refused before anything is
// written; its weights go to "<model file's name>.weights.npz" beside the project (an existing
// one only with `replace`). The project itself is not changed: the caller sets its model and
// training.initial_weights (the CLI saves the file, the workbench makes it one undoable edit).
//
// Threading: a free function with no shared state; ModelImportJob runs it off the GUI thread.

#include "io/error.h"
#include "project/project.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace sluice::bridge {

struct ModelImport
{
    nlohmann::json model;            // the project's new "model" section
    std::string initialWeights;      // the .npz written, relative to the project's folder (empty: no weights)
    std::vector<std::string> notes;  // losses assumed, inputs the pipeline lacks, ...
    std::size_t layers = 0, arrays = 0, floats = 0;
};

// Errors are bad input (the file, its config, its weights) with the kinds the reading gave
// them, except a failed write of the weights: Error::Kind::Failed.
Result<ModelImport> importKerasModel(const Project &project, const std::string &modelFile, const std::string &weightsH5, bool replace);

} // namespace sluice::bridge
