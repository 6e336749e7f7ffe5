// The image functions of `map`: decode_image (tf.io.decode_image), resize (tf.image.resize) and
// the seeded augmentations random_flip, random_crop, random_brightness and random_contrast
// (tf.image.random_*, Keras's RandomFlip/RandomCrop). Random draws depend on the seed, the pass,
// the element's position and the image's index in a batch, never on the thread: a pipeline
// gives the same images on 1 thread or 16. Several features named together (an image and its
// mask) get the same draw.
#include "pipeline/functions/image_functions.h"

#include "io/formats/image_codec.h"
#include "pipeline/engine/dtype_dispatch.h"
#include "pipeline/functions/image_transforms.h"
#include "pipeline/profile/stage_stats.h"

#include <algorithm>
#include <cstring>

namespace sluice::pipeline {
namespace {

// The features a function applies to, checked to be images (rank 3 or 4, or unknown rank).
std::vector<std::size_t> imageFeatures(Params &params, const ElementSpec &spec)
{
    auto features = featureIndices(params, "features", spec, false);
    for (std::size_t f : features) {
        const Shape &s = spec.features[f].shape;
        if (s.size() != 3 && s.size() != 4)
            params.fail("features", "\"" + spec.features[f].name + "\" has shape " + shapeText(s) +
                                        "; image functions take [height, width, channels] or [batch, height, width, channels]");
    }
    return features;
}

// [height, width] from a parameter, each at least 1.
std::pair<std::int64_t, std::int64_t> sizeParam(Params &params, const std::string &name)
{
    const auto v = params.numbers(name, std::nullopt);
    if (v.size() != 2 || v[0] < 1 || v[1] < 1 || v[0] != std::floor(v[0]) || v[1] != std::floor(v[1]))
        params.fail(name, "must be [height, width], two whole numbers of at least 1");
    return {std::int64_t(v[0]), std::int64_t(v[1])};
}

// The element's own name for messages: its `path` feature (from_files) when it has one.
std::string describeElement(const ElementSpec &spec, const Element &element, std::uint64_t sequence)
{
    if (const auto p = spec.find("path"); p && spec.features[*p].type.isString && element.tensors[*p].count() == 1)
        return element.tensors[*p].stringValues().at(0);
    return "element " + std::to_string(sequence);
}

class DecodeImageFunction final : public MapFunction
{
public:
    DecodeImageFunction(BuildContext &context, Params &params, const ElementSpec &input) : m_input(input)
    {
        const auto f = featureIndices(params, "features", input, false, false);
        if (f.size() != 1)
            params.fail("features", "decode_image decodes one feature (the file's bytes)");
        m_feature = f[0];
        const FeatureSpec &in = input.features[m_feature];
        if (!in.type.isString || !in.shape.empty())
            params.fail("features", "\"" + in.name + "\" is " + in.type.name() + " " + shapeText(in.shape) +
                                        "; decode_image takes one encoded image, a scalar string (decode before batch)");
        m_options.channels = int(params.integer("channels", 0, 0, 4));
        if (m_options.channels == 2)
            params.fail("channels", "must be 0 (as in the file), 1, 3 or 4, as tf.io.decode_image takes");
        const std::string dtype = params.choice("dtype", "uint8", {"uint8", "uint16", "float32"});
        m_dtype = dtype == "uint8" ? DType::UInt8 : dtype == "uint16" ? DType::UInt16 : DType::Float32;
        m_options.keep16Bit = m_dtype != DType::UInt8;
        m_options.accurateDct = params.choice("dct_method", "INTEGER_FAST", {"INTEGER_FAST", "INTEGER_ACCURATE"}) == "INTEGER_ACCURATE";
        m_skip = params.choice("on_error", "error", {"error", "skip"}) == "skip";
        m_stats = context.statsFor(params.node());
        m_output = input;
        FeatureSpec &out = m_output.features[m_feature];
        out.type = ValueType{m_dtype, false};
        out.shape = {-1, -1, m_options.channels ? m_options.channels : -1};
    }

    bool mayDrop() const override { return m_skip; }

