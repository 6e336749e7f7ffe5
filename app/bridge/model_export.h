#pragma once
// Exporting a trained model as safetensors + a PyTorch model.py (docs/models.md): what `sluice
// export` and the workbench's Run ▸ Export Model both do. The model is built against the
// project's pipeline (its element spec: nothing is read), the weights read from a weights.npz,
// then the two files written atomically beside each other. A model.py there that export did not
// write is refused, never overwritten.
//
// Threading: a free function with no shared state; ModelExportJob runs it off the GUI thread.

#include "io/error.h"
#include "project/project.h"

#include <cstddef>
#include <string>

namespace sluice::bridge {

struct ModelExport
{
    std::string weightsFile; // the .safetensors written
    std::string modelPy;     // model.py beside it
    std::size_t arrays = 0;  // weights written
    std::size_t floats = 0;
};

// Errors: bad input (the project has no model or does not build, weights of another model, a
// layer PyTorch's modules cannot express, a user's model.py in the way) has the kind the reading
// gave it; a failed write is Error::Kind::Failed (the CLI exits 1).
Result<ModelExport> exportSafetensors(const Project &project, const std::string &weightsNpz, const std::string &outFile);

// The same model as a Keras 3 .keras archive (train/interchange/keras_export.h), which keras.saving.load_model
// reads; ModelExport::modelPy stays empty.
Result<ModelExport> exportKeras(const Project &project, const std::string &weightsNpz, const std::string &outFile);

// The same model as an ONNX inference graph, opset 17 (train/interchange/onnx_export.h), which onnxruntime runs.
Result<ModelExport> exportOnnx(const Project &project, const std::string &weightsNpz, const std::string &outFile);

} // namespace sluice::bridge
