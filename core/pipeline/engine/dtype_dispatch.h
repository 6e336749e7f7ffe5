#pragma once
// Typed loops over the pipeline's dtypes, shared by the map functions: a visitor that calls a
// function with a value of the dtype's C++ type, conversions through double with numpy's
// astype rules (saturating where numpy leaves the result undefined), and the counter-based
// hash that random functions draw from, so that a value depends on (seed, pass, element),
// never on which thread computed it.

#include "io/dtype.h"
#include "util/counter_random.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace sluice::pipeline {

// Calls f(T{}) with the C++ type of `dtype`.
template <typename F>
decltype(auto) visitDType(DType dtype, F &&f)
{
    switch (dtype) {
    case DType::Bool: return f(bool{});
    case DType::Int8: return f(std::int8_t{});
    case DType::Int16: return f(std::int16_t{});
    case DType::Int32: return f(std::int32_t{});
    case DType::Int64: return f(std::int64_t{});
    case DType::UInt8: return f(std::uint8_t{});
    case DType::UInt16: return f(std::uint16_t{});
    case DType::UInt32: return f(std::uint32_t{});
    case DType::UInt64: return f(std::uint64_t{});
    case DType::Float16: return f(Float16{});
    case DType::Float32: return f(float{});
    case DType::Float64: break;
    }
    return f(double{});
}

template <typename T> inline double toDouble(T v) { return double(v); }
template <> inline double toDouble(Float16 v) { return double(float(v)); }
template <typename T> inline T fromDouble(double v)
{
    if constexpr (std::is_same_v<T, bool>)
        return v != 0;
    else if constexpr (std::is_floating_point_v<T>)
        return T(v);
    else if constexpr (std::is_same_v<T, Float16>)
        return Float16::fromFloat(float(v));
    else {
        // numpy's astype leaves out-of-range and NaN values undefined; we saturate instead of UB.
        if (std::isnan(v))
            return T(0);
        const double lo = double(std::numeric_limits<T>::lowest()), hi = double(std::numeric_limits<T>::max());
        return v <= lo ? std::numeric_limits<T>::lowest() : v >= hi ? std::numeric_limits<T>::max() : T(v);
    }
}

using random::hash3;
using random::unitInterval;

} // namespace sluice::pipeline
