// Bias and activation after a matrix product, and their gradients (Dense, the convolutions).
#include "train/layers/bias_activation.h"

#include "train/layers/layer_util.h"

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sluice::train::detail {
namespace {

// y[r, :] = f(y[r, :] + bias) over rows [0, rows) of width U, for f = ReLU (`relu`) or the
// identity: one pass, four columns at a time. Bit for bit the scalar y += b, then max(y, 0).
void addBiasMaybeRelu(float *y, const float *bias, std::int64_t rows, std::int64_t U, bool relu)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        float *row = y + r * U;
        std::int64_t u = 0;
#if defined(__SSE2__)
        const __m128 zero = _mm_setzero_ps();
        for (; u + 4 <= U; u += 4) {
            __m128 v = _mm_add_ps(_mm_loadu_ps(row + u), _mm_loadu_ps(bias + u));
            _mm_storeu_ps(row + u, relu ? _mm_max_ps(zero, v) : v);
        }
#endif
        for (; u < U; ++u) {
            const float v = row[u] + bias[u];
            row[u] = relu ? std::max(v, 0.0f) : v;
        }
    }
}

// sums[u] += sum over rows of dZ[r, u], each column summed in row order (so the same at any
// thread count), columns [u0, u1) only; several columns at a time in vector registers.
void addColumnSums(const float *dZ, std::int64_t rows, std::int64_t U, std::int64_t u0, std::int64_t u1, float *sums)
{
    std::int64_t u = u0;
#if defined(__SSE2__)
    for (; u + 16 <= u1; u += 16) {
        __m128 a0 = _mm_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (std::int64_t r = 0; r < rows; ++r) {
            const float *p = dZ + r * U + u;
            a0 = _mm_add_ps(a0, _mm_loadu_ps(p));
            a1 = _mm_add_ps(a1, _mm_loadu_ps(p + 4));
            a2 = _mm_add_ps(a2, _mm_loadu_ps(p + 8));
            a3 = _mm_add_ps(a3, _mm_loadu_ps(p + 12));
        }
        _mm_storeu_ps(sums + u, _mm_add_ps(_mm_loadu_ps(sums + u), a0));
        _mm_storeu_ps(sums + u + 4, _mm_add_ps(_mm_loadu_ps(sums + u + 4), a1));
        _mm_storeu_ps(sums + u + 8, _mm_add_ps(_mm_loadu_ps(sums + u + 8), a2));
        _mm_storeu_ps(sums + u + 12, _mm_add_ps(_mm_loadu_ps(sums + u + 12), a3));
    }
    for (; u + 4 <= u1; u += 4) {
        __m128 a = _mm_setzero_ps();
        for (std::int64_t r = 0; r < rows; ++r)
            a = _mm_add_ps(a, _mm_loadu_ps(dZ + r * U + u));
        _mm_storeu_ps(sums + u, _mm_add_ps(_mm_loadu_ps(sums + u), a));
    }
#endif
    for (; u < u1; ++u) {
        float a = 0;
        for (std::int64_t r = 0; r < rows; ++r)
            a += dZ[r * U + u];
        sums[u] += a;
    }
}

} // namespace

void biasActivationForward(ActivationKind f, const float *bias, float *y, float *z, std::int64_t R, std::int64_t U)
{
    if (!bias && f == ActivationKind::Linear)
        return;
    const bool relu = f == ActivationKind::Relu;
    if (bias && (relu || f == ActivationKind::Linear)) {
        // The common case in one pass over the output (ReLU needs no pre-activation copy).
        parallelRows(R, U, [&](std::int64_t r0, std::int64_t r1) { addBiasMaybeRelu(y + r0 * U, bias, r1 - r0, U, relu); });
        return;
    }
    parallelRows(R, 4 * U, [&](std::int64_t r0, std::int64_t r1) {
        if (bias)
            addBiasMaybeRelu(y + r0 * U, bias, r1 - r0, U, false);
        if (z)
            std::copy(y + r0 * U, y + r1 * U, z + r0 * U);
        activationForward(f, y + r0 * U, y + r0 * U, (r1 - r0) * U, U);
    });
}

void activationGradientRows(ActivationKind f, const float *z, const float *y, const float *dy, float *dz, std::int64_t R, std::int64_t U)
{
    parallelRows(R, 4 * U, [&](std::int64_t r0, std::int64_t r1) {
        const std::int64_t o = r0 * U;
        activationBackward(f, z ? z + o : nullptr, y + o, dy + o, dz + o, (r1 - r0) * U, U);
    });
}

void addBiasGradient(const float *dz, std::int64_t R, std::int64_t U, float *dBias)
{
    if (R <= 0)
        return;
    // Blocks of columns run in parallel, each column summed over the rows in order by one
    // task: no result depends on how the blocks are grouped.
    constexpr std::int64_t kColumns = 64;
    const std::int64_t blocks = (U + kColumns - 1) / kColumns;
    parallelRows(blocks, R * kColumns, [&](std::int64_t b0, std::int64_t b1) {
        addColumnSums(dz, R, U, b0 * kColumns, std::min(U, b1 * kColumns), dBias);
    });
}

} // namespace sluice::train::detail
