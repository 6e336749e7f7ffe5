#include "pipeline/functions/image_transforms.h"

#include "pipeline/engine/dtype_dispatch.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sluice::pipeline {
namespace {

Shape outputShape(const ImageGeometry &g, std::int64_t height, std::int64_t width)
{
    if (g.batched)
        return {g.images, height, width, g.channels};
    return {height, width, g.channels};
}

// TensorFlow's CalculateResizeScale without align_corners, in float as it computes it.
float resizeScale(std::int64_t in, std::int64_t out) { return float(in) / float(out); }

struct Interpolation
{
    std::int64_t lower, upper;
    float lerp;
};

// compute_interpolation_weights of resize_bilinear_op.cc with the half-pixel scaler.
std::vector<Interpolation> bilinearWeights(std::int64_t out, std::int64_t in)
{
    const float scale = resizeScale(in, out);
    std::vector<Interpolation> w(static_cast<std::size_t>(out));
    for (std::int64_t i = 0; i < out; ++i) {
        const float pos = (float(i) + 0.5f) * scale - 0.5f;
        const float lowerF = std::floor(pos);
        w[std::size_t(i)] = {std::max<std::int64_t>(std::int64_t(lowerF), 0), std::min<std::int64_t>(std::int64_t(std::ceil(pos)), in - 1),
                             pos - lowerF};
    }
    return w;
}

// resize_nearest_neighbor_op.cc with half_pixel_centers and without align_corners.
std::vector<std::int64_t> nearestIndices(std::int64_t out, std::int64_t in)
{
    const float scale = resizeScale(in, out);
    std::vector<std::int64_t> index(static_cast<std::size_t>(out));
    for (std::int64_t i = 0; i < out; ++i)
        index[std::size_t(i)] = std::max<std::int64_t>(0, std::min<std::int64_t>(std::int64_t(std::floor((float(i) + 0.5f) * scale)), in - 1));
    return index;
}

ImageGeometry geometryOf(const Tensor &t)
{
    const Shape &s = t.shape();
    ImageGeometry g;
    g.batched = s.size() == 4;
    const std::size_t o = g.batched ? 1 : 0;
    g.images = g.batched ? s[0] : 1;
    g.height = s[o];
    g.width = s[o + 1];
    g.channels = s[o + 2];
    return g;
}

} // namespace

Result<ImageGeometry> imageGeometry(const Tensor &tensor, const std::string &what)
{
    const Shape &s = tensor.shape();
    if (s.size() != 3 && s.size() != 4)
        return Error::invalid(what, "expects an image [height, width, channels] or a batch of them [batch, height, width, channels], got shape " +
                                        shapeText(s));
    return geometryOf(tensor);
}

Tensor resizeBilinear(const Tensor &image, std::int64_t height, std::int64_t width)
{
    const ImageGeometry g = geometryOf(image);
    Tensor out = Tensor::allocate(DType::Float32, outputShape(g, height, width));
    const auto ys = bilinearWeights(height, g.height), xs = bilinearWeights(width, g.width);
    const std::int64_t C = g.channels;
    float *dst = out.mutableAs<float>();
    visitDType(image.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T *src = image.as<T>();
        for (std::int64_t b = 0; b < g.images; ++b) {
            const T *img = src + b * g.height * g.width * C;
            for (std::int64_t y = 0; y < height; ++y) {
                const Interpolation &wy = ys[std::size_t(y)];
                const T *top = img + wy.lower * g.width * C, *bottom = img + wy.upper * g.width * C;
                for (std::int64_t x = 0; x < width; ++x) {
                    const Interpolation &wx = xs[std::size_t(x)];
                    for (std::int64_t c = 0; c < C; ++c) {
                        const float tl = float(toDouble(top[wx.lower * C + c])), tr = float(toDouble(top[wx.upper * C + c]));
                        const float bl = float(toDouble(bottom[wx.lower * C + c])), br = float(toDouble(bottom[wx.upper * C + c]));
                        const float t = tl + (tr - tl) * wx.lerp;
                        const float bo = bl + (br - bl) * wx.lerp;
                        *dst++ = t + (bo - t) * wy.lerp;
                    }
                }
            }
        }
        return 0;
    });
    return out;
}

