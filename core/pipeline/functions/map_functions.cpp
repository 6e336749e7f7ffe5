#include "pipeline/functions/map_functions.h"

#include "pipeline/functions/categorical_functions.h"
#include "pipeline/engine/dtype_dispatch.h"
#include "pipeline/ops/host_ops.h"
#include "pipeline/functions/image_functions.h"

#include "pipeline/engine/runtime.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sluice::pipeline {

std::vector<std::size_t> featureIndices(Params &params, const std::string &param, const ElementSpec &spec, bool allByDefault, bool numeric)
{
    std::vector<std::size_t> out;
    if (!params.has(param)) {
        if (!allByDefault)
            params.fail(param, "missing (name the feature(s) to apply the function to)");
        for (std::size_t i = 0; i < spec.features.size(); ++i)
            if (!spec.features[i].type.isString)
                out.push_back(i);
        return out;
    }
    for (const auto &name : params.strings(param, std::nullopt)) {
        const auto i = spec.find(name);
        if (!i)
            params.fail(param, "\"" + name + "\" is not a feature of the input (it has: " + spec.names() + ")");
        if (numeric && spec.features[*i].type.isString)
            params.fail(param, "\"" + name + "\" is a string feature; this function needs numbers");
        out.push_back(*i);
    }
    return out;
}

