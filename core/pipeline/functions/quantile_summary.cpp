// Keras's summary arithmetic in Keras's types: values and weights are float32 arrays, the
// cumulative weights a float32 cumsum, the interpolation numpy's np.interp in float64.
#include "pipeline/functions/quantile_summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sluice::pipeline {
namespace {

// a * b + c rounded twice, as numpy's loops compute it: a compiler allowed to contract the two
// into one fused multiply-add (GCC does by default where the target has FMA) would round once
// and move a boundary by an ulp. The volatile product is what stops it, portably.
double mulAdd(double a, double b, double c)
{
    volatile double product = a * b;
    return product + c;
}

// np.interp(x, xp, fp) for non-decreasing xp, as numpy's compiled loop computes it: the point
// j is the last with xp[j] <= x; outside [xp[0], xp[n-1]] the end values.
double interp(double x, const std::vector<double> &xp, const std::vector<double> &fp)
{
    const std::size_t n = xp.size();
    if (std::isnan(x))
        return x;
    if (x < xp[0])
        return fp[0];
    if (x > xp[n - 1])
        return fp[n - 1];
    const std::size_t j = std::size_t(std::upper_bound(xp.begin(), xp.end(), x) - xp.begin()) - 1;
    if (j == n - 1 || xp[j] == x)
        return fp[j];
    const double slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
    double result = mulAdd(slope, x - xp[j], fp[j]);
    if (std::isnan(result)) { // numpy tries from the other end before giving up
        result = mulAdd(slope, x - xp[j + 1], fp[j + 1]);
        if (std::isnan(result) && fp[j] == fp[j + 1])
            result = fp[j];
    }
    return result;
}

} // namespace

void QuantileSummary::update(std::vector<float> batch)
{
    // summarize(): every step-th sorted value, each standing for `step` values.
    std::sort(batch.begin(), batch.end());
    const double increment = double(batch.size()) / (1.0 / m_epsilon);
    const double step = std::max(increment, 1.0);
    const auto first = std::size_t(step - 1), stride = std::size_t(step);
    Points merged;
    for (std::size_t i = first; i < batch.size(); i += stride) {
        merged.values.push_back(batch[i]);
        merged.weights.push_back(float(step)); // np.ones_like(float32) * step stays float32
    }
    // merge_summaries(new, running): concatenated in that order, sorted by value.
    merged.values.insert(merged.values.end(), m_summary.values.begin(), m_summary.values.end());
    merged.weights.insert(merged.weights.end(), m_summary.weights.begin(), m_summary.weights.end());
    std::vector<std::size_t> order(merged.values.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return merged.values[a] < merged.values[b]; });
    Points sorted;
    sorted.values.reserve(order.size());
    sorted.weights.reserve(order.size());
    for (std::size_t i : order) {
        sorted.values.push_back(merged.values[i]);
        sorted.weights.push_back(merged.weights[i]);
    }
    m_summary = compress(std::move(sorted), m_epsilon);
}

std::vector<float> QuantileSummary::binBoundaries(std::int64_t numBins) const
{
    Points bins = compress(m_summary, 1.0 / double(numBins));
    if (!bins.values.empty())
        bins.values.pop_back();
    return bins.values;
}

QuantileSummary::Points QuantileSummary::compress(Points summary, double epsilon)
{
    const std::size_t n = summary.values.size();
    if (double(n) * epsilon < 1)
        return summary;
    // percents = epsilon + np.arange(0.0, 1.0, epsilon): numpy's arange is i * epsilon, its
    // length ceil(1.0 / epsilon).
    const auto count = std::size_t(std::ceil(1.0 / epsilon));
    std::vector<float> cumulative(n);
    float running = 0;
    for (std::size_t i = 0; i < n; ++i)
        cumulative[i] = running += summary.weights[i]; // float32 cumsum, one add after another
    std::vector<double> xp(n), values(n), cumulative64(n);
    for (std::size_t i = 0; i < n; ++i) {
        xp[i] = double(cumulative[i] / cumulative[n - 1]); // the float32 division
        values[i] = double(summary.values[i]);
        cumulative64[i] = double(cumulative[i]);
    }
    Points out;
    out.values.reserve(count);
    out.weights.reserve(count);
    double previous = 0;
    for (std::size_t k = 0; k < count; ++k) {
        const double percent = mulAdd(double(k), epsilon, epsilon);
        const double weight = interp(percent, xp, cumulative64);
        out.values.push_back(float(interp(percent, xp, values)));
        out.weights.push_back(float(weight - previous));
        previous = weight;
    }
    return out;
}

} // namespace sluice::pipeline