    Result<Element> apply(Element &&element, std::uint64_t, std::uint64_t sequence) const override
    {
        const Tensor &encoded = element.tensors[m_feature];
        const std::string &bytes = encoded.stringValues().at(0);
        const std::string what = describeElement(m_input, element, sequence);
        Tensor raw;
        auto info = decodeImage(std::as_bytes(std::span(bytes.data(), bytes.size())), m_options,
                                    [&](const ImageInfo &i) {
                                        raw = Tensor::allocate(i.bytesPerSample == 2 ? DType::UInt16 : DType::UInt8, {i.height, i.width, i.channels});
                                        return raw.mutableData();
                                    },
                                    what);
        if (!info.ok()) {
            if (!m_skip)
                return info.error();
            m_stats->recordSkip(info.error().message());
            return droppedElement();
        }
        element.tensors[m_feature] = convert(std::move(raw));
        return std::move(element);
    }

private:
    // tf.image.convert_image_dtype: 8-bit to 16-bit multiplies by 257; integers to float32
    // divide by the type's maximum.
    Tensor convert(Tensor raw) const
    {
        if (raw.dtype() == m_dtype)
            return raw;
        Tensor out = Tensor::allocate(m_dtype, raw.shape());
        const std::uint64_t n = raw.count();
        if (m_dtype == DType::UInt16) {
            for (std::uint64_t i = 0; i < n; ++i)
                out.mutableAs<std::uint16_t>()[i] = std::uint16_t(raw.as<std::uint8_t>()[i] * 257u);
            return out;
        }
        float *dst = out.mutableAs<float>();
        if (raw.dtype() == DType::UInt8)
            for (std::uint64_t i = 0; i < n; ++i)
                dst[i] = float(raw.as<std::uint8_t>()[i]) * (1.0f / 255.0f);
        else
            for (std::uint64_t i = 0; i < n; ++i)
                dst[i] = float(raw.as<std::uint16_t>()[i]) * (1.0f / 65535.0f);
        return out;
    }

    ElementSpec m_input;
    std::size_t m_feature = 0;
    ImageDecodeOptions m_options;
    DType m_dtype = DType::UInt8;
    bool m_skip = false;
    StageStats *m_stats = nullptr;
};

class ResizeFunction final : public MapFunction
{
public:
    ResizeFunction(Params &params, const ElementSpec &input)
    {
        m_features = imageFeatures(params, input);
        std::tie(m_height, m_width) = sizeParam(params, "size");
        m_nearest = params.choice("method", "bilinear", {"bilinear", "nearest"}) == "nearest";
        m_output = input;
        for (std::size_t f : m_features) {
            FeatureSpec &out = m_output.features[f];
            const std::size_t o = out.shape.size() == 4 ? 1 : 0;
            out.shape[o] = m_height;
            out.shape[o + 1] = m_width;
            if (!m_nearest)
                out.type = ValueType{DType::Float32, false};
        }
    }