namespace {

// Applies `op(value, indexWithinLastAxis)` elementwise into a float32 (or float64) output.
class ElementwiseFunction : public MapFunction
{
public:
    Result<Element> apply(Element &&element, std::uint64_t pass, std::uint64_t sequence) const override
    {
        for (std::size_t k = 0; k < m_features.size(); ++k) {
            const std::size_t f = m_features[k];
            const Tensor &in = element.tensors[f];
            const DType outType = m_output.features[f].type.dtype;
            Tensor out = Tensor::allocate(outType, in.shape());
            const std::uint64_t n = in.count();
            const std::uint64_t last = in.shape().empty() ? 1 : std::uint64_t(std::max<std::int64_t>(1, in.shape().back()));
            const std::uint64_t stream = hash3(pass, sequence, f);
            visitDType(in.dtype(), [&](auto inTag) {
                using In = decltype(inTag);
                const In *src = in.as<In>();
                visitDType(outType, [&](auto outTag) {
                    using Out = decltype(outTag);
                    Out *dst = out.mutableAs<Out>();
                    for (std::uint64_t i = 0; i < n; ++i)
                        dst[i] = fromDouble<Out>(op(toDouble(src[i]), i % last, stream, i));
                    return 0;
                });
                return 0;
            });
            element.tensors[f] = std::move(out);
        }
        return std::move(element);
    }

protected:
    virtual double op(double x, std::uint64_t lastIndex, std::uint64_t stream, std::uint64_t i) const = 0;
    // Output dtype for a feature: float stays float, anything else becomes float32.
    void setFloatOutputs(const ElementSpec &input)
    {
        m_output = input;
        for (std::size_t f : m_features)
            if (!isFloating(input.features[f].type.dtype) || input.features[f].type.dtype == DType::Float16)
                m_output.features[f].type.dtype = DType::Float32;
    }
    std::vector<std::size_t> m_features;
};

class CastFunction final : public MapFunction
{
public:
    CastFunction(Params &params, const ElementSpec &input)
    {
        m_features = featureIndices(params, "features", input, true);
        const std::string name = params.string("dtype", std::nullopt);
        auto type = valueTypeFromName(name);
        if (!type || type->isString)
            params.fail("dtype", "\"" + name + "\" is not a numeric dtype (float32, float64, float16, int8…int64, uint8…uint64, bool)");
        m_dtype = type->dtype;
        m_output = input;
        for (std::size_t f : m_features)
            m_output.features[f].type = {m_dtype, false};
    }
    Result<Element> apply(Element &&element, std::uint64_t, std::uint64_t) const override
    {
        for (std::size_t f : m_features)
            element.tensors[f] = castTensor(element.tensors[f], m_dtype);
        return std::move(element);
    }

private:
    std::vector<std::size_t> m_features;
    DType m_dtype;
};

// (x - mean) / std, with mean and std scalars or one per position of the last axis (Keras
// Normalization with axis=-1), given or adapted from a pass over the input.
class NormalizeFunction final : public ElementwiseFunction
{
public:
    NormalizeFunction(BuildContext &context, Params &params, const Dataset &input)
    {
        m_features = featureIndices(params, "features", input.spec(), false);
        const bool adaptMean = params.raw("mean") && params.raw("mean")->is_string();
        const bool adaptStd = params.raw("std") && params.raw("std")->is_string();
        if ((adaptMean && params.string("mean", std::nullopt) != "adapt") || (adaptStd && params.string("std", std::nullopt) != "adapt"))
            params.fail(adaptMean ? "mean" : "std", "must be a number, a list of numbers, or \"adapt\"");
        if (!adaptMean && !adaptStd && params.has("adapt_elements"))
            params.fail("adapt_elements", "applies only when mean or std is \"adapt\"");
        if (adaptMean || adaptStd) {
            if (m_features.size() != 1)
                params.fail("features", "adapting mean/std works on one feature at a time (use one normalize per feature)");
            adapt(context, params, input, m_features[0], adaptMean, adaptStd);
        }
        if (!adaptMean)
            m_mean = params.numbers("mean", std::vector<double>{0.0});
        if (!adaptStd)
            m_std = params.numbers("std", std::vector<double>{1.0});
        for (double s : m_std)
            if (!(s > 0))
                params.fail("std", "must be positive, got " + std::to_string(s));
        for (std::size_t f : m_features) {
            const Shape &shape = input.spec().features[f].shape;
            const std::int64_t last = shape.empty() ? 1 : shape.back();
            for (const auto *v : {&m_mean, &m_std})
                if (v->size() != 1 && std::int64_t(v->size()) != last)
                    params.fail(v == &m_mean ? "mean" : "std", "has " + std::to_string(v->size()) + " values; feature \"" +
                                                                   input.spec().features[f].name + "\" has " + std::to_string(last) +
                                                                   " along its last axis");
        }
        setFloatOutputs(input.spec());
    }

private:
    void adapt(BuildContext &context, Params &params, const Dataset &input, std::size_t feature, bool mean, bool stddev)
    {
        const std::int64_t limit = params.integer("adapt_elements", -1, -1);
        const Shape &shape = input.spec().features[feature].shape;
        const std::size_t last = shape.empty() || shape.back() < 1 ? 1 : std::size_t(shape.back());
        std::vector<double> sum(last, 0), sumSq(last, 0);
        std::uint64_t count = 0, seen = 0;
        Runtime runtime(context.threads());
        const Status status = drain(input, runtime, [&](Element &&e) {
            const Tensor &t = e.tensors[feature];
            const std::uint64_t n = t.count();
            for (std::uint64_t i = 0; i < n; ++i) {
                const double v = t.valueAsDouble(i);
                sum[i % last] += v;
                sumSq[i % last] += v * v;
            }
            count += n / last;
            return limit < 0 || std::int64_t(++seen) < limit;
        });
        if (!status.ok())
            params.fail("mean", "adapting over the input failed: " + status.error().message());
        if (count == 0)
            params.fail("mean", "cannot adapt: the input has no elements");
        std::vector<double> m(last), s(last);
        for (std::size_t i = 0; i < last; ++i) {
            m[i] = sum[i] / double(count);
            const double var = std::max(0.0, sumSq[i] / double(count) - m[i] * m[i]);
            s[i] = std::max(std::sqrt(var), 1e-7); // Keras keeps a floor so constant columns do not divide by zero
        }
        if (mean)
            m_mean = m;
        if (stddev)
            m_std = s;
    }
    double op(double x, std::uint64_t j, std::uint64_t, std::uint64_t) const override
    {
        return (x - m_mean[m_mean.size() == 1 ? 0 : j]) / m_std[m_std.size() == 1 ? 0 : j];
    }
    std::vector<double> m_mean{0.0}, m_std{1.0};
};

class ScaleFunction final : public ElementwiseFunction
{
public:
    ScaleFunction(Params &params, const ElementSpec &input)
    {
        m_features = featureIndices(params, "features", input, false);
        m_scale = params.number("scale", std::nullopt);
        m_offset = params.number("offset", 0.0);
        setFloatOutputs(input);
    }

private:
    double op(double x, std::uint64_t, std::uint64_t, std::uint64_t) const override { return x * m_scale + m_offset; }
    double m_scale, m_offset;
};

class ClipFunction final : public ElementwiseFunction
{
public:
    ClipFunction(Params &params, const ElementSpec &input)
    {
        m_features = featureIndices(params, "features", input, false);
        m_min = params.number("clip_value_min", std::nullopt);
        m_max = params.number("clip_value_max", std::nullopt);
        if (m_min > m_max)
            params.fail("clip_value_min", "is above clip_value_max");
        m_output = input; // tf.clip_by_value keeps the dtype
    }

private:
    double op(double x, std::uint64_t, std::uint64_t, std::uint64_t) const override { return std::isnan(x) ? x : std::clamp(x, m_min, m_max); }
    double m_min, m_max;
};

class GaussianNoiseFunction final : public ElementwiseFunction
{
public:
    GaussianNoiseFunction(BuildContext &context, Params &params, const ElementSpec &input)
    {
        m_features = featureIndices(params, "features", input, false);
        m_stddev = params.number("stddev", std::nullopt);
        if (m_stddev < 0)
            params.fail("stddev", "must not be negative");
        std::optional<std::int64_t> seed;
        if (params.has("seed"))
            seed = params.integer("seed", std::nullopt, INT64_MIN);
        m_seed = context.seedFor(params.node(), seed);
        setFloatOutputs(input);
    }

private:
    double op(double x, std::uint64_t, std::uint64_t stream, std::uint64_t i) const override
    {
        // Box–Muller from two counter-based uniforms: the noise of element (pass, sequence, i)
        // is the same whichever thread computes it.
        const std::uint64_t h = hash3(m_seed, stream, i);
        const double u1 = (double(h >> 11) + 0.5) * 0x1.0p-53;
        const double u2 = double(hash3(h, m_seed, 1) >> 11) * 0x1.0p-53;
        return x + m_stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    }
    double m_stddev;
    std::uint64_t m_seed;
};

class OneHotFunction final : public MapFunction
{
public:
    OneHotFunction(Params &params, const ElementSpec &input)
    {
        const auto f = featureIndices(params, "features", input, false);
        if (f.size() != 1)
            params.fail("features", "one_hot takes one feature");
        m_feature = f[0];
        const auto &spec = input.features[m_feature];
        if (isFloating(spec.type.dtype))
            params.fail("features", "\"" + spec.name + "\" is " + spec.type.name() + "; one_hot needs integer class indices (cast first)");
        m_depth = params.integer("depth", std::nullopt, 1, 1 << 24);
        const auto type = valueTypeFromName(params.string("dtype", "float32"));
        if (!type || type->isString)
            params.fail("dtype", "must be a numeric dtype");
        m_dtype = type->dtype;
        m_output = input;
        m_output.features[m_feature].type = {m_dtype, false};
        m_output.features[m_feature].shape.push_back(m_depth);
    }
    Result<Element> apply(Element &&element, std::uint64_t, std::uint64_t) const override
    {
        const Tensor &in = element.tensors[m_feature];
        Shape shape = in.shape();
        shape.push_back(m_depth);
        Tensor out = Tensor::allocate(m_dtype, shape);
        std::memset(out.mutableData(), 0, out.nbytes());
        const std::size_t item = itemSize(m_dtype);
        const Tensor one = castTensor(Tensor::scalar<std::int64_t>(1), m_dtype);
        for (std::uint64_t i = 0; i < in.count(); ++i) {
            const double c = in.valueAsDouble(i);
            if (c >= 0 && c < double(m_depth)) // tf.one_hot: out-of-range indices give an all-zero row
                std::memcpy(out.mutableData() + (i * std::uint64_t(m_depth) + std::uint64_t(c)) * item, one.data(), item);
        }
        element.tensors[m_feature] = std::move(out);
        return std::move(element);
    }

private:
    std::size_t m_feature;
    std::int64_t m_depth;
    DType m_dtype;
};

class ReshapeFunction final : public MapFunction
{
public:
    ReshapeFunction(Params &params, const ElementSpec &input)
    {
        const auto f = featureIndices(params, "features", input, false, false);
        if (f.size() != 1)
            params.fail("features", "reshape takes one feature");
        m_feature = f[0];
        const nlohmann::json *shape = params.raw("shape");
        if (!shape || !shape->is_array())
            params.fail("shape", "must be a list of dimensions (one may be -1)");
        int unknown = 0;
        for (const auto &d : *shape) {
            if (!d.is_number_integer() || d.get<std::int64_t>() < -1)
                params.fail("shape", "dimensions must be integers ≥ 0 or -1, got " + d.dump());
            m_shape.push_back(d.get<std::int64_t>());
            unknown += m_shape.back() == -1;
        }
        if (unknown > 1)
            params.fail("shape", "only one dimension may be -1");
        const Shape &from = input.features[m_feature].shape;
        const bool known = std::none_of(from.begin(), from.end(), [](std::int64_t d) { return d < 0; });
        Shape resolved = m_shape;
        if (known) {
            auto r = resolve(elementCount(from));
            if (!r.ok())
                params.fail("shape", "feature \"" + input.features[m_feature].name + "\" " + shapeText(from) + ": " + r.error().reason);
            resolved = *r;
        }
        m_output = input;
        m_output.features[m_feature].shape = resolved;
    }
    Result<Element> apply(Element &&element, std::uint64_t, std::uint64_t) const override
    {
        Tensor &t = element.tensors[m_feature];
        auto shape = resolve(t.count());
        if (!shape.ok())
            return Error::invalid("reshape", "feature \"" + m_output.features[m_feature].name + "\" " + shapeText(t.shape()) + ": " +
                                                 shape.error().reason);
        t = t.reshaped(*shape);
        return std::move(element);
    }

private:
    Result<Shape> resolve(std::uint64_t count) const
    {
        Shape s = m_shape;
        std::uint64_t known = 1;
        for (auto d : s)
            if (d >= 0)
                known *= std::uint64_t(d);
        for (auto &d : s)
            if (d == -1) {
                if (known == 0 || count % known)
                    return Error::invalid("", std::to_string(count) + " values do not fit shape " + shapeText(m_shape));
                d = std::int64_t(count / known);
                known *= std::uint64_t(d);
            }
        if (known != count)
            return Error::invalid("", std::to_string(count) + " values cannot be reshaped to " + shapeText(m_shape));
        return s;
    }
    std::size_t m_feature;
    Shape m_shape;
};

class ConcatFunction final : public MapFunction
{
public:
    ConcatFunction(Params &params, const ElementSpec &input)
    {
        m_inputs = featureIndices(params, "features", input, false);
        if (m_inputs.size() < 2)
            params.fail("features", "concat needs at least two features");
        const std::string name = params.string("name", std::nullopt);
        const auto &first = input.features[m_inputs[0]];
        m_last = 0;
        for (std::size_t i : m_inputs) {
            const auto &f = input.features[i];
            if (f.type != first.type)
                params.fail("features", "\"" + f.name + "\" is " + f.type.name() + " but \"" + first.name + "\" is " + first.type.name() +
                                            " (tf.concat needs one dtype; cast first)");
            if (f.shape.empty() || f.shape.size() != first.shape.size() ||
                !std::equal(f.shape.begin(), f.shape.end() - 1, first.shape.begin()))
                params.fail("features", "\"" + f.name + "\" " + shapeText(f.shape) + " and \"" + first.name + "\" " +
                                            shapeText(first.shape) + " differ in more than the last axis (or are scalars)");
            m_last = (m_last < 0 || f.shape.back() < 0) ? -1 : m_last + f.shape.back();
        }
        m_output = input;
        const bool keep = params.boolean("keep_inputs", true);
        if (!keep) {
            m_output.features.clear();
            for (std::size_t i = 0; i < input.features.size(); ++i)
                if (std::find(m_inputs.begin(), m_inputs.end(), i) == m_inputs.end())
                    m_kept.push_back(i), m_output.features.push_back(input.features[i]);
        } else {
            for (std::size_t i = 0; i < input.features.size(); ++i)
                m_kept.push_back(i);
        }
        if (m_output.find(name))
            params.fail("name", "a feature called \"" + name + "\" already exists");
        FeatureSpec out = first;
        out.name = name;
        out.shape.back() = m_last;
        m_output.features.push_back(out);
    }
    Result<Element> apply(Element &&element, std::uint64_t, std::uint64_t) const override
    {
        const Tensor &first = element.tensors[m_inputs[0]];
        const std::uint64_t rows = first.count() / std::uint64_t(std::max<std::int64_t>(1, first.shape().back()));
        std::int64_t last = 0;
        for (std::size_t i : m_inputs) {
            const Tensor &t = element.tensors[i];
            if (t.count() / std::uint64_t(std::max<std::int64_t>(1, t.shape().back())) != rows)
                return Error::invalid("concat", "features differ in their leading dimensions");
            last += t.shape().back();
        }
        Shape shape = first.shape();
        shape.back() = last;
        Tensor out = Tensor::allocate(first.dtype(), shape);
        const std::size_t item = itemSize(first.dtype());
        std::byte *dst = out.mutableData();
        for (std::uint64_t r = 0; r < rows; ++r)
            for (std::size_t i : m_inputs) {
                const Tensor &t = element.tensors[i];
                const std::size_t bytes = std::size_t(t.shape().back()) * item;
                std::memcpy(dst, t.data() + r * bytes, bytes);
                dst += bytes;
            }
        Element result;
        for (std::size_t i : m_kept)
            result.tensors.push_back(std::move(element.tensors[i]));
        result.tensors.push_back(std::move(out));
        return result;
    }

private:
    std::vector<std::size_t> m_inputs, m_kept;
    std::int64_t m_last = 0;
};

} // namespace

