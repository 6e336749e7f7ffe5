#pragma once
// Keras activations, elementwise (softmax over the last axis), forward and backward, shared
// by Activation, Dense and the recurrent layers.

#include "io/error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::train {

enum class ActivationKind { Linear, Relu, Gelu, Tanh, Sigmoid, Softmax };

// "linear" (also null / ""), "relu", "gelu" (exact, erf-based: Keras's default), "tanh",
// "sigmoid", "softmax". An unknown name is an error listing the known ones.
Result<ActivationKind> parseActivation(const std::string &name);
const std::vector<std::string> &knownActivations();

// Softmax of one row of `count` values into `out` (in place allowed); returns log(sum(exp(x))),
// the log-sum-exp the cross-entropy losses need.
double softmaxRow(const float *x, std::int64_t count, float *out);

// y = f(x) over `count` values laid out as rows of `rowSize` (softmax works per row). In place allowed.
void activationForward(ActivationKind kind, const float *x, float *y, std::int64_t count, std::int64_t rowSize);
// dx = dy * f'(x), from x and y = f(x) (whichever is cheaper is used). dx may alias dy; x may
// be null when !activationNeedsInput(kind).
void activationBackward(ActivationKind kind, const float *x, const float *y, const float *dy, float *dx, std::int64_t count, std::int64_t rowSize);
// Whether activationBackward reads x (gelu) rather than only y: layers that apply the activation
// in place keep the pre-activation values only then.
bool activationNeedsInput(ActivationKind kind);

} // namespace sluice::train
