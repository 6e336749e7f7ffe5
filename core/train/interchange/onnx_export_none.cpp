// onnx_export.h in a build without ONNX's libraries (SLUICE_WITH_ONNX=OFF): export says so.
#include "train/interchange/onnx_export.h"

namespace sluice::train {

bool onnxExportAvailable() { return false; }

Result<std::string> onnxModelBytes(const Model &, std::span<const float>, const std::string &)
{
    return Error::unsupported("--format onnx", "this Sluice was built without ONNX's libraries (SLUICE_WITH_ONNX; Debian: libonnx-dev)");
}

} // namespace sluice::train
