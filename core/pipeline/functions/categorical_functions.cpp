// hashing, bucketize and discretize (lookup is in lookup_function.cpp), and what the
// categorical functions share: salts, TensorFlow's integer text, tokens from JSON, adapt passes.
#include "pipeline/functions/categorical_functions.h"

#include "pipeline/engine/dtype_dispatch.h"
#include "pipeline/functions/quantile_summary.h"
#include "pipeline/engine/runtime.h"
#include "pipeline/functions/string_hash.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

namespace sluice::pipeline {
namespace {

// A decimal integer in `buffer`, as tf.strings.as_string writes it (bool: "true"/"false").
template <typename T>
std::string_view decimal(T value, char (&buffer)[24])
{
    if constexpr (std::is_same_v<T, bool>)
        return value ? "true" : "false";
    else {
        const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
        return {buffer, std::size_t(end - buffer)};
    }
}

// tf.cast(float → int64) on x86, which Keras's Hashing applies to floats before hashing them:
// truncation toward zero, and INT64_MIN (the instruction's "indefinite" value) for NaN,
// infinities and values out of range.
std::int64_t truncateToInt64(double v)
{
    return v >= -0x1p63 && v < 0x1p63 ? std::int64_t(v) : std::numeric_limits<std::int64_t>::min();
}

// double → float32 rounded to nearest, with overflow to ±infinity spelled out (a plain cast of
// an out-of-range double is undefined behaviour).
float toFloat32(double v)
{
    if (std::abs(v) >= 0x1.ffffffp127) // rounds up past FLT_MAX
        return std::copysign(std::numeric_limits<float>::infinity(), float(v > 0 ? 1 : -1));
    if (std::abs(v) > double(std::numeric_limits<float>::max()))
        return std::copysign(std::numeric_limits<float>::max(), float(v > 0 ? 1 : -1));
    return float(v);
}

std::string jsonDump(const nlohmann::json &value)
{
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// keras.layers.Hashing(num_bins, mask_value, salt), output_mode "int".
class HashingFunction final : public MapFunction
{
public:
    HashingFunction(Params &params, const ElementSpec &input)
    {
        m_features = featureIndices(params, "features", input, false, false);
        m_bins = std::uint64_t(params.integer("num_bins", std::nullopt, 1));
        m_salt = saltParam(params);
        m_output = input;
        const nlohmann::json *mask = params.raw("mask_value");
        for (std::size_t f : m_features) {
            const FeatureSpec &spec = input.features[f];
            Mask m;
            // Keras reserves bin 0 for the mask only when there is more than one bin.
            m.active = mask && m_bins > 1;
            if (mask) {
                const bool ok = spec.type.isString ? bool(m.text = jsonText(*mask))
                                : isFloating(spec.type.dtype)
                                    ? bool(m.number = jsonNumber(*mask))
                                    : bool(m.integer = jsonInteger(*mask));
                if (!ok)
                    params.fail("mask_value", jsonDump(*mask) + " is not a value of \"" + spec.name + "\" (" + spec.type.name() + ")");
                // tf.equal compares in the feature's dtype: the mask is rounded to it first.
                if (m.number)
                    visitDType(spec.type.dtype, [&](auto tag) { m.number = toDouble(fromDouble<decltype(tag)>(*m.number)); });
            }
            m_masks.push_back(m);
            m_output.features[f].type = {DType::Int64, false};
        }
    }

    Result<Element> apply(Element &&element, std::uint64_t, std::uint64_t) const override
    {
        for (std::size_t k = 0; k < m_features.size(); ++k) {
            const std::size_t f = m_features[k];
            const Mask &mask = m_masks[k];
            const Tensor &in = element.tensors[f];
            Tensor out = Tensor::allocate(DType::Int64, in.shape());
            std::int64_t *dst = out.mutableAs<std::int64_t>();
            const std::uint64_t n = in.count();
            const std::uint64_t bins = mask.active ? m_bins - 1 : m_bins;
            const std::int64_t shift = mask.active ? 1 : 0; // the others start after the mask's 0
            if (in.isString()) {
                const auto &values = in.stringValues();
                for (std::uint64_t i = 0; i < n; ++i)
                    dst[i] = mask.active && values[i] == *mask.text ? 0 : bucket(values[i], bins) + shift;
            } else {
                visitDType(in.dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const T *src = in.as<T>();
                    char buffer[24];
                    for (std::uint64_t i = 0; i < n; ++i) {
                        bool masked = false;
                        std::string_view text;
                        if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Float16>) {
                            masked = mask.active && toDouble(src[i]) == *mask.number;
                            text = decimal(truncateToInt64(toDouble(src[i])), buffer);
                        } else {
                            if constexpr (std::is_same_v<T, bool>)
                                masked = mask.active && std::cmp_equal(int(src[i]), *mask.integer);
                            else
                                masked = mask.active && std::cmp_equal(src[i], *mask.integer);
                            text = decimal(src[i], buffer);
                        }
                        dst[i] = masked ? 0 : bucket(text, bins) + shift;
                    }
                });
            }
            element.tensors[f] = std::move(out);
        }
        return std::move(element);
    }

private:
    struct Mask
    {
        bool active = false;
        std::optional<std::string> text;     // string features
        std::optional<std::int64_t> integer; // integer features
        std::optional<double> number;        // float features, rounded to their dtype
    };
    std::int64_t bucket(std::string_view text, std::uint64_t bins) const
    {
        return m_salt ? hashBucketStrong(text, bins, (*m_salt)[0], (*m_salt)[1]) : hashBucketFast(text, bins);
    }
    static std::optional<double> jsonNumber(const nlohmann::json &value)
    {
        if (value.is_number())
            return value.get<double>();
        if (!value.is_string())
            return std::nullopt;
        const std::string text = value.get<std::string>();
        double v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        return ec == std::errc() && end == text.data() + text.size() && !text.empty() ? std::optional<double>(v) : std::nullopt;
    }

