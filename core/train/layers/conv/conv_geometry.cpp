#include "train/layers/conv/conv_geometry.h"

#include "train/layers/layer_util.h"

#include <algorithm>

namespace sluice::train::detail {

namespace {
// The im2col matrix's budget: big enough for the gemm to run at full speed on long blocks of
// rows, small enough not to matter next to the activations of a batch.
constexpr std::int64_t kColsBudgetBytes = std::int64_t(16) << 20;
} // namespace

AxisWindow axisWindow(std::int64_t in, std::int64_t size, std::int64_t stride, std::int64_t dilation, ConvPadding padding)
{
    AxisWindow a;
    a.in = in;
    a.size = size;
    a.stride = stride;
    a.dilation = dilation;
    const std::int64_t span = a.span();
    if (padding == ConvPadding::Valid) {
        a.out = in >= span ? (in - span) / stride + 1 : 0;
        a.padBefore = 0;
    } else {
        a.out = (in + stride - 1) / stride;
        a.padBefore = std::max<std::int64_t>((a.out - 1) * stride + span - in, 0) / 2;
    }
    return a;
}

bool Window2D::isPointwise() const { return h.size == 1 && w.size == 1 && h.stride == 1 && w.stride == 1; }

LayerKernelSpec::Window kernelWindow(const Window2D &win)
{
    LayerKernelSpec::Window k;
    k.inH = win.h.in;
    k.inW = win.w.in;
    k.channels = win.channels;
    k.outH = win.h.out;
    k.outW = win.w.out;
    k.sizeH = win.h.size;
    k.sizeW = win.w.size;
    k.strideH = win.h.stride;
    k.strideW = win.w.stride;
    k.dilationH = win.h.dilation;
    k.dilationW = win.w.dilation;
    k.padTop = win.h.padBefore;
    k.padLeft = win.w.padBefore;
    return k;
}

Window2D makeWindow(int rank, const Shape &sample, const Shape &size, const Shape &strides, const Shape &dilation, ConvPadding padding)
{
    Window2D win;
    win.channels = sample.back();
    if (rank == 1) {
        win.h = axisWindow(1, 1, 1, 1, ConvPadding::Valid);
        win.w = axisWindow(sample[0], size[0], strides[0], dilation[0], padding);
    } else {
        win.h = axisWindow(sample[0], size[0], strides[0], dilation[0], padding);
        win.w = axisWindow(sample[1], size[1], strides[1], dilation[1], padding);
    }
    return win;
}

void im2col(const Window2D &win, const float *x, std::int64_t r0, std::int64_t r1, float *cols)
{
    const std::int64_t C = win.channels, K = win.colWidth(), P = win.outPositions();
    const std::int64_t H = win.h.in, W = win.w.in, kw = win.w.size;
    parallelRows(r1 - r0, K, [&](std::int64_t a, std::int64_t b) {
        for (std::int64_t r = r0 + a; r < r0 + b; ++r) {
            const std::int64_t n = r / P, pos = r % P, oy = pos / win.w.out, ox = pos % win.w.out;
            const float *sample = x + n * H * W * C;
            float *row = cols + (r - r0) * K;
            const std::int64_t x0 = win.w.start(ox);
            // Undilated windows wholly inside a row of the input: one copy per window row.
            const bool rowInside = win.w.dilation == 1 && x0 >= 0 && x0 + kw <= W;
            for (std::int64_t ky = 0; ky < win.h.size; ++ky) {
                const std::int64_t iy = win.h.start(oy) + ky * win.h.dilation;
                float *dst = row + ky * kw * C;
                if (iy < 0 || iy >= H) {
                    std::fill_n(dst, kw * C, 0.0f);
                    continue;
                }
                const float *src = sample + iy * W * C;
                if (rowInside) {
                    std::copy_n(src + x0 * C, kw * C, dst);
                    continue;
                }
                for (std::int64_t kx = 0; kx < kw; ++kx) {
                    const std::int64_t ix = x0 + kx * win.w.dilation;
                    if (ix < 0 || ix >= W)
                        std::fill_n(dst + kx * C, C, 0.0f);
                    else
                        std::copy_n(src + ix * C, C, dst + kx * C);
                }
            }
        }
    });
}

void col2imAdd(const Window2D &win, const float *cols, std::int64_t r0, std::int64_t r1, float *dx)
{
    if (r1 <= r0)
        return;
    const std::int64_t C = win.channels, K = win.colWidth(), P = win.outPositions();
    const std::int64_t H = win.h.in, W = win.w.in, kw = win.w.size;
    const std::int64_t first = r0 / P, last = (r1 - 1) / P;
    // Windows of one sample overlap; those of different samples never do: a task per sample.
    parallelRows(last - first + 1, P * K, [&](std::int64_t a, std::int64_t b) {
        for (std::int64_t n = first + a; n < first + b; ++n) {
            float *sample = dx + n * H * W * C;
            const std::int64_t begin = std::max(r0, n * P), end = std::min(r1, (n + 1) * P);
            for (std::int64_t r = begin; r < end; ++r) {
                const std::int64_t pos = r - n * P, oy = pos / win.w.out, ox = pos % win.w.out;
                const float *row = cols + (r - r0) * K;
                for (std::int64_t ky = 0; ky < win.h.size; ++ky) {
                    const std::int64_t iy = win.h.start(oy) + ky * win.h.dilation;
                    if (iy < 0 || iy >= H)
                        continue;
                    for (std::int64_t kx = 0; kx < kw; ++kx) {
                        const std::int64_t ix = win.w.start(ox) + kx * win.w.dilation;
                        if (ix < 0 || ix >= W)
                            continue;
                        float *d = sample + (iy * W + ix) * C;
                        const float *s = row + (ky * kw + kx) * C;
                        for (std::int64_t c = 0; c < C; ++c)
                            d[c] += s[c];
                    }
                }
            }
        }
    });
}

std::int64_t colsChunkRows(const Window2D &win)
{
    return std::max<std::int64_t>(1, kColsBudgetBytes / (std::int64_t(sizeof(float)) * std::max<std::int64_t>(1, win.colWidth())));
}

Status expectSpatialInput(const Layer &layer, const std::vector<Shape> &inputShapes, int rank)
{
    if (auto s = expectInputs(layer, inputShapes, 1); !s)
        return s;
    const Shape &in = inputShapes[0];
    const char *expected = rank == 1 ? "(steps, channels)" : "(height, width, channels)";
    if (in.size() != std::size_t(rank) + 1)
        return layerError(layer, std::string("expects inputs of shape ") + expected + " per sample, got shape " + shapeString(in));
    if (std::any_of(in.begin(), in.end(), [](std::int64_t d) { return d <= 0; }))
        return layerError(layer, "needs known, non-zero input dimensions, got shape " + shapeString(in));
    return {};
}

} // namespace sluice::train::detail
