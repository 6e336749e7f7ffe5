#pragma once
// Bias and activation kernels of the CUDA backend, with the CPU backend's semantics
// (train/model/activations.cpp, the Dense layer's fused bias): on row-major [rows, cols] float arrays
// in device memory, launched on `stream`. Plain C++ header; defined in activation_kernels.cu
// (elementwise) and row_kernels.cu (softmax, column sums).

#include "train/model/activations.h"
#include "train/cuda/runtime.h"

#include <cstdint>

namespace sluice::train::cuda {

// y[r, c] = f(x[r, c] + bias[c]) (bias may be null: no bias). Where `preActivation` is not null
// it receives x + bias, the input gelu's backward needs. Softmax works per row. y may alias x.
void biasActivationForward(Stream stream, ActivationKind kind, const float *x, const float *bias, float *y, float *preActivation,
                           std::int64_t rows, std::int64_t cols);

// dx = dy * f'(z) from z (the pre-activation, read for gelu only, may be null otherwise) and
// y = f(z); softmax: dx = y * (dy - <dy, y>) per row. dx may alias dy.
void activationBackward(Stream stream, ActivationKind kind, const float *preActivation, const float *y, const float *dy, float *dx,
                        std::int64_t rows, std::int64_t cols);

// Softmax of each row of x into y (in place allowed), as softmaxRow: exp(x - max) / sum, the sum in double.
void softmaxRows(Stream stream, const float *x, float *y, std::int64_t rows, std::int64_t cols);
// Its backward from y = softmax(x): dx = y * (dy - <dy, y>) per row, the dot product in double.
void softmaxRowsBackward(Stream stream, const float *y, const float *dy, float *dx, std::int64_t rows, std::int64_t cols);

// The bias gradient: sums[c] = (accumulate ? sums[c] : 0) + sum over r of dz[r, c]. Each column's
// sum is taken in double in a fixed order, so repeated runs give the same bits.
void columnSums(Stream stream, const float *dz, float *sums, std::int64_t rows, std::int64_t cols, bool accumulate);

} // namespace sluice::train::cuda
