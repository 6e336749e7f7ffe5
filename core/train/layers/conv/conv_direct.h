#pragma once
// Direct convolutions for the CPU backend: the window is read in place from a zero-padded copy
// of the input instead of being copied out by im2col, and a register-blocked AVX2 kernel does
// the multiply-adds. With the few filters of image models (16, 32, 64) the im2col products are
// thin, and OpenBLAS spent as long packing them as multiplying; this path does neither.
//
// It serves undilated windows with a filter count that is a multiple of 8, on CPUs with AVX2
// and FMA; the input gradient also needs stride 1 and a channel count that is a multiple of 8
// (it is the forward convolution of the padded output gradient with the flipped kernel). Other
// layers keep im2col + gemm (conv.cpp). Work is split over oneTBB tasks whose boundaries
// depend on the shapes only, so results do not depend on the number of threads.

#include "train/model/float_tensor.h"
#include "train/layers/conv/conv_geometry.h"

#include <cstdint>

namespace sluice::train::detail {

// Whether the forward pass and the kernel gradient of this window can run here.
bool directConvApplies(const Window2D &win, std::int64_t filters);
// Whether the input gradient can too.
bool directInputGradientApplies(const Window2D &win, std::int64_t filters);

// Tests compare both paths on the same machine: false makes directConvApplies() false.
void setDirectConvEnabled(bool enabled);

// The shape of padSamples' output for a batch of B: [B, Hp, Wp, C], the rows and columns the
// windows read, padding included.
Shape paddedInputShape(const Window2D &win, std::int64_t B);

// x [B, H, W, C] into xpad (paddedInputShape), with the "same" padding's zeros around it.
void padSamples(const Window2D &win, const float *x, std::int64_t B, float *xpad);

// y [B, Hout, Wout, F] = the convolution of the padded input with kernel (kh, kw, C, F).
void directConvForward(const Window2D &win, const float *xpad, std::int64_t B, const float *kernel, std::int64_t F, float *y);

// dKernel (kh, kw, C, F) += the kernel gradient for output gradient dZ [B, Hout, Wout, F].
// `partials` is scratch for per-group sums, added in a fixed order.
void directConvKernelGradient(const Window2D &win, const float *xpad, std::int64_t B, const float *dZ, std::int64_t F, float *dKernel,
                              FloatTensor &partials);

// dx [B, H, W, C] = the input gradient for dZ (overwritten, not added). Scratch between calls:
// dZ with kh - 1 (kw - 1) zeros on each side, the kernel reversed as (kh, kw, F, C), and the
// gradient of the padded input.
void directConvInputGradient(const Window2D &win, const float *dZ, std::int64_t B, const float *kernel, std::int64_t F, float *dx,
                             FloatTensor &paddedGradient, FloatTensor &flippedKernel, FloatTensor &paddedInputGradient);

} // namespace sluice::train::detail
