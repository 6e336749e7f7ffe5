// GRU / LSTM: their Keras configs, the shape check they share, and the gate arithmetic
// (tanh and sigmoid written with GCC/Clang vector extensions: the build's -O2 does not
// auto-vectorise them, and at typical sizes they cost as much as the recurrent gemm).
#include "train/layers/recurrent.h"

#include "train/cpu/gemm.h"
#include "train/initializers.h"
#include "train/layers/layer_util.h"
#include "train/layers/recurrent_internal.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace sluice::train {

namespace detail {

namespace {

#if defined(__AVX__)
constexpr std::int64_t kLanes = 8;
#else
constexpr std::int64_t kLanes = 4;
#endif
typedef float Vf __attribute__((vector_size(kLanes * sizeof(float))));
typedef std::int32_t Vi __attribute__((vector_size(kLanes * sizeof(float))));

Vf load(const float *p)
{
    Vf v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
void store(float *p, Vf v) { std::memcpy(p, &v, sizeof v); }
Vf splat(float x) { return Vf{} + x; }
Vf select(Vi mask, Vf a, Vf b) { return (Vf)((mask & (Vi)a) | (~mask & (Vi)b)); }

// Cephes expf: e^x = 2^n * e^r with |r| <= ln2 / 2, a degree-7 polynomial for e^r. Arguments
// are clamped to [-87, 88] (the result stays a normal float); NaN passes through.
[[gnu::always_inline]] inline Vf expApprox(Vf x)
{
    x = select(x > splat(88.0f), splat(88.0f), x);
    x = select(x < splat(-87.0f), splat(-87.0f), x);
    constexpr float kRound = 12582912.0f; // 1.5 * 2^23: adding it rounds to an integer
    const Vf shifted = x * 1.44269504088896341f + kRound;
    const Vf n = shifted - kRound;
    const Vi biased = (Vi)shifted - 0x4B400000 + 127; // n + 127, from the bits of `shifted`
    Vf r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    Vf p = splat(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    return p * (Vf)(biased << 23);
}

[[gnu::always_inline]] inline Vf sigmoidApprox(Vf x) { return 1.0f / (1.0f + expApprox(-x)); }

// Cephes tanhf: an odd polynomial below |x| = 0.625, 1 - 2 / (e^2|x| + 1) with x's sign above.
[[gnu::always_inline]] inline Vf tanhApprox(Vf x)
{
    const Vi sign = (Vi)x & std::int32_t(0x80000000u);
    const Vf ax = (Vf)((Vi)x & 0x7fffffff);
    const Vf z = x * x;
    Vf p = splat(-5.70498872745e-3f);
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    const Vf small = p * z * x + x;
    const Vf large = (Vf)((Vi)(1.0f - 2.0f / (expApprox(ax + ax) + 1.0f)) | sign);
    return select(ax < splat(0.625f), small, large);
}

// x[i] = op(x[i]); the tail goes through a zero-padded block so every value is computed alike.
template <class Op>
void mapInPlace(float *x, std::int64_t n, Op op)
{
    std::int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes)
        store(x + j, op(load(x + j)));
    if (j < n) {
        float tail[kLanes] = {};
        std::copy(x + j, x + n, tail);
        store(tail, op(load(tail)));
        std::copy(tail, tail + (n - j), x + j);
    }
}

// d[i] *= op(y[i]).
template <class Op>
void scaleBy(const float *y, float *d, std::int64_t n, Op op)
{
    std::int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes)
        store(d + j, load(d + j) * op(load(y + j)));
    if (j < n) {
        float ty[kLanes] = {}, td[kLanes] = {};
        std::copy(y + j, y + n, ty);
        std::copy(d + j, d + n, td);
        store(td, load(td) * op(load(ty)));
        std::copy(td, td + (n - j), d + j);
    }
}

} // namespace

void activate(GateActivation kind, float *x, std::int64_t n)
{
    // Lambdas, not function pointers: each instantiation inlines its function.
    if (kind == GateActivation::Tanh)
        mapInPlace(x, n, [](Vf v) { return tanhApprox(v); });
    else
        mapInPlace(x, n, [](Vf v) { return sigmoidApprox(v); });
}

void scaleByDerivative(GateActivation kind, const float *y, float *d, std::int64_t n)
{
    if (kind == GateActivation::Tanh)
        scaleBy(y, d, n, [](Vf v) { return 1.0f - v * v; });
    else
        scaleBy(y, d, n, [](Vf v) { return v * (1.0f - v); });
}

void addToRows(float *m, std::int64_t rows, std::int64_t cols, const float *v)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        float *row = m + r * cols;
        std::int64_t c = 0;
        for (; c + kLanes <= cols; c += kLanes)
            store(row + c, load(row + c) + load(v + c));
        for (; c < cols; ++c)
            row[c] += v[c];
    }
}