    std::vector<std::size_t> m_features;
    std::vector<Mask> m_masks;
    std::uint64_t m_bins = 1;
    std::optional<std::array<std::uint64_t, 2>> m_salt;
};

// The bucket of each value among sorted float32 boundaries: the index of the first boundary
// above it (std::upper_bound, as TensorFlow's Bucketize kernel), NaN past the last.
class BucketFunction final : public MapFunction
{
public:
    // `exactFloat64`: float64 values are compared as float64 (tf.raw_ops.Bucketize on a float64
    // tensor); otherwise every value is first made a float32, as Bucketize compares its int32
    // and int64 inputs and as Discretization casts its float inputs.
    BucketFunction(std::vector<std::size_t> features, std::vector<float> boundaries, bool exactFloat64, const ElementSpec &input)
        : m_features(std::move(features)), m_boundaries(std::move(boundaries)), m_exactFloat64(exactFloat64)
    {
        m_output = input;
        for (std::size_t f : m_features)
            m_output.features[f].type = {DType::Int64, false};
    }

    Result<Element> apply(Element &&element, std::uint64_t, std::uint64_t) const override
    {
        for (std::size_t f : m_features) {
            const Tensor &in = element.tensors[f];
            Tensor out = Tensor::allocate(DType::Int64, in.shape());
            std::int64_t *dst = out.mutableAs<std::int64_t>();
            const std::uint64_t n = in.count();
            const auto begin = m_boundaries.begin(), end = m_boundaries.end();
            visitDType(in.dtype(), [&](auto tag) {
                using T = decltype(tag);
                const T *src = in.as<T>();
                for (std::uint64_t i = 0; i < n; ++i) {
                    if constexpr (std::is_same_v<T, double>) {
                        if (m_exactFloat64) {
                            const double v = src[i];
                            dst[i] = std::upper_bound(begin, end, v, [](double x, float b) { return x < double(b); }) - begin;
                            continue;
                        }
                        dst[i] = std::upper_bound(begin, end, toFloat32(src[i])) - begin;
                    } else if constexpr (std::is_same_v<T, Float16>) {
                        dst[i] = std::upper_bound(begin, end, float(src[i])) - begin;
                    } else {
                        dst[i] = std::upper_bound(begin, end, static_cast<float>(src[i])) - begin;
                    }
                }
            });
            element.tensors[f] = std::move(out);
        }
        return std::move(element);
    }

private:
    std::vector<std::size_t> m_features;
    std::vector<float> m_boundaries;
    bool m_exactFloat64;
};

// Boundaries from a parameter as the ops take them: float32, sorted (equal neighbours allowed).
std::vector<float> boundariesParam(Params &params, const std::string &name)
{
    std::vector<float> out;
    for (double v : params.numbers(name, std::nullopt))
        out.push_back(toFloat32(v));
    if (!std::is_sorted(out.begin(), out.end()))
        params.fail(name, "must be sorted in ascending order (as float32 values)");
    return out;
}

std::unique_ptr<MapFunction> makeBucketize(Params &params, const ElementSpec &spec)
{
    auto features = featureIndices(params, "features", spec, false);
    return std::make_unique<BucketFunction>(std::move(features), boundariesParam(params, "boundaries"), true, spec);
}

// keras.layers.Discretization: given bin_boundaries, or num_bins adapted with Keras's summary.
std::unique_ptr<MapFunction> makeDiscretize(BuildContext &context, Params &params, const Dataset &input)
{
    const ElementSpec &spec = input.spec();
    auto features = featureIndices(params, "features", spec, false);
    const bool given = params.has("bin_boundaries");
    if (given == params.has("num_bins"))
        params.fail(given ? "num_bins" : "bin_boundaries",
                    given ? "give bin_boundaries or num_bins (adapted from the input), not both" : "missing: give bin_boundaries, or num_bins to adapt them");
    if (given) {
        for (const char *adaptOnly : {"epsilon", "adapt_elements"})
            if (params.has(adaptOnly))
                params.fail(adaptOnly, "applies only when num_bins is adapted (without bin_boundaries)");
        return std::make_unique<BucketFunction>(std::move(features), boundariesParam(params, "bin_boundaries"), false, spec);
    }
    const std::int64_t numBins = params.integer("num_bins", std::nullopt, 1, 1 << 24);
    const double epsilon = params.number("epsilon", 0.01);
    if (!(epsilon > 0 && epsilon <= 1))
        params.fail("epsilon", "must be in (0, 1]");
    if (features.size() != 1)
        params.fail("features", "adapting bin boundaries works on one feature at a time (use one discretize per feature)");
    const std::string &name = spec.features[features[0]].name;
    QuantileSummary summary(epsilon);
    adaptPass(context, params, input, features[0], "num_bins", [&](const Tensor &t) -> std::optional<std::string> {
        // Keras's update_state: np.array(batch).astype("float32"), integers converted directly.
        std::vector<float> batch(t.count());
        visitDType(t.dtype(), [&](auto tag) {
            using T = decltype(tag);
            const T *src = t.as<T>();
            for (std::size_t i = 0; i < batch.size(); ++i) {
                if constexpr (std::is_same_v<T, double>)
                    batch[i] = toFloat32(src[i]);
                else if constexpr (std::is_same_v<T, Float16>)
                    batch[i] = float(src[i]);
                else
                    batch[i] = static_cast<float>(src[i]);
            }
        });
        if (std::any_of(batch.begin(), batch.end(), [](float v) { return std::isnan(v); }))
            return "feature \"" + name + "\" holds NaN, which Keras's quantile summary cannot place";
        summary.update(std::move(batch));
        return std::nullopt;
    });
    if (summary.empty())
        params.fail("num_bins", "cannot adapt: feature \"" + name + "\" has no values in the input");
    return std::make_unique<BucketFunction>(std::move(features), summary.binBoundaries(numBins), false, spec);
}

} // namespace