    Result<Element> apply(Element &&element, std::uint64_t, std::uint64_t) const override
    {
        for (std::size_t f : m_features) {
            const Tensor &in = element.tensors[f];
            if (auto g = imageGeometry(in, m_output.features[f].name); !g.ok())
                return g.error();
            element.tensors[f] = m_nearest ? resizeNearest(in, m_height, m_width) : resizeBilinear(in, m_height, m_width);
        }
        return std::move(element);
    }

private:
    std::vector<std::size_t> m_features;
    std::int64_t m_height = 0, m_width = 0;
    bool m_nearest = false;
};

// What the random functions share: their features, their seed and one uniform draw per
// (element, image, purpose).
class RandomImageFunction : public MapFunction
{
protected:
    RandomImageFunction(BuildContext &context, Params &params, const ElementSpec &input)
    {
        m_features = imageFeatures(params, input);
        std::optional<std::int64_t> seed;
        if (params.has("seed"))
            seed = params.integer("seed", std::nullopt, INT64_MIN);
        m_seed = context.seedFor(params.node(), seed);
        m_output = input;
    }
    double draw(std::uint64_t pass, std::uint64_t sequence, std::int64_t image, std::uint64_t purpose) const
    {
        return unitInterval(hash3(hash3(m_seed, pass, sequence), std::uint64_t(image), purpose));
    }
    // Checks every feature and returns how many images the element holds (all must agree).
    Result<ImageGeometry> geometry(const Element &element) const
    {
        std::optional<ImageGeometry> first;
        for (std::size_t f : m_features) {
            auto g = imageGeometry(element.tensors[f], m_output.features[f].name);
            if (!g.ok())
                return g.error();
            if (first && first->images != g->images)
                return Error::invalid(m_output.features[f].name, "holds " + std::to_string(g->images) + " images where \"" +
                                                                     m_output.features[m_features[0]].name + "\" holds " +
                                                                     std::to_string(first->images));
            if (!first)
                first = *g;
        }
        return *first;
    }
    std::vector<std::size_t> m_features;
    std::uint64_t m_seed = 0;
};

class RandomFlipFunction final : public RandomImageFunction
{
public:
    RandomFlipFunction(BuildContext &context, Params &params, const ElementSpec &input) : RandomImageFunction(context, params, input)
    {
        const std::string mode = params.choice("mode", "horizontal_and_vertical", {"horizontal", "vertical", "horizontal_and_vertical"});
        m_modes = mode == "horizontal" ? 1 : mode == "vertical" ? 2 : 3;
    }
    Result<Element> apply(Element &&element, std::uint64_t pass, std::uint64_t sequence) const override
    {
        auto g = geometry(element);
        if (!g.ok())
            return g.error();
        std::vector<int> flips(std::size_t(g->images));
        for (std::int64_t b = 0; b < g->images; ++b)
            for (int bit : {1, 2})
                if ((m_modes & bit) && draw(pass, sequence, b, std::uint64_t(bit)) < 0.5)
                    flips[std::size_t(b)] |= bit;
        for (std::size_t f : m_features)
            element.tensors[f] = flipImages(element.tensors[f], flips);
        return std::move(element);
    }

private:
    int m_modes = 3;
};

class RandomCropFunction final : public RandomImageFunction
{
public:
    RandomCropFunction(BuildContext &context, Params &params, const ElementSpec &input) : RandomImageFunction(context, params, input)
    {
        std::tie(m_height, m_width) = sizeParam(params, "size");
        for (std::size_t f : m_features) {
            FeatureSpec &out = m_output.features[f];
            const std::size_t o = out.shape.size() == 4 ? 1 : 0;
            for (auto [dim, want] : {std::pair{o, m_height}, std::pair{o + 1, m_width}})
                if (out.shape[dim] >= 0 && out.shape[dim] < want)
                    params.fail("size", "crop of " + std::to_string(m_height) + "x" + std::to_string(m_width) + " is larger than \"" + out.name +
                                            "\" " + shapeText(out.shape));
            out.shape[o] = m_height;
            out.shape[o + 1] = m_width;
        }
    }
    Result<Element> apply(Element &&element, std::uint64_t pass, std::uint64_t sequence) const override
    {
        auto g = geometry(element);
        if (!g.ok())
            return g.error();
        for (std::size_t f : m_features) {
            const Shape &s = element.tensors[f].shape();
            const std::size_t o = s.size() == 4 ? 1 : 0;
            if (s[o] < m_height || s[o + 1] < m_width)
                return Error::invalid(m_output.features[f].name, "an image of " + std::to_string(s[o]) + "x" + std::to_string(s[o + 1]) +
                                                                     " is smaller than the crop size " + std::to_string(m_height) + "x" +
                                                                     std::to_string(m_width) + " (resize first)");
        }
        const Shape &s = element.tensors[m_features[0]].shape();
        const std::size_t o = s.size() == 4 ? 1 : 0;
        std::vector<std::int64_t> top(std::size_t(g->images)), left(std::size_t(g->images));
        for (std::int64_t b = 0; b < g->images; ++b) {
            top[std::size_t(b)] = std::int64_t(draw(pass, sequence, b, 1) * double(s[o] - m_height + 1));
            left[std::size_t(b)] = std::int64_t(draw(pass, sequence, b, 2) * double(s[o + 1] - m_width + 1));
        }
        for (std::size_t f : m_features)
            element.tensors[f] = cropImages(element.tensors[f], m_height, m_width, top, left);
        return std::move(element);
    }

private:
    std::int64_t m_height = 0, m_width = 0;
};

// random_brightness and random_contrast: one factor a image, uniform in [low, high).
class RandomAdjustFunction final : public RandomImageFunction
{
public:
    enum class Kind { Brightness, Contrast };
    RandomAdjustFunction(Kind kind, BuildContext &context, Params &params, const ElementSpec &input)
        : RandomImageFunction(context, params, input), m_kind(kind)
    {
        for (std::size_t f : m_features)
            if (!isFloating(input.features[f].type.dtype) || input.features[f].type.dtype == DType::Float16)
                params.fail("features", "\"" + input.features[f].name + "\" is " + input.features[f].type.name() +
                                            "; brightness and contrast act on float32 or float64 images (decode_image with dtype float32, or resize first)");
        if (kind == Kind::Brightness) {
            const double delta = params.number("max_delta", std::nullopt);
            if (delta < 0)
                params.fail("max_delta", "must not be negative");
            m_low = -delta;
            m_high = delta;
        } else {
            m_low = params.number("lower", std::nullopt);
            m_high = params.number("upper", std::nullopt);
            if (m_low < 0)
                params.fail("lower", "must not be negative");
            if (m_high <= m_low)
                params.fail("upper", "must be greater than lower");
        }
    }
    Result<Element> apply(Element &&element, std::uint64_t pass, std::uint64_t sequence) const override
    {
        auto g = geometry(element);
        if (!g.ok())
            return g.error();
        std::vector<double> factors(std::size_t(g->images));
        for (std::int64_t b = 0; b < g->images; ++b)
            factors[std::size_t(b)] = m_low + (m_high - m_low) * draw(pass, sequence, b, 3);
        for (std::size_t f : m_features)
            element.tensors[f] = m_kind == Kind::Brightness ? adjustBrightness(element.tensors[f], factors)
                                                            : adjustContrast(element.tensors[f], factors);
        return std::move(element);
    }

private:
    Kind m_kind;
    double m_low = 0, m_high = 0;
};

} // namespace

const std::vector<MapFunctionInfo> &imageMapFunctions()
{
    static const std::vector<MapFunctionInfo> functions{
        {"decode_image", {"features", "channels", "dtype", "dct_method", "on_error"},
         "tf.io.decode_image of JPEG or PNG bytes (from_files' image): [height, width, channels] uint8, uint16 or float32 in [0, 1]; "
         "on_error \"skip\" leaves bad images out and counts them"},
        {"resize", {"features", "size", "method"}, "tf.image.resize to size [height, width], bilinear (float32 out) or nearest"},
        {"random_flip", {"features", "mode", "seed"}, "flips each image left-right and/or up-down with probability 1/2 (keras.layers.RandomFlip)"},
        {"random_crop", {"features", "size", "seed"}, "a random [height, width] window of each image (tf.image.random_crop)"},
        {"random_brightness", {"features", "max_delta", "seed"}, "adds a random delta in [-max_delta, max_delta] to each float image"},
        {"random_contrast", {"features", "lower", "upper", "seed"},
         "scales each float image's distance from its per-channel mean by a random factor in [lower, upper]"},
    };
    return functions;
}

std::unique_ptr<MapFunction> makeImageMapFunction(const std::string &name, BuildContext &context, Params &params, const ElementSpec &spec)
{
    if (name == "decode_image")
        return std::make_unique<DecodeImageFunction>(context, params, spec);
    if (name == "resize")
        return std::make_unique<ResizeFunction>(params, spec);
    if (name == "random_flip")
        return std::make_unique<RandomFlipFunction>(context, params, spec);
    if (name == "random_crop")
        return std::make_unique<RandomCropFunction>(context, params, spec);
    if (name == "random_brightness")
        return std::make_unique<RandomAdjustFunction>(RandomAdjustFunction::Kind::Brightness, context, params, spec);
    if (name == "random_contrast")
        return std::make_unique<RandomAdjustFunction>(RandomAdjustFunction::Kind::Contrast, context, params, spec);
    return nullptr;
}

} // namespace sluice::pipeline