void addColumnSums(const float *m, std::int64_t rows, std::int64_t cols, float *out)
{
    for (std::int64_t r = 0; r < rows; ++r) {
        const float *row = m + r * cols;
        std::int64_t c = 0;
        for (; c + kLanes <= cols; c += kLanes)
            store(out + c, load(out + c) + load(row + c));
        for (; c < cols; ++c)
            out[c] += row[c];
    }
}

void writeOutput(const float *states, std::int64_t B, std::int64_t T, std::int64_t U, bool returnSequences, FloatTensor &output)
{
    if (!returnSequences) {
        output.resize({B, U});
        std::copy(states + T * B * U, states + (T + 1) * B * U, output.ptr());
        return;
    }
    output.resize({B, T, U});
    for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t b = 0; b < B; ++b) {
            const float *h = states + ((t + 1) * B + b) * U;
            std::copy(h, h + U, output.ptr() + (b * T + t) * U);
        }
}

void weightAndInputGradients(const float *x, const float *dXW, const float *states, const float *dRec, std::int64_t B, std::int64_t T,
                             std::int64_t F, std::int64_t U, std::int64_t G, const float *kernel, float *dKernel, float *dRecurrent,
                             FloatTensor *dX)
{
    if (dX)
        dX->resize({B, T, F});
    if (B == 0)
        return;
    cpu::gemm(true, false, F, G, B * T, 1.0f, x, F, dXW, G, 1.0f, dKernel, G);
    // h_{-1} is zero: step 0 adds nothing to the recurrent kernel's gradient.
    if (T > 1)
        cpu::gemm(true, false, U, G, (T - 1) * B, 1.0f, states + B * U, U, dRec + B * G, G, 1.0f, dRecurrent, G);
    if (dX)
        cpu::gemm(false, true, B * T, F, G, 1.0f, dXW, G, kernel, G, 0.0f, dX->ptr(), F);
}

Result<std::pair<std::int64_t, std::int64_t>> sequenceInputShape(const Layer &layer, const std::vector<Shape> &inputShapes)
{
    if (auto s = expectInputs(layer, inputShapes, 1); !s)
        return s.error();
    const Shape &in = inputShapes[0];
    if (in.size() != 2)
        return layerError(layer, "expects inputs of shape (timesteps, features), got " + shapeString(in));
    if (in[0] <= 0)
        return layerError(layer, "needs a known number of timesteps, got inputs of shape " + shapeString(in));
    if (in[1] <= 0)
        return layerError(layer, "needs a known, non-zero number of features, got inputs of shape " + shapeString(in));
    return std::pair{in[0], in[1]};
}

} // namespace detail

namespace {

using detail::GateActivation;
using detail::RecurrentOptions;

// Reads a recurrent layer's Keras config, remembering the first problem.
class ConfigReader
{
public:
    ConfigReader(const std::string &layerName, const nlohmann::json &config) : m_name(layerName), m_config(config) {}

    Status checkKeys(const std::vector<std::string> &known)
    {
        if (!m_config.is_null() && !m_config.is_object())
            return Error::invalid(m_name, "expects its parameters as a JSON object, got " + m_config.dump());
        if (m_config.is_null())
            return Status::success();
        for (const auto &[key, value] : m_config.items()) {
            if (std::find(known.begin(), known.end(), key) != known.end())
                continue;
            std::string list;
            for (const auto &k : known)
                list += (list.empty() ? "" : ", ") + k;
            return Error::invalid(m_name, "unknown parameter '" + key + "' (known: " + list + ")");
        }
        return Status::success();
    }

    void positiveInteger(const char *key, std::int64_t &out)
    {
        const nlohmann::json *v = find(key);
        if (!v) {
            fail(std::string("needs the parameter '") + key + "' (a positive integer)");
            return;
        }
        if (!v->is_number_integer() || v->get<std::int64_t>() <= 0)
            return fail(key, "a positive integer", *v);
        out = v->get<std::int64_t>();
    }

    void boolean(const char *key, bool &out)
    {
        if (const nlohmann::json *v = find(key)) {
            if (!v->is_boolean())
                return fail(key, "true or false", *v);
            out = v->get<bool>();
        }
    }

