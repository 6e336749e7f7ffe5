#pragma once
// The window of a convolution or pooling layer as the kernels take it: channels-last samples
// seen as [H, W, C] (1-D layers: H = 1 and a window 1 high), with TensorFlow's output sizes and
// padding already worked out by the layer (train/layers/conv/conv_geometry.h). A copy of
// LayerKernelSpec::Window (train/model/layer.h), which .cu files cannot include (C++20 there, C++17
// here). Plain C++ header.

#include <cstdint>

namespace sluice::train::cuda {

struct Window
{
    std::int64_t inH = 1, inW = 1, channels = 1;
    std::int64_t outH = 1, outW = 1;
    std::int64_t sizeH = 1, sizeW = 1;
    std::int64_t strideH = 1, strideW = 1;
    std::int64_t dilationH = 1, dilationW = 1; // 1 for pooling
    std::int64_t padTop = 0, padLeft = 0;      // padded rows above / columns left of the input

    std::int64_t inPositions() const { return inH * inW; }
    std::int64_t outPositions() const { return outH * outW; }
    std::int64_t taps() const { return sizeH * sizeW; }
    // A row of the im2col matrix: every tap's channels, in the order (ky, kx, c).
    std::int64_t colWidth() const { return taps() * channels; }
    // 1x1, stride 1 (so no padding): the im2col matrix is the input itself.
    bool isPointwise() const { return sizeH == 1 && sizeW == 1 && strideH == 1 && strideW == 1; }
};

} // namespace sluice::train::cuda
