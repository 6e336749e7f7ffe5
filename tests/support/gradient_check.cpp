#include "support/gradient_check.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace sluice::test {

train::FloatTensor randomTensor(train::Shape shape, unsigned seed, float lo, float hi)
{
    train::FloatTensor t(std::move(shape));
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (auto &v : t.data)
        v = dist(gen);
    return t;
}

QString GradientCheck::text() const
{
    return QString("relative error %1 at element %2: analytic %3, finite difference %4")
        .arg(maxRelativeError)
        .arg(worstIndex)
        .arg(analytic)
        .arg(numeric);
}

GradientCheck checkGradient(std::span<float> values, std::span<const float> analytic, const std::function<double()> &f, float epsilon,
                            std::size_t maxProbes)
{
    GradientCheck result;
    const std::size_t n = values.size();
    const std::size_t stride = std::max<std::size_t>(1, n / std::max<std::size_t>(1, maxProbes));
    for (std::size_t i = 0; i < n; i += stride) {
        const float saved = values[i];
        values[i] = saved + epsilon;
        const double up = f();
        values[i] = saved - epsilon;
        const double down = f();
        values[i] = saved;
        const double numeric = (up - down) / (2.0 * double(epsilon));
        const double a = analytic[i];
        const double err = std::abs(a - numeric) / std::max(1e-2, std::abs(a) + std::abs(numeric));
        if (err > result.maxRelativeError || i == 0) {
            result.maxRelativeError = std::max(result.maxRelativeError, err);
            if (err >= result.maxRelativeError) {
                result.worstIndex = i;
                result.analytic = a;
                result.numeric = numeric;
            }
        }
    }
    return result;
}

} // namespace sluice::test
