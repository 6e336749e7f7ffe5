#pragma once
// What the convolution and pooling layers share: TensorFlow's output sizes and padding, the
// window over channels-last samples, and the im2col / col2im copies that turn a convolution
// into one matrix product.

#include "train/model/float_tensor.h"
#include "io/error.h"
#include "train/model/layer.h"
#include "train/layers/conv/conv_layers.h"

#include <cstdint>
#include <vector>

namespace sluice::train::detail {

// A window along one spatial axis.
struct AxisWindow
{
    std::int64_t in = 1, size = 1, stride = 1, dilation = 1;
    std::int64_t out = 1, padBefore = 0;

    // The extent of the dilated window in the input.
    std::int64_t span() const { return (size - 1) * dilation + 1; }
    // The input index of output position o's first tap (negative inside the padding).
    std::int64_t start(std::int64_t o) const { return o * stride - padBefore; }
};

// TensorFlow's arithmetic. valid: out = (in - span) / stride + 1, or 0 when the window does not
// fit. same: out = ceil(in / stride), padded by max((out - 1) * stride + span - in, 0), the
// smaller half (rounded down) before.
AxisWindow axisWindow(std::int64_t in, std::int64_t size, std::int64_t stride, std::int64_t dilation, ConvPadding padding);

// A window over the spatial axes of channels-last samples seen as [H, W, C]: 1-D layers have
// H = 1 and a window 1 high, so that one implementation serves both ranks.
struct Window2D
{
    AxisWindow h, w;
    std::int64_t channels = 1;

    std::int64_t inPositions() const { return h.in * w.in; }
    std::int64_t outPositions() const { return h.out * w.out; }
    std::int64_t taps() const { return h.size * w.size; }
    std::int64_t colWidth() const { return taps() * channels; }
    // 1x1, stride 1, no padding: the im2col matrix is the input itself.
    bool isPointwise() const;
};

// The same window as the CUDA backend's kernels take it (LayerKernelSpec::window).
LayerKernelSpec::Window kernelWindow(const Window2D &win);

// The window of a layer with `rank` (1 or 2) spatial axes over samples of shape (W, C) or
// (H, W, C); size, strides and dilation have `rank` entries. The caller checks that the shape
// has rank + 1 known dimensions.
Window2D makeWindow(int rank, const Shape &sample, const Shape &size, const Shape &strides, const Shape &dilation, ConvPadding padding);

// Rows [r0, r1) of the im2col matrix of x [B, H, W, C] into `cols` (r1 - r0 rows of colWidth()):
// row b * outPositions() + oy * w.out + ox holds the window of output (oy, ox) of sample b, in
// the order (ky, kx, c) of a Keras kernel (kh, kw, C, F) read as a (kh kw C, F) matrix; padded
// taps are zeros. Rows are split over oneTBB tasks.
void im2col(const Window2D &win, const float *x, std::int64_t r0, std::int64_t r1, float *cols);

// The adjoint of im2col: adds rows [r0, r1) (held in `cols`) into dx [B, H, W, C] where im2col
// read them from. One task adds all of a sample's rows, in row order, so the sums do not depend
// on the number of threads.
void col2imAdd(const Window2D &win, const float *cols, std::int64_t r0, std::int64_t r1, float *dx);

// How many im2col rows a layer handles at a time: keeps the matrix near a few tens of MB at
// most (at least one row). A function of the shapes only, so that the gradients' summation
// order, and with it the results, do not depend on the thread count.
std::int64_t colsChunkRows(const Window2D &win);

// What the convolution and pooling layers ask of their one input: rank + 1 dimensions per sample
// (steps or height × width, then channels), all known and non-zero; errors name the layer.
Status expectSpatialInput(const Layer &layer, const std::vector<Shape> &inputShapes, int rank);

} // namespace sluice::train::detail