std::optional<std::array<std::uint64_t, 2>> saltParam(Params &params)
{
    const nlohmann::json *salt = params.raw("salt");
    if (!salt)
        return std::nullopt;
    // The key is two int64 attributes in TensorFlow: any 64-bit pattern, written signed or not.
    const auto word = [&](const nlohmann::json &v) -> std::uint64_t {
        if (v.is_number_unsigned())
            return v.get<std::uint64_t>();
        if (v.is_number_integer())
            return std::uint64_t(v.get<std::int64_t>());
        params.fail("salt", "must be one integer or a list of two, got " + jsonDump(*salt));
    };
    if (!salt->is_array())
        return std::array<std::uint64_t, 2>{word(*salt), word(*salt)};
    if (salt->empty() || salt->size() > 2)
        params.fail("salt", "must be one integer or a list of two, got " + jsonDump(*salt));
    return std::array<std::uint64_t, 2>{word(salt->front()), word(salt->back())};
}

std::string integerText(const Tensor &tensor, std::uint64_t i)
{
    return visitDType(tensor.dtype(), [&](auto tag) {
        using T = decltype(tag);
        char buffer[24];
        if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Float16>)
            return std::string(decimal(truncateToInt64(toDouble(tensor.as<T>()[i])), buffer));
        else
            return std::string(decimal(tensor.as<T>()[i], buffer));
    });
}

