#pragma once
// Image arithmetic of the image map functions (image_functions.cpp), on channels-last tensors:
// one image [H, W, C] or a batch [B, H, W, C]. Each follows the tf.image op it is named after,
// down to the float operations' order where TensorFlow's result depends on it (resize).
//
// Threading: pure functions.

#include "io/error.h"
#include "pipeline/engine/tensor.h"

#include <cstdint>
#include <vector>

namespace sluice::pipeline {

struct ImageGeometry
{
    std::int64_t images = 1, height = 0, width = 0, channels = 0;
    bool batched = false;
};

// The geometry of a rank-3 or rank-4 tensor; an error names `what` otherwise.
Result<ImageGeometry> imageGeometry(const Tensor &tensor, const std::string &what);

// tf.image.resize(method="bilinear", antialias=False): half-pixel centres, float32 out.
Tensor resizeBilinear(const Tensor &image, std::int64_t height, std::int64_t width);
// tf.image.resize(method="nearest"): half-pixel centres, the input's dtype kept.
Tensor resizeNearest(const Tensor &image, std::int64_t height, std::int64_t width);

// Image i flipped left-right and/or up-down where flips[i] says so (bit 0: horizontal, bit 1:
// vertical); the dtype is kept.
Tensor flipImages(const Tensor &image, const std::vector<int> &flips);

// The h × w window of image i at (top[i], left[i]); the caller checks that it fits.
Tensor cropImages(const Tensor &image, std::int64_t height, std::int64_t width, const std::vector<std::int64_t> &top,
                  const std::vector<std::int64_t> &left);

// tf.image.adjust_brightness of float images: x + delta[i], in place on an owned copy.
Tensor adjustBrightness(const Tensor &image, const std::vector<double> &delta);
// tf.image.adjust_contrast of float images: (x - mean) * factor[i] + mean, the mean taken per
// image and channel over its pixels.
Tensor adjustContrast(const Tensor &image, const std::vector<double> &factor);

} // namespace sluice::pipeline
