#pragma once
// Finite-difference gradient checks for the training engine's layers and losses: the analytic
// gradient of a scalar function is compared with central differences computed in fp32 with a
// step suited to fp32 (the layers compute in fp32, so the tolerance is relative, ~1e-2).

#include "train/model/float_tensor.h"

#include <QString>

#include <functional>
#include <span>
#include <vector>

namespace sluice::test {

// Deterministic test data: values uniform in [lo, hi).
train::FloatTensor randomTensor(train::Shape shape, unsigned seed, float lo = -1.0f, float hi = 1.0f);

struct GradientCheck
{
    double maxRelativeError = 0; // max |analytic - numeric| / max(1e-2, |analytic| + |numeric|)
    std::size_t worstIndex = 0;
    double analytic = 0, numeric = 0;
    QString text() const; // for QVERIFY2
};

// Compares `analytic` (d f / d values) with central differences of f around `values`, which it
// perturbs in place and restores. Checks at most `maxProbes` elements spread over the array.
GradientCheck checkGradient(std::span<float> values, std::span<const float> analytic, const std::function<double()> &f,
                            float epsilon = 1e-2f, std::size_t maxProbes = 64);

} // namespace sluice::test