std::optional<std::int64_t> parseInteger(std::string_view text)
{
    const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (!text.empty() && space(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && space(text.back()))
        text.remove_suffix(1);
    if (text.size() > 1 && text.front() == '+' && text[1] != '-')
        text.remove_prefix(1); // from_chars takes no '+'
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return v;
}

std::optional<std::string> jsonText(const nlohmann::json &value)
{
    if (value.is_string())
        return value.get<std::string>();
    if (value.is_number_integer())
        return value.dump();
    return std::nullopt;
}

std::optional<std::int64_t> jsonInteger(const nlohmann::json &value)
{
    if (value.is_number_unsigned())
        return value.get<std::uint64_t>() <= std::uint64_t(INT64_MAX) ? std::optional<std::int64_t>(std::int64_t(value.get<std::uint64_t>()))
                                                                       : std::nullopt;
    if (value.is_number_integer())
        return value.get<std::int64_t>();
    if (value.is_string())
        return parseInteger(value.get<std::string>());
    return std::nullopt;
}

void adaptPass(BuildContext &context, Params &params, const Dataset &input, std::size_t feature, const std::string &param,
               const std::function<std::optional<std::string>(const Tensor &)> &take)
{
    const std::int64_t limit = params.integer("adapt_elements", -1, -1);
    if (limit == 0)
        params.fail("adapt_elements", "must be -1 (all elements) or at least 1");
    if (limit < 0 && input.cardinality() == kInfinite)
        params.fail("adapt_elements", "the input never ends (a repeat without count): set how many elements to adapt over");
    std::uint64_t seen = 0;
    std::optional<std::string> problem;
    Runtime runtime(context.threads());
    const Status status = drain(input, runtime, [&](Element &&e) {
        ++seen;
        problem = take(e.tensors[feature]);
        return !problem && (limit < 0 || std::int64_t(seen) < limit);
    });
    if (!status.ok())
        params.fail(param, "adapting over the input failed: " + status.error().message());
    if (problem)
        params.fail(param, "cannot adapt: " + *problem);
    if (seen == 0)
        params.fail(param, "cannot adapt: the input has no elements");
}

const std::vector<MapFunctionInfo> &categoricalMapFunctions()
{
    static const std::vector<MapFunctionInfo> functions{
        {"hashing", {"features", "num_bins", "mask_value", "salt"},
         "keras.layers.Hashing, output_mode \"int\", bit for bit: each value's text (integers in decimal, floats truncated to int64 "
         "first) hashed with FarmHash Fingerprint64, or with SipHash-2-4 keyed by salt, modulo num_bins; with mask_value, the mask "
         "maps to 0 and the other values to 1…num_bins-1. int64 indices, shape kept"},
        {"lookup", {"features", "vocabulary", "vocabulary_file", "num_oov_indices", "mask_token", "oov_token", "max_tokens", "oov_method", "salt", "adapt_elements"},
         "keras.layers.StringLookup for string features, IntegerLookup for integer ones, output_mode \"int\": mask_token maps to 0, then "
         "num_oov_indices indices for values out of the vocabulary, then the vocabulary in order: a list, a file of one token per line, "
         "or adapted from the input (most frequent first, ties in descending order, at most max_tokens). With several OOV indices "
         "strings are hashed among them as Keras does (FarmHash, SipHash with salt), integers by floor modulo or with oov_method "
         "\"farmhash\" hashed; with none, an unknown value is an error. int64 indices, shape kept"},
        {"bucketize", {"features", "boundaries"},
         "tf.raw_ops.Bucketize: the index of the first of the sorted boundaries (float32) above each value; float64 values are "
         "compared as float64, the others as float32, as TensorFlow does. int64 indices (TensorFlow's are int32), shape kept"},
        {"discretize", {"features", "bin_boundaries", "num_bins", "epsilon", "adapt_elements"},
         "keras.layers.Discretization, output_mode \"int\": the bin of each value (as float32, as Keras casts it) among bin_boundaries, "
         "or among num_bins - 1 boundaries adapted from the input with Keras's approximate quantile summary (epsilon its "
         "tolerance; each input element is one batch of Keras's adapt, so batch before to adapt as over a batched dataset). int64 "
         "indices (Keras's are int32), shape kept"},
    };
    return functions;
}

std::unique_ptr<MapFunction> makeCategoricalMapFunction(const std::string &name, BuildContext &context, Params &params,
                                                        const Dataset &input)
{
    if (name == "hashing")
        return std::make_unique<HashingFunction>(params, input.spec());
    if (name == "lookup")
        return makeLookupFunction(context, params, input);
    if (name == "bucketize")
        return makeBucketize(params, input.spec());
    if (name == "discretize")
        return makeDiscretize(context, params, input);
    return nullptr;
}

} // namespace sluice::pipeline
