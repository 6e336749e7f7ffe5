#pragma once
// The copies that turn a convolution into matrix products on the device, as the CPU backend
// lays them out (train/layers/conv/conv_geometry.h): row b * P + oy * outW + ox of the im2col matrix
// (P = outH * outW) holds the window of output (oy, ox) of sample b, in the order (ky, kx, c) of
// a Keras kernel (kh, kw, C, F) read as a (kh kw C, F) matrix. Rows are handled in blocks
// [r0, r1) so that the matrix's memory stays bounded. Plain C++ header; defined in conv_kernels.cu.

#include "train/cuda/runtime.h"
#include "train/cuda/window.h"

#include <cstdint>

namespace sluice::train::cuda {

// Rows [r0, r1) of the im2col matrix of x [B, H, W, C] into `cols` ((r1 - r0) x colWidth());
// taps in the padding are zeros.
void im2col(Stream stream, const Window &win, const float *x, std::int64_t r0, std::int64_t r1, float *cols);

// The adjoint of im2col: ADDS rows [r0, r1) of an im2col-shaped gradient (held in `cols`) into
// dx [B, H, W, C] where im2col read them from. Each element of dx sums the taps that read it in
// a fixed order (no atomics): the same bits on every run.
void col2imAdd(Stream stream, const Window &win, const float *cols, std::int64_t r0, std::int64_t r1, float *dx);

} // namespace sluice::train::cuda
