#include "train/model/initializers.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>

namespace sluice::train {
namespace {

// The name train/layers/recurrent/recurrent_internal.h gives the LSTM's unit_forget_bias initializer.
constexpr const char *kLstmUnitForgetBias = "lstm_bias_unit_forget";

using random::splitMixFinal;

struct Fans
{
    double in = 1, out = 1;
};

// keras.src.initializers.random_initializers.compute_fans.
Fans computeFans(const Shape &shape)
{
    if (shape.empty())
        return {};
    if (shape.size() == 1)
        return {double(shape[0]), double(shape[0])};
    double receptive = 1;
    for (std::size_t i = 0; i + 2 < shape.size(); ++i)
        receptive *= double(shape[i]);
    return {double(shape[shape.size() - 2]) * receptive, double(shape.back()) * receptive};
}

enum class FanMode { In, Avg };
enum class Distribution { TruncatedNormal, Uniform };

// keras.initializers.VarianceScaling.
void varianceScaling(double scale, FanMode mode, Distribution dist, const Shape &shape, CounterRng &rng, std::span<float> out)
{
    const Fans fans = computeFans(shape);
    const double fan = mode == FanMode::In ? fans.in : (fans.in + fans.out) / 2.0;
    scale /= std::max(1.0, fan);
    if (dist == Distribution::Uniform) {
        const double limit = std::sqrt(3.0 * scale);
        for (auto &v : out)
            v = float((2.0 * double(rng.uniform()) - 1.0) * limit);
        return;
    }
    // Normal truncated at two standard deviations (redrawn beyond), its stddev corrected so that
    // the truncated distribution has variance `scale`: .87962566103423978 is the stddev of a
    // standard normal truncated to (-2, 2).
    const double stddev = std::sqrt(scale) / 0.87962566103423978;
    for (auto &v : out) {
        float z = rng.normal();
        while (std::abs(z) >= 2.0f)
            z = rng.normal();
        v = float(z * stddev);
    }
}

// keras.initializers.Orthogonal(gain=1): a normal (max(r, c), min(r, c)) matrix, r = product of
// all but the last dimension, c = the last; Q of its QR decomposition with diag(R) made
// positive (modified Gram-Schmidt in double, which yields exactly that Q), transposed when r < c.
Status orthogonal(const std::string &paramName, const Shape &shape, CounterRng &rng, std::span<float> out)
{
    if (shape.size() < 2)
        return Error::invalid(paramName, "the orthogonal initializer needs a shape with at least 2 dimensions, got " + shapeString(shape));
    const std::int64_t cols = shape.back();
    const std::int64_t rows = shapeCount(shape) / std::max<std::int64_t>(cols, 1);
    if (rows == 0 || cols == 0)
        return Status::success();
    const std::int64_t n = std::max(rows, cols), m = std::min(rows, cols);
    std::vector<double> a(std::size_t(n * m)); // n x m, row-major
    for (auto &v : a)
        v = rng.normal();
    for (std::int64_t j = 0; j < m; ++j) {
        // Twice against the earlier columns ("twice is enough"), then normalised.
        for (int pass = 0; pass < 2; ++pass)
            for (std::int64_t k = 0; k < j; ++k) {
                double dot = 0;
                for (std::int64_t i = 0; i < n; ++i)
                    dot += a[std::size_t(i * m + k)] * a[std::size_t(i * m + j)];
                for (std::int64_t i = 0; i < n; ++i)
                    a[std::size_t(i * m + j)] -= dot * a[std::size_t(i * m + k)];
            }
        double norm = 0;
        for (std::int64_t i = 0; i < n; ++i)
            norm += a[std::size_t(i * m + j)] * a[std::size_t(i * m + j)];
        norm = std::sqrt(norm);
        for (std::int64_t i = 0; i < n; ++i)
            a[std::size_t(i * m + j)] /= norm;
    }
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c)
            out[std::size_t(r * cols + c)] = float(rows >= cols ? a[std::size_t(r * m + c)] : a[std::size_t(c * m + r)]);
    return Status::success();
}

struct InitializerEntry
{
    const char *name;
    std::function<Status(const std::string &, const Shape &, CounterRng &, std::span<float>)> fill;
};

Status fillWith(std::span<float> out, const std::function<float()> &next)
{
    for (auto &v : out)
        v = next();
    return Status::success();
}

const std::vector<InitializerEntry> &entries()
{
    using D = Distribution;
    using M = FanMode;
    auto scaling = [](double scale, M mode, D dist) {
        return [=](const std::string &, const Shape &shape, CounterRng &rng, std::span<float> out) {
            varianceScaling(scale, mode, dist, shape, rng, out);
            return Status::success();
        };
    };
    static const std::vector<InitializerEntry> all = {
        {"glorot_uniform", scaling(1.0, M::Avg, D::Uniform)},
        {"glorot_normal", scaling(1.0, M::Avg, D::TruncatedNormal)},
        {"he_uniform", scaling(2.0, M::In, D::Uniform)},
        {"he_normal", scaling(2.0, M::In, D::TruncatedNormal)},
        {"lecun_uniform", scaling(1.0, M::In, D::Uniform)},
        {"lecun_normal", scaling(1.0, M::In, D::TruncatedNormal)},
        {"orthogonal", orthogonal},
        {"zeros", [](auto &, auto &, auto &, std::span<float> out) { return fillWith(out, [] { return 0.0f; }); }},
        {"ones", [](auto &, auto &, auto &, std::span<float> out) { return fillWith(out, [] { return 1.0f; }); }},
        {"random_normal", [](auto &, auto &, CounterRng &rng, std::span<float> out) { return fillWith(out, [&] { return 0.05f * rng.normal(); }); }},
        {"random_uniform",
         [](auto &, auto &, CounterRng &rng, std::span<float> out) { return fillWith(out, [&] { return 0.1f * rng.uniform() - 0.05f; }); }},
        // Keras's alias of RandomUniform(-0.05, 0.05), Embedding's default.
        {"uniform", [](auto &, auto &, CounterRng &rng, std::span<float> out) { return fillWith(out, [&] { return 0.1f * rng.uniform() - 0.05f; }); }},
        // LSTM's bias (4 * units,) with unit_forget_bias (train/layers/recurrent/lstm.cpp): zeros, except
        // ones for the forget gate's slice [units, 2 * units).
        {"lstm_bias_unit_forget",
         [](const std::string &param, const Shape &shape, CounterRng &, std::span<float> out) {
             if (shape.size() != 1 || shape[0] % 4 != 0)
                 return Status(Error::invalid(param, "the lstm_bias_unit_forget initializer needs a shape (4 * units,), got " + shapeString(shape)));
             const auto units = std::ptrdiff_t(shape[0] / 4);
             std::fill(out.begin(), out.end(), 0.0f);
             std::fill(out.begin() + units, out.begin() + 2 * units, 1.0f);
             return Status::success();
         }},
    };
    return all;
}

} // namespace

