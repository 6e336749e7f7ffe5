// AVX2 + FMA inner loops of the direct convolutions (see the header for why this file includes
// nothing else). Both keep a block of outputs in 12 of the 16 ymm registers, enough independent
// FMAs to cover their latency, with 2-3 registers left for the operands:
// - convolveRow: 6 positions x 16 output channels, then 8 channels for an F that is 8 mod 16;
// - accumulateTapGradient: 6 input channels x 16 output channels (2 alternating sets of
//   accumulators when fewer channels are left, as for RGB inputs).
#include "train/layers/conv/conv_direct_kernels.h"

#include <immintrin.h>

namespace sluice::train::detail::avx2 {
namespace {

// Positions [0, R) of one output row, output channels [0, 8 NV) of `kernel` and `out` (both
// already offset to the block).
template <int NV, int R>
void convolveBlock(const float *in, std::int64_t rowStride, std::int64_t posStride, std::int64_t C, std::int64_t kh, std::int64_t kw,
                   const float *kernel, std::int64_t F, float *out)
{
    __m256 acc[R][NV];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
            acc[r][v] = _mm256_setzero_ps();
    for (std::int64_t ky = 0; ky < kh; ++ky) {
        for (std::int64_t kx = 0; kx < kw; ++kx) {
            const float *x = in + ky * rowStride + kx * C;
            const float *w = kernel + (ky * kw + kx) * C * F;
            for (std::int64_t c = 0; c < C; ++c, w += F) {
                __m256 wv[NV];
#pragma GCC unroll 4
                for (int v = 0; v < NV; ++v)
                    wv[v] = _mm256_loadu_ps(w + 8 * v);
#pragma GCC unroll 16
                for (int r = 0; r < R; ++r) {
                    const __m256 a = _mm256_broadcast_ss(x + r * posStride + c);
#pragma GCC unroll 4
                    for (int v = 0; v < NV; ++v)
                        acc[r][v] = _mm256_fmadd_ps(a, wv[v], acc[r][v]);
                }
            }
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
            _mm256_storeu_ps(out + r * F + 8 * v, acc[r][v]);
}

// The last `rem` (< R) positions of a row.
template <int NV, int R>
void convolveTail(std::int64_t rem, const float *in, std::int64_t rowStride, std::int64_t posStride, std::int64_t C, std::int64_t kh,
                  std::int64_t kw, const float *kernel, std::int64_t F, float *out)
{
    if constexpr (R > 0) {
        if (rem == R)
            convolveBlock<NV, R>(in, rowStride, posStride, C, kh, kw, kernel, F, out);
        else
            convolveTail<NV, R - 1>(rem, in, rowStride, posStride, C, kh, kw, kernel, F, out);
    }
}

template <int NV, int R>
void convolveColumns(const float *in, std::int64_t rowStride, std::int64_t posStride, std::int64_t C, std::int64_t kh, std::int64_t kw,
                     const float *kernel, std::int64_t F, std::int64_t n, float *out)
{
    std::int64_t p = 0;
    for (; p + R <= n; p += R)
        convolveBlock<NV, R>(in + p * posStride, rowStride, posStride, C, kh, kw, kernel, F, out + p * F);
    if (p < n)
        convolveTail<NV, R - 1>(n - p, in + p * posStride, rowStride, posStride, C, kh, kw, kernel, F, out + p * F);
}

// Input channels [0, RC) x output channels [0, 8 NV) of one tap's gradient block.
template <int NV, int RC>
void tapGradientBlock(const float *in, std::int64_t inRowStride, std::int64_t posStride, const float *dz, std::int64_t dzRowStride,
                      std::int64_t F, std::int64_t nRows, std::int64_t n, float *dk)
{
    // Two sets of accumulators over alternate positions when one set is too few to hide the
    // FMA latency.
    constexpr int U = RC * NV <= 6 ? 2 : 1;
    __m256 acc[U][RC][NV];
#pragma GCC unroll 2
    for (int u = 0; u < U; ++u)
#pragma GCC unroll 8
        for (int i = 0; i < RC; ++i)
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v)
                acc[u][i][v] = _mm256_setzero_ps();
    for (std::int64_t r = 0; r < nRows; ++r) {
        const float *x = in + r * inRowStride;
        const float *d = dz + r * dzRowStride;
        std::int64_t p = 0;
        for (; p + U <= n; p += U) {
#pragma GCC unroll 2
            for (int u = 0; u < U; ++u) {
                __m256 dv[NV];
#pragma GCC unroll 4
                for (int v = 0; v < NV; ++v)
                    dv[v] = _mm256_loadu_ps(d + (p + u) * F + 8 * v);
#pragma GCC unroll 8
                for (int i = 0; i < RC; ++i) {
                    const __m256 a = _mm256_broadcast_ss(x + (p + u) * posStride + i);
#pragma GCC unroll 4
                    for (int v = 0; v < NV; ++v)
                        acc[u][i][v] = _mm256_fmadd_ps(a, dv[v], acc[u][i][v]);
                }
            }
        }
        for (; p < n; ++p) {
#pragma GCC unroll 8
            for (int i = 0; i < RC; ++i) {
                const __m256 a = _mm256_broadcast_ss(x + p * posStride + i);
#pragma GCC unroll 4
                for (int v = 0; v < NV; ++v)
                    acc[0][i][v] = _mm256_fmadd_ps(a, _mm256_loadu_ps(d + p * F + 8 * v), acc[0][i][v]);
            }
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < RC; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
            __m256 sum = acc[0][i][v];
            if constexpr (U == 2)
                sum = _mm256_add_ps(sum, acc[1][i][v]);
            _mm256_storeu_ps(dk + i * F + 8 * v, _mm256_add_ps(_mm256_loadu_ps(dk + i * F + 8 * v), sum));
        }
}

template <int NV, int RC>
void tapGradientTail(std::int64_t rem, const float *in, std::int64_t inRowStride, std::int64_t posStride, const float *dz,
                     std::int64_t dzRowStride, std::int64_t F, std::int64_t nRows, std::int64_t n, float *dk)
{
    if constexpr (RC > 0) {
        if (rem == RC)
            tapGradientBlock<NV, RC>(in, inRowStride, posStride, dz, dzRowStride, F, nRows, n, dk);
        else
            tapGradientTail<NV, RC - 1>(rem, in, inRowStride, posStride, dz, dzRowStride, F, nRows, n, dk);
    }
}

template <int NV, int RC>
void tapGradientChannels(const float *in, std::int64_t inRowStride, std::int64_t posStride, std::int64_t C, const float *dz,
                         std::int64_t dzRowStride, std::int64_t F, std::int64_t nRows, std::int64_t n, float *dk)
{
    std::int64_t c = 0;
    for (; c + RC <= C; c += RC)
        tapGradientBlock<NV, RC>(in + c, inRowStride, posStride, dz, dzRowStride, F, nRows, n, dk + c * F);
    if (c < C)
        tapGradientTail<NV, RC - 1>(C - c, in + c, inRowStride, posStride, dz, dzRowStride, F, nRows, n, dk + c * F);
}

} // namespace

void convolveRow(const float *in, std::int64_t rowStride, std::int64_t posStride, std::int64_t C, std::int64_t kh, std::int64_t kw,
                 const float *kernel, std::int64_t F, std::int64_t n, float *out)
{
    std::int64_t f = 0;
    for (; f + 16 <= F; f += 16)
        convolveColumns<2, 6>(in, rowStride, posStride, C, kh, kw, kernel + f, F, n, out + f);
    if (f < F)
        convolveColumns<1, 8>(in, rowStride, posStride, C, kh, kw, kernel + f, F, n, out + f);
}

void accumulateTapGradient(const float *in, std::int64_t inRowStride, std::int64_t posStride, std::int64_t C, const float *dz,
                           std::int64_t dzRowStride, std::int64_t F, std::int64_t nRows, std::int64_t n, float *dk)
{
    std::int64_t f = 0;
    for (; f + 16 <= F; f += 16)
        tapGradientChannels<2, 6>(in, inRowStride, posStride, C, dz + f, dzRowStride, F, nRows, n, dk + f);
    if (f < F)
        tapGradientChannels<1, 8>(in, inRowStride, posStride, C, dz + f, dzRowStride, F, nRows, n, dk + f);
}

} // namespace sluice::train::detail::avx2
