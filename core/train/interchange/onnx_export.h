#pragma once
// A built model and its weights as an ONNX inference graph (opset 17), written with the protobuf
// library and ONNX's own schema (Debian's libonnx-dev), which onnxruntime runs with the outputs
// `sluice predict` gives. Tensors stay channels-last as in Sluice: convolutions and poolings
// transpose to ONNX's channels-first and back; TensorFlow's "same" padding becomes explicit
// (possibly uneven) pads. GRU and LSTM are ONNX's own ops (time-first layout between two
// transposes, the one onnxruntime runs; a GRU with
// linear_before_reset, Keras's reset_after; an LSTM's gates reordered from Keras's i, f, c, o to
// ONNX's i, o, f, c). BatchNormalization is folded into a scale and a shift (inference mode).
// A build without ONNX's libraries (SLUICE_WITH_ONNX=OFF) says so.
//
// Threading: a pure function of its arguments.

#include "io/error.h"

#include <span>
#include <string>

namespace sluice::train {

class Model;

bool onnxExportAvailable();

// The serialized ModelProto; errors name the layer ONNX's ops cannot express here.
Result<std::string> onnxModelBytes(const Model &model, std::span<const float> weights, const std::string &name);

} // namespace sluice::train