const std::vector<std::string> &knownInitializers()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        // The LSTM's own bias initializer is for the layer to ask for, not for users to pick.
        for (const auto &e : entries())
            if (std::string(e.name) != kLstmUnitForgetBias)
                n.push_back(e.name);
        return n;
    }();
    return names;
}

Status initialize(const std::string &initializer, const Shape &shape, std::uint64_t seed, const std::string &paramName, std::span<float> out)
{
    if (std::any_of(shape.begin(), shape.end(), [](std::int64_t d) { return d < 0; }))
        return Error::invalid(paramName, "cannot initialize a parameter of unknown shape " + shapeString(shape));
    if (std::int64_t(out.size()) != shapeCount(shape))
        return Error::invalid(paramName, "initializer given " + std::to_string(out.size()) + " values for shape " + shapeString(shape));
    if (initializer == kLstmUnitForgetBias) {
        // Keras's LSTM bias with unit_forget_bias: zeros, except ones for the forget gate, the
        // second of the four gate slices (i, f, c, o). Internal: chosen by the LSTM, not listed.
        if (shape.size() != 1 || shape[0] % 4 != 0)
            return Error::invalid(paramName, "the LSTM forget-gate bias initializer needs a shape (4 * units,), got " + shapeString(shape));
        const std::size_t units = std::size_t(shape[0] / 4);
        for (std::size_t i = 0; i < out.size(); ++i)
            out[i] = i >= units && i < 2 * units ? 1.0f : 0.0f;
        return Status::success();
    }
    for (const auto &e : entries()) {
        if (initializer != e.name)
            continue;
        CounterRng rng(seed, hashString(paramName));
        return e.fill(paramName, shape, rng, out);
    }
    std::string list;
    for (const auto &n : knownInitializers())
        list += (list.empty() ? "" : ", ") + n;
    return Error::invalid(paramName, "unknown initializer '" + initializer + "' (known: " + list + ")");
}

CounterRng::CounterRng(std::uint64_t seed, std::uint64_t stream) : m_state(mixHash(seed, stream)) {}

std::uint64_t CounterRng::nextU64()
{
    m_state += random::kGolden;
    return splitMixFinal(m_state);
}

float CounterRng::uniform()
{
    // 24 bits: every value exactly representable, never 1.
    return float(nextU64() >> 40) * 0x1.0p-24f;
}

float CounterRng::normal()
{
    // Box-Muller in double; the second value of the pair is dropped, keeping the generator a
    // single counter.
    const double u1 = double((nextU64() >> 11) + 1) * 0x1.0p-53; // (0, 1]
    const double u2 = double(nextU64() >> 11) * 0x1.0p-53;       // [0, 1)
    return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
}

std::uint64_t hashString(const std::string &s)
{
    std::uint64_t h = 0xCBF29CE484222325ull; // FNV-1a, then mixed
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001B3ull;
    }
    return splitMixFinal(h);
}

} // namespace sluice::train