    void initializer(const char *key, std::string &out)
    {
        if (const nlohmann::json *v = find(key)) {
            const auto &known = knownInitializers();
            if (!v->is_string() || std::find(known.begin(), known.end(), v->get<std::string>()) == known.end()) {
                std::string list;
                for (const auto &k : known)
                    list += (list.empty() ? "" : ", ") + k;
                return fail(key, "an initializer name (" + list + ")", *v);
            }
            out = v->get<std::string>();
        }
    }

    void activation(const char *key, GateActivation &out)
    {
        if (const nlohmann::json *v = find(key)) {
            if (v->is_string() && v->get<std::string>() == "tanh")
                out = GateActivation::Tanh;
            else if (v->is_string() && v->get<std::string>() == "sigmoid")
                out = GateActivation::Sigmoid;
            else
                fail(key, "\"tanh\" or \"sigmoid\" (the activations recurrent layers support)", *v);
        }
    }

    // A condition on values already read.
    void require(bool ok, const std::string &reason)
    {
        if (!ok)
            fail(reason);
    }

    Status status() const { return m_error ? Status(*m_error) : Status::success(); }

private:
    const nlohmann::json *find(const char *key) const
    {
        if (!m_config.is_object())
            return nullptr;
        auto it = m_config.find(key);
        return it == m_config.end() ? nullptr : &*it;
    }
    void fail(const char *key, const std::string &expected, const nlohmann::json &got)
    {
        fail(std::string("parameter '") + key + "' must be " + expected + ", got " + got.dump());
    }
    void fail(const std::string &reason)
    {
        if (!m_error)
            m_error = Error::invalid(m_name, reason);
    }

    const std::string &m_name;
    const nlohmann::json &m_config;
    std::optional<Error> m_error;
};

// What GRU and LSTM share: units, activations, use_bias, return_sequences, initializers.
void readCommon(ConfigReader &reader, RecurrentOptions &opt)
{
    reader.positiveInteger("units", opt.units);
    reader.activation("activation", opt.activation);
    reader.activation("recurrent_activation", opt.recurrentActivation);
    reader.boolean("use_bias", opt.useBias);
    reader.boolean("return_sequences", opt.returnSequences);
    reader.initializer("kernel_initializer", opt.kernelInitializer);
    reader.initializer("recurrent_initializer", opt.recurrentInitializer);
    reader.initializer("bias_initializer", opt.biasInitializer);
}

const std::vector<std::string> kCommonKeys = {"units",           "activation",         "recurrent_activation",  "use_bias",
                                              "return_sequences", "kernel_initializer", "recurrent_initializer", "bias_initializer"};

std::vector<std::string> keysWith(const char *extra)
{
    std::vector<std::string> keys = kCommonKeys;
    keys.emplace_back(extra);
    return keys;
}

} // namespace

Result<std::unique_ptr<Layer>> createGru(const std::string &name, const nlohmann::json &config)
{
    ConfigReader reader(name, config);
    if (auto s = reader.checkKeys(keysWith("reset_after")); !s)
        return s.error();
    RecurrentOptions opt;
    readCommon(reader, opt);
    bool resetAfter = true;
    reader.boolean("reset_after", resetAfter);
    reader.require(resetAfter, "parameter 'reset_after' must be true: only the Keras 2+ default GRU (reset gate applied after the "
                               "recurrent product, bias of shape (2, 3 * units)) is implemented");
    if (auto s = reader.status(); !s)
        return s.error();
    return detail::makeGru(name, std::move(opt));
}

Result<std::unique_ptr<Layer>> createLstm(const std::string &name, const nlohmann::json &config)
{
    ConfigReader reader(name, config);
    if (auto s = reader.checkKeys(keysWith("unit_forget_bias")); !s)
        return s.error();
    RecurrentOptions opt;
    readCommon(reader, opt);
    reader.boolean("unit_forget_bias", opt.unitForgetBias);
    // Keras initialises the forget slice with ones and the rest with bias_initializer; only the
    // constant initializers give a whole-vector initializer for that.
    reader.require(!opt.useBias || !opt.unitForgetBias || opt.biasInitializer == "zeros" || opt.biasInitializer == "ones",
                   "unit_forget_bias needs bias_initializer \"zeros\" or \"ones\", got \"" + opt.biasInitializer +
                       "\" (set unit_forget_bias to false to use it)");
    if (auto s = reader.status(); !s)
        return s.error();
    return detail::makeLstm(name, std::move(opt));
}

} // namespace sluice::train
