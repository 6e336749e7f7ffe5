#pragma once
// Keras's weight initializers, seeded: the same (seed, "<layer>/<param>") gives the same values
// on every machine and in every replica (a counter-based generator, not std:: distributions,
// whose output differs between standard libraries).

#include "io/error.h"
#include "train/model/float_tensor.h"
#include "util/counter_random.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sluice::train {

// glorot_uniform, glorot_normal, he_uniform, he_normal, lecun_normal, zeros, ones, orthogonal,
// random_normal (stddev 0.05), random_uniform (±0.05). Fans as Keras computes them: for a
// shape (..., in, out) fan_in = in * receptive field, fan_out = out * receptive field.
Status initialize(const std::string &initializer, const Shape &shape, std::uint64_t seed, const std::string &paramName, std::span<float> out);

const std::vector<std::string> &knownInitializers();

// A reproducible stream of random numbers keyed by (seed, stream): SplitMix64-based.
class CounterRng
{
public:
    CounterRng(std::uint64_t seed, std::uint64_t stream);
    std::uint64_t nextU64();
    float uniform();  // [0, 1)
    float normal();   // standard normal (Box-Muller)
private:
    std::uint64_t m_state;
};

// A hash of several words, for keys like (seed, step, layer, row).
using random::mixHash;
std::uint64_t hashString(const std::string &s);

} // namespace sluice::train
