#include "train/model/activations.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sluice::train {
namespace {

constexpr float kInvSqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;

float sigmoid(float x)
{
    // Never exponentiates a large positive number.
    if (x >= 0.0f)
        return 1.0f / (1.0f + std::exp(-x));
    const float e = std::exp(x);
    return e / (1.0f + e);
}

// ReLU without a branch per element (random signs mispredict about half of them), four at a
// time where SSE2 is there (all x86-64). Bit for bit what the scalar loops give:
// max(0, x) as _mm_max_ps(0, x) keeps x where !(0 > x), as std::max(x, 0.0f) does (NaN, -0).
void reluForward(const float *x, float *y, std::int64_t count)
{
    std::int64_t i = 0;
#if defined(__SSE2__)
    const __m128 zero = _mm_setzero_ps();
    for (; i + 4 <= count; i += 4)
        _mm_storeu_ps(y + i, _mm_max_ps(zero, _mm_loadu_ps(x + i)));
#endif
    for (; i < count; ++i)
        y[i] = std::max(x[i], 0.0f);
}

// dx = y > 0 ? dy : 0 (dx may alias dy).
void reluBackward(const float *y, const float *dy, float *dx, std::int64_t count)
{
    std::int64_t i = 0;
#if defined(__SSE2__)
    const __m128 zero = _mm_setzero_ps();
    for (; i + 4 <= count; i += 4)
        _mm_storeu_ps(dx + i, _mm_and_ps(_mm_cmpgt_ps(_mm_loadu_ps(y + i), zero), _mm_loadu_ps(dy + i)));
#endif
    for (; i < count; ++i)
        dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void softmaxRows(const float *x, float *y, std::int64_t rows, std::int64_t rowSize)
{
    for (std::int64_t r = 0; r < rows; ++r)
        softmaxRow(x + r * rowSize, rowSize, y + r * rowSize);
}

} // namespace

const std::vector<std::string> &knownActivations()
{
    static const std::vector<std::string> names = {"linear", "relu", "gelu", "tanh", "sigmoid", "softmax"};
    return names;
}

Result<ActivationKind> parseActivation(const std::string &name)
{
    if (name.empty() || name == "linear")
        return ActivationKind::Linear;
    if (name == "relu")
        return ActivationKind::Relu;
    if (name == "gelu")
        return ActivationKind::Gelu;
    if (name == "tanh")
        return ActivationKind::Tanh;
    if (name == "sigmoid")
        return ActivationKind::Sigmoid;
    if (name == "softmax")
        return ActivationKind::Softmax;
    std::string list;
    for (const auto &n : knownActivations())
        list += (list.empty() ? "" : ", ") + n;
    return Error::invalid("activation", "unknown activation '" + name + "' (known: " + list + ")");
}

bool activationNeedsInput(ActivationKind kind) { return kind == ActivationKind::Gelu; }

void activationForward(ActivationKind kind, const float *x, float *y, std::int64_t count, std::int64_t rowSize)
{
    switch (kind) {
    case ActivationKind::Linear:
        if (x != y && count > 0)
            std::memmove(y, x, std::size_t(count) * sizeof(float));
        return;
    case ActivationKind::Relu:
        reluForward(x, y, count);
        return;
    case ActivationKind::Gelu:
        for (std::int64_t i = 0; i < count; ++i)
            y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * kInvSqrt2));
        return;
    case ActivationKind::Tanh:
        for (std::int64_t i = 0; i < count; ++i)
            y[i] = std::tanh(x[i]);
        return;
    case ActivationKind::Sigmoid:
        for (std::int64_t i = 0; i < count; ++i)
            y[i] = sigmoid(x[i]);
        return;
    case ActivationKind::Softmax:
        if (rowSize > 0)
            softmaxRows(x, y, count / rowSize, rowSize);
        return;
    }
}

void activationBackward(ActivationKind kind, const float *x, const float *y, const float *dy, float *dx, std::int64_t count, std::int64_t rowSize)
{
    switch (kind) {
    case ActivationKind::Linear:
        if (dx != dy && count > 0)
            std::memmove(dx, dy, std::size_t(count) * sizeof(float));
        return;
    case ActivationKind::Relu: // y > 0 exactly where x > 0
        reluBackward(y, dy, dx, count);
        return;
    case ActivationKind::Gelu: // d/dx x*Phi(x) = Phi(x) + x*phi(x)
        for (std::int64_t i = 0; i < count; ++i) {
            const float v = x[i];
            const float cdf = 0.5f * (1.0f + std::erf(v * kInvSqrt2));
            const float pdf = kInvSqrt2Pi * std::exp(-0.5f * v * v);
            dx[i] = dy[i] * (cdf + v * pdf);
        }
        return;
    case ActivationKind::Tanh:
        for (std::int64_t i = 0; i < count; ++i)
            dx[i] = dy[i] * (1.0f - y[i] * y[i]);
        return;
    case ActivationKind::Sigmoid:
        for (std::int64_t i = 0; i < count; ++i)
            dx[i] = dy[i] * y[i] * (1.0f - y[i]);
        return;
    case ActivationKind::Softmax: // dx = y * (dy - <dy, y>) per row
        if (rowSize <= 0)
            return;
        for (std::int64_t r = 0; r < count / rowSize; ++r) {
            const float *yr = y + r * rowSize, *dyr = dy + r * rowSize;
            float *dxr = dx + r * rowSize;
            double dot = 0;
            for (std::int64_t i = 0; i < rowSize; ++i)
                dot += double(dyr[i]) * yr[i];
            for (std::int64_t i = 0; i < rowSize; ++i)
                dxr[i] = yr[i] * (dyr[i] - float(dot));
        }
        return;
    }
}

double softmaxRow(const float *x, std::int64_t count, float *out)
{
    const float top = *std::max_element(x, x + count);
    double sum = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        out[i] = std::exp(x[i] - top);
        sum += out[i];
    }
    const float inv = float(1.0 / sum);
    for (std::int64_t i = 0; i < count; ++i)
        out[i] *= inv;
    return double(top) + std::log(sum);
}

} // namespace sluice::train
