#include "train/layers/conv/conv_direct.h"

#include "train/layers/conv/conv_direct_kernels.h"
#include "train/layers/layer_util.h"

#include <algorithm>
#include <atomic>

namespace sluice::train::detail {

namespace {

std::atomic<bool> g_directEnabled{true};

bool cpuHasAvx2Fma()
{
#if defined(__x86_64__) || defined(__i386__)
    static const bool have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return have;
#else
    return false;
#endif
}

// Rows and columns the windows read: (out - 1) * stride + size, padding included.
std::int64_t paddedExtent(const AxisWindow &a) { return (a.out - 1) * a.stride + a.size; }

// The kernel gradient sums positions in groups of whole samples, at least this many positions a
// group: a group's partial sums fit the cache, and there are enough groups to share out.
constexpr std::int64_t kGradientGroupPositions = 1024;

} // namespace

bool directConvApplies(const Window2D &win, std::int64_t filters)
{
    return g_directEnabled.load(std::memory_order_relaxed) && cpuHasAvx2Fma() && win.h.dilation == 1 && win.w.dilation == 1 &&
           filters > 0 && filters % 8 == 0 && win.outPositions() > 0;
}

bool directInputGradientApplies(const Window2D &win, std::int64_t filters)
{
    return directConvApplies(win, filters) && win.h.stride == 1 && win.w.stride == 1 && win.channels % 8 == 0;
}

void setDirectConvEnabled(bool enabled) { g_directEnabled.store(enabled, std::memory_order_relaxed); }

Shape paddedInputShape(const Window2D &win, std::int64_t B) { return {B, paddedExtent(win.h), paddedExtent(win.w), win.channels}; }

void padSamples(const Window2D &win, const float *x, std::int64_t B, float *xpad)
{
    const std::int64_t H = win.h.in, W = win.w.in, C = win.channels;
    const std::int64_t Hp = paddedExtent(win.h), Wp = paddedExtent(win.w), top = win.h.padBefore, left = win.w.padBefore;
    // Input columns that land inside the padded rows ("valid" windows with a stride may leave
    // the last ones unread).
    const std::int64_t columns = std::min(W, Wp - left);
    parallelRows(B * Hp, Wp * C, [&](std::int64_t a, std::int64_t b) {
        for (std::int64_t q = a; q < b; ++q) {
            const std::int64_t n = q / Hp, py = q % Hp, iy = py - top;
            float *dst = xpad + q * Wp * C;
            if (iy < 0 || iy >= H) {
                std::fill_n(dst, Wp * C, 0.0f);
                continue;
            }
            std::fill_n(dst, left * C, 0.0f);
            std::copy_n(x + ((n * H + iy) * W) * C, columns * C, dst + left * C);
            std::fill(dst + (left + columns) * C, dst + Wp * C, 0.0f);
        }
    });
}

void directConvForward(const Window2D &win, const float *xpad, std::int64_t B, const float *kernel, std::int64_t F, float *y)
{
    const std::int64_t C = win.channels, Hp = paddedExtent(win.h), Wp = paddedExtent(win.w);
    const std::int64_t Hout = win.h.out, Wout = win.w.out;
    parallelRows(B * Hout, Wout * win.colWidth() * F, [&](std::int64_t a, std::int64_t b) {
        for (std::int64_t q = a; q < b; ++q) {
            const std::int64_t n = q / Hout, oy = q % Hout;
            const float *in = xpad + ((n * Hp + oy * win.h.stride) * Wp) * C;
            avx2::convolveRow(in, Wp * C, win.w.stride * C, C, win.h.size, win.w.size, kernel, F, Wout, y + q * Wout * F);
        }
    });
}

void directConvKernelGradient(const Window2D &win, const float *xpad, std::int64_t B, const float *dZ, std::int64_t F, float *dKernel,
                              FloatTensor &partials)
{
    const std::int64_t C = win.channels, Hp = paddedExtent(win.h), Wp = paddedExtent(win.w);
    const std::int64_t Hout = win.h.out, Wout = win.w.out, P = win.outPositions(), KF = win.colWidth() * F;
    if (B == 0)
        return;
    const std::int64_t perGroup = std::max<std::int64_t>(1, (kGradientGroupPositions + P - 1) / P);
    const std::int64_t groups = (B + perGroup - 1) / perGroup;
    partials.resize({groups, KF});
    float *sums = partials.ptr();
    std::fill_n(sums, groups * KF, 0.0f);
    parallelRows(groups, perGroup * P * KF, [&](std::int64_t a, std::int64_t b) {
        for (std::int64_t g = a; g < b; ++g) {
            float *dk = sums + g * KF;
            for (std::int64_t n = g * perGroup; n < std::min(B, (g + 1) * perGroup); ++n) {
                for (std::int64_t ky = 0; ky < win.h.size; ++ky) {
                    for (std::int64_t kx = 0; kx < win.w.size; ++kx) {
                        const float *in = xpad + ((n * Hp + ky) * Wp + kx) * C;
                        avx2::accumulateTapGradient(in, win.h.stride * Wp * C, win.w.stride * C, C, dZ + n * P * F, Wout * F, F, Hout, Wout,
                                                    dk + (ky * win.w.size + kx) * C * F);
                    }
                }
            }
        }
    });
    // The groups' sums in group order: the same result on any number of threads.
    for (std::int64_t g = 0; g < groups; ++g) {
        const float *s = sums + g * KF;
        for (std::int64_t i = 0; i < KF; ++i)
            dKernel[i] += s[i];
    }
}

void directConvInputGradient(const Window2D &win, const float *dZ, std::int64_t B, const float *kernel, std::int64_t F, float *dx,
                             FloatTensor &paddedGradient, FloatTensor &flippedKernel, FloatTensor &paddedInputGradient)
{
    const std::int64_t C = win.channels, H = win.h.in, W = win.w.in, kh = win.h.size, kw = win.w.size;
    const std::int64_t Hout = win.h.out, Wout = win.w.out;
    // With stride 1 the padded input is Hout + kh - 1 high: a "full" convolution of dZ.
    const std::int64_t Hp = paddedExtent(win.h), Wp = paddedExtent(win.w);
    const std::int64_t Hz = Hout + 2 * (kh - 1), Wz = Wout + 2 * (kw - 1);

    // The kernel reversed in space, its channel axes swapped: (kh, kw, F, C).
    flippedKernel.resize({kh, kw, F, C});
    float *kt = flippedKernel.ptr();
    for (std::int64_t ky = 0; ky < kh; ++ky)
        for (std::int64_t kx = 0; kx < kw; ++kx) {
            const float *src = kernel + ((kh - 1 - ky) * kw + (kw - 1 - kx)) * C * F;
            float *dst = kt + (ky * kw + kx) * F * C;
            for (std::int64_t c = 0; c < C; ++c)
                for (std::int64_t f = 0; f < F; ++f)
                    dst[f * C + c] = src[c * F + f];
        }

    paddedGradient.resize({B, Hz, Wz, F});
    float *dzp = paddedGradient.ptr();
    parallelRows(B * Hz, Wz * F, [&](std::int64_t a, std::int64_t b) {
        for (std::int64_t q = a; q < b; ++q) {
            const std::int64_t n = q / Hz, oy = q % Hz - (kh - 1);
            float *dst = dzp + q * Wz * F;
            if (oy < 0 || oy >= Hout) {
                std::fill_n(dst, Wz * F, 0.0f);
                continue;
            }
            std::fill_n(dst, (kw - 1) * F, 0.0f);
            std::copy_n(dZ + ((n * Hout + oy) * Wout) * F, Wout * F, dst + (kw - 1) * F);
            std::fill_n(dst + (kw - 1 + Wout) * F, (kw - 1) * F, 0.0f);
        }
    });

    paddedInputGradient.resize({B, Hp, Wp, C});
    float *dxp = paddedInputGradient.ptr();
    parallelRows(B * Hp, Wp * kh * kw * F * C, [&](std::int64_t a, std::int64_t b) {
        for (std::int64_t q = a; q < b; ++q) {
            const std::int64_t n = q / Hp, py = q % Hp;
            avx2::convolveRow(dzp + ((n * Hz + py) * Wz) * F, Wz * F, F, F, kh, kw, kt, C, Wp, dxp + q * Wp * C);
        }
    });

    // The input's own rows and columns; those the windows never read get no gradient.
    const std::int64_t top = win.h.padBefore, left = win.w.padBefore;
    parallelRows(B * H, W * C, [&](std::int64_t a, std::int64_t b) {
        for (std::int64_t q = a; q < b; ++q) {
            const std::int64_t n = q / H, iy = q % H, py = iy + top;
            float *dst = dx + q * W * C;
            if (py >= Hp) {
                std::fill_n(dst, W * C, 0.0f);
                continue;
            }
            const std::int64_t columns = std::clamp<std::int64_t>(Wp - left, 0, W);
            std::copy_n(dxp + ((n * Hp + py) * Wp + left) * C, columns * C, dst);
            std::fill(dst + columns * C, dst + W * C, 0.0f);
        }
    });
}

} // namespace sluice::train::detail