Tensor resizeNearest(const Tensor &image, std::int64_t height, std::int64_t width)
{
    const ImageGeometry g = geometryOf(image);
    Tensor out = Tensor::allocate(image.dtype(), outputShape(g, height, width));
    const auto ys = nearestIndices(height, g.height), xs = nearestIndices(width, g.width);
    const std::size_t pixel = std::size_t(g.channels) * itemSize(image.dtype());
    const std::byte *src = image.data();
    std::byte *dst = out.mutableData();
    for (std::int64_t b = 0; b < g.images; ++b)
        for (std::int64_t y = 0; y < height; ++y) {
            const std::byte *row = src + std::size_t((b * g.height + ys[std::size_t(y)]) * g.width) * pixel;
            for (std::int64_t x = 0; x < width; ++x, dst += pixel)
                std::memcpy(dst, row + std::size_t(xs[std::size_t(x)]) * pixel, pixel);
        }
    return out;
}

Tensor flipImages(const Tensor &image, const std::vector<int> &flips)
{
    const ImageGeometry g = geometryOf(image);
    Tensor out = Tensor::allocate(image.dtype(), image.shape());
    const std::size_t pixel = std::size_t(g.channels) * itemSize(image.dtype());
    const std::size_t rowBytes = std::size_t(g.width) * pixel;
    for (std::int64_t b = 0; b < g.images; ++b) {
        const bool horizontal = flips[std::size_t(b)] & 1, vertical = flips[std::size_t(b)] & 2;
        const std::byte *src = image.data() + std::size_t(b * g.height) * rowBytes;
        std::byte *dst = out.mutableData() + std::size_t(b * g.height) * rowBytes;
        for (std::int64_t y = 0; y < g.height; ++y) {
            const std::byte *from = src + std::size_t(vertical ? g.height - 1 - y : y) * rowBytes;
            std::byte *to = dst + std::size_t(y) * rowBytes;
            if (!horizontal) {
                std::memcpy(to, from, rowBytes);
                continue;
            }
            for (std::int64_t x = 0; x < g.width; ++x)
                std::memcpy(to + std::size_t(x) * pixel, from + std::size_t(g.width - 1 - x) * pixel, pixel);
        }
    }
    return out;
}

Tensor cropImages(const Tensor &image, std::int64_t height, std::int64_t width, const std::vector<std::int64_t> &top,
                  const std::vector<std::int64_t> &left)
{
    const ImageGeometry g = geometryOf(image);
    Tensor out = Tensor::allocate(image.dtype(), outputShape(g, height, width));
    const std::size_t pixel = std::size_t(g.channels) * itemSize(image.dtype());
    std::byte *dst = out.mutableData();
    for (std::int64_t b = 0; b < g.images; ++b)
        for (std::int64_t y = 0; y < height; ++y, dst += std::size_t(width) * pixel) {
            const std::int64_t row = b * g.height + top[std::size_t(b)] + y;
            std::memcpy(dst, image.data() + (std::size_t(row * g.width + left[std::size_t(b)])) * pixel, std::size_t(width) * pixel);
        }
    return out;
}

namespace {
// Calls fn(pixels of image b, count) with an owned float copy of the image tensor.
template <typename Fn>
Tensor perImage(const Tensor &image, Fn &&fn)
{
    const ImageGeometry g = geometryOf(image);
    Tensor out = Tensor::allocate(image.dtype(), image.shape());
    const std::int64_t n = g.height * g.width * g.channels;
    visitDType(image.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>) {
            std::memcpy(out.mutableData(), image.data(), image.nbytes());
            for (std::int64_t b = 0; b < g.images; ++b)
                fn(out.mutableAs<T>() + b * n, b, g);
        }
        return 0;
    });
    return out;
}
} // namespace

Tensor adjustBrightness(const Tensor &image, const std::vector<double> &delta)
{
    return perImage(image, [&](auto *px, std::int64_t b, const ImageGeometry &g) {
        using T = std::remove_pointer_t<decltype(px)>;
        const T d = T(delta[std::size_t(b)]);
        for (std::int64_t i = 0, n = g.height * g.width * g.channels; i < n; ++i)
            px[i] += d;
    });
}

Tensor adjustContrast(const Tensor &image, const std::vector<double> &factor)
{
    return perImage(image, [&](auto *px, std::int64_t b, const ImageGeometry &g) {
        using T = std::remove_pointer_t<decltype(px)>;
        const std::int64_t pixels = g.height * g.width, C = g.channels;
        for (std::int64_t c = 0; c < C; ++c) {
            double sum = 0;
            for (std::int64_t p = 0; p < pixels; ++p)
                sum += double(px[p * C + c]);
            const T mean = T(sum / double(std::max<std::int64_t>(pixels, 1)));
            const T f = T(factor[std::size_t(b)]);
            for (std::int64_t p = 0; p < pixels; ++p)
                px[p * C + c] = (px[p * C + c] - mean) * f + mean;
        }
    });
}

} // namespace sluice::pipeline
