#pragma once
// Tensors to numpy arrays and back, for the extension module and the Python host.
// Threading: call with the GIL held.

#include "io/error.h"
#include "pipeline/engine/tensor.h"

#include <pybind11/pybind11.h>

namespace sluice::python {

// A numpy array over the tensor's bytes, which the array keeps alive (no copy). Bytes nobody
// else holds (a fresh batch buffer) are writable, so that numpy's __dlpack__ (and
// torch.from_dlpack) take them; views into file mappings or shared buffers are read-only.
// Strings become an object array of bytes (a copy, as tf.data's .numpy()).
pybind11::object toNumpy(pipeline::Tensor &&tensor);

// What a Python function returned or yielded for one feature, as a tensor of its own (a copy):
// any array-like of a numeric or bool dtype, or of bytes/str (strings).
Result<pipeline::Tensor> fromNumpy(pybind11::handle value, const std::string &feature);

} // namespace sluice::python