Tensor castTensor(const Tensor &tensor, DType dtype)
{
    if (tensor.dtype() == dtype)
        return tensor;
    Tensor out = Tensor::allocate(dtype, tensor.shape());
    const std::uint64_t n = tensor.count();
    visitDType(tensor.dtype(), [&](auto inTag) {
        using In = decltype(inTag);
        const In *src = tensor.as<In>();
        visitDType(dtype, [&](auto outTag) {
            using Out = decltype(outTag);
            Out *dst = out.mutableAs<Out>();
            if constexpr (std::is_arithmetic_v<In> && std::is_floating_point_v<Out>) {
                for (std::uint64_t i = 0; i < n; ++i)
                    dst[i] = Out(src[i]);
            } else {
                for (std::uint64_t i = 0; i < n; ++i)
                    dst[i] = fromDouble<Out>(toDouble(src[i]));
            }
            return 0;
        });
        return 0;
    });
    return out;
}

const std::vector<MapFunctionInfo> &mapFunctions()
{
    static const std::vector<MapFunctionInfo> functions = [] {
        std::vector<MapFunctionInfo> all{
        {"identity", {}, "returns the element unchanged (tf.identity; measures the cost of a map stage itself)"},
        {"cast", {"features", "dtype"}, "tf.cast of the features (all numeric ones by default) to dtype"},
        {"normalize", {"features", "mean", "std", "adapt_elements"},
         "(x - mean) / std; mean and std are numbers, one per last-axis position, or \"adapt\" (computed over the input like "
         "keras.layers.Normalization.adapt, over at most adapt_elements elements)"},
        {"scale", {"features", "scale", "offset"}, "x * scale + offset (keras.layers.Rescaling)"},
        {"clip", {"features", "clip_value_min", "clip_value_max"}, "tf.clip_by_value"},
        {"one_hot", {"features", "depth", "dtype"}, "tf.one_hot of integer class indices"},
        {"reshape", {"features", "shape"}, "tf.reshape of one feature (shape as the tensor has it, one dimension may be -1)"},
        {"gaussian_noise", {"features", "stddev", "seed"}, "x + N(0, stddev²) noise, reproducible from the seed"},
        {"concat", {"features", "name", "keep_inputs"}, "tf.concat of features along the last axis into a new feature `name`"},
        {"python", {"callable", "output_signature"},
         "a Python function \"module:function\" called with a dict of numpy arrays, returning one (tf.py_function / numpy_function)"},
        };
        for (const auto *more : {&imageMapFunctions(), &categoricalMapFunctions()})
            all.insert(all.end() - 1, more->begin(), more->end()); // python stays last
        return all;
    }();
    return functions;
}

