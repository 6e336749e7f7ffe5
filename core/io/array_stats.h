#pragma once
// Summary statistics of an array, computed by one streaming pass in parallel on a oneTBB
// arena, releasing mapped pages behind the pass so memory stays bounded on huge files.
// The result does not depend on the number of threads.

#include "io/nd_array.h"

#include <cstdint>
#include <optional>
#include <variant>

namespace sluice {

struct ArrayStats
{
    // Extremes keep the array's own kind: integers exactly, floats as double, none when
    // the array is empty or all NaN.
    using Extreme = std::variant<std::monostate, double, std::int64_t, std::uint64_t>;

    std::uint64_t count = 0;    // elements, NaNs included
    std::uint64_t nanCount = 0; // NaNs (floating dtypes only)
    double sum = 0;             // float64 accumulation, NaNs excluded
    std::optional<double> mean; // sum / (count - nanCount); none when nothing to average
    Extreme min, max;
};

// `threads` <= 0: all cores.
ArrayStats computeStats(const NdArray &array, int threads = 0);

double extremeAsDouble(const ArrayStats::Extreme &e);

} // namespace sluice
