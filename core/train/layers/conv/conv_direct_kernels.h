#pragma once
// The register-blocked inner loops of the direct convolutions (conv_direct.h), written with
// AVX2 + FMA intrinsics. Their translation unit is compiled for AVX2 alone, so it includes
// nothing but <cstdint> and the intrinsics: no inline function of a shared header may be
// emitted there, or the linker could hand AVX2 code to a caller on a CPU without it. Callers
// check directKernelsAvailable() first.
//
// Layout: channels-last. A "position" is one output column of one output row; the input
// window of position p starts at `in + p * posStride`, its rows `rowStride` apart. Kernels
// are Keras's (kh, kw, C, F). F (the output channels) must be a multiple of 8.

#include <cstdint>

namespace sluice::train::detail::avx2 {

// out[p, f] = sum over (ky, kx, c) of in[p * posStride + ky * rowStride + kx * C + c] *
// kernel[((ky * kw + kx) * C + c) * F + f], for p in [0, n): overwrites n rows of F floats.
void convolveRow(const float *in, std::int64_t rowStride, std::int64_t posStride, std::int64_t C, std::int64_t kh, std::int64_t kw,
                 const float *kernel, std::int64_t F, std::int64_t n, float *out);

// dk[c, f] += sum over rows r < nRows and positions p < n of
// in[r * inRowStride + p * posStride + c] * dz[r * dzRowStride + p * F + f]: one tap's share of
// the kernel gradient (dk points at that tap's C x F block).
void accumulateTapGradient(const float *in, std::int64_t inRowStride, std::int64_t posStride, std::int64_t C, const float *dz,
                           std::int64_t dzRowStride, std::int64_t F, std::int64_t nRows, std::int64_t n, float *dk);

} // namespace sluice::train::detail::avx2