std::unique_ptr<MapFunction> makeMapFunction(const std::string &name, BuildContext &context, Params &params, const Dataset &input)
{
    const ElementSpec &spec = input.spec();
    if (name == "identity") {
        class Identity final : public MapFunction
        {
        public:
            explicit Identity(const ElementSpec &spec) { m_output = spec; }
            Result<Element> apply(Element &&element, std::uint64_t, std::uint64_t) const override { return std::move(element); }
        };
        return std::make_unique<Identity>(spec);
    }
    if (name == "cast")
        return std::make_unique<CastFunction>(params, spec);
    if (name == "normalize")
        return std::make_unique<NormalizeFunction>(context, params, input);
    if (name == "scale")
        return std::make_unique<ScaleFunction>(params, spec);
    if (name == "clip")
        return std::make_unique<ClipFunction>(params, spec);
    if (name == "one_hot")
        return std::make_unique<OneHotFunction>(params, spec);
    if (name == "reshape")
        return std::make_unique<ReshapeFunction>(params, spec);
    if (name == "gaussian_noise")
        return std::make_unique<GaussianNoiseFunction>(context, params, spec);
    if (name == "concat")
        return std::make_unique<ConcatFunction>(params, spec);
    if (name == "python")
        return makeHostMapFunction(context, params, input);
    if (auto image = makeImageMapFunction(name, context, params, spec))
        return image;
    if (auto categorical = makeCategoricalMapFunction(name, context, params, input))
        return categorical;
    std::string known;
    for (const auto &f : mapFunctions())
        known += (known.empty() ? "" : ", ") + f.name;
    params.fail("function", "unknown function \"" + name + "\" (known: " + known + ")");
}

} // namespace sluice::pipeline
