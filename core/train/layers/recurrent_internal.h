#pragma once
// Private to recurrent.cpp, gru.cpp and lstm.cpp: the vectorised gate arithmetic both recurrent
// layers share. Not a public header (the layers are made by makeGru / makeLstm,
// train/layers/recurrent.h).

#include "train/layers/recurrent.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace sluice::train::detail {

// The LSTM bias initializer used with unit_forget_bias and bias_initializer "zeros": zeros
// except the forget-gate slice [units, 2 units) of the (4 units,) bias, which is ones.
inline constexpr const char *kLstmUnitForgetBias = "lstm_bias_unit_forget";

// build() of both: one input of per-sample shape (timesteps, features), both known and > 0.
// Returns {timesteps, features}.
Result<std::pair<std::int64_t, std::int64_t>> sequenceInputShape(const Layer &layer, const std::vector<Shape> &inputShapes);

// x = f(x) over n values, vectorised (approximations within a few float ulps of std::tanh and
// 1 / (1 + std::exp(-x)); NaN stays NaN).
void activate(GateActivation kind, float *x, std::int64_t n);
// d *= f'(x), given y = f(x) (both activations have derivatives in terms of their output).
void scaleByDerivative(GateActivation kind, const float *y, float *d, std::int64_t n);

// The part of forward and backward both layers share, for inputs x [B, T, F], gate count
// G = k * U, states [T + 1, B, U] (h_{-1} = 0 first, time-major so that one step's rows are
// contiguous for the recurrent gemm).
// output = h_{T-1} [B, U], or every h_t as [B, T, U].
void writeOutput(const float *states, std::int64_t B, std::int64_t T, std::int64_t U, bool returnSequences, FloatTensor &output);
// From the pre-activation gradients of the input projection dXW [B, T, G] (batch-major, like x)
// and of the recurrent projection dRec [T, B, G]: dKernel += x^T dXW, dRecurrent += sum over
// t >= 1 of h_{t-1}^T dRec_t, and, when dX is not null, dX = dXW kernel^T [B, T, F].
void weightAndInputGradients(const float *x, const float *dXW, const float *states, const float *dRec, std::int64_t B, std::int64_t T,
                             std::int64_t F, std::int64_t U, std::int64_t G, const float *kernel, float *dKernel, float *dRecurrent,
                             FloatTensor *dX);

// m[r, :] += v for every row of a rows x cols row-major matrix.
void addToRows(float *m, std::int64_t rows, std::int64_t cols, const float *v);
// out[c] += sum over rows of m[r, c].
void addColumnSums(const float *m, std::int64_t rows, std::int64_t cols, float *out);

} // namespace sluice::train::detail
