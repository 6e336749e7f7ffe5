#include "io/dtype.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace sluice {
namespace {

struct TypeRow
{
    DType type;
    char kind; // numpy's kind letter in descr strings
    std::size_t size;
    std::string_view name;
};

constexpr TypeRow kTypes[] = {
    {DType::Bool, 'b', 1, "bool"},       {DType::Int8, 'i', 1, "int8"},
    {DType::Int16, 'i', 2, "int16"},     {DType::Int32, 'i', 4, "int32"},
    {DType::Int64, 'i', 8, "int64"},     {DType::UInt8, 'u', 1, "uint8"},
    {DType::UInt16, 'u', 2, "uint16"},   {DType::UInt32, 'u', 4, "uint32"},
    {DType::UInt64, 'u', 8, "uint64"},   {DType::Float16, 'f', 2, "float16"},
    {DType::Float32, 'f', 4, "float32"}, {DType::Float64, 'f', 8, "float64"},
};

const TypeRow &row(DType t) { return kTypes[static_cast<std::size_t>(t)]; }

} // namespace

std::size_t itemSize(DType t) { return row(t).size; }
bool isFloating(DType t) { return row(t).kind == 'f'; }
bool isSignedInteger(DType t) { return row(t).kind == 'i'; }
std::string_view dtypeName(DType t) { return row(t).name; }

std::optional<DType> dtypeFromName(std::string_view name)
{
    for (const auto &r : kTypes)
        if (r.name == name)
            return r.type;
    return std::nullopt;
}

std::string TypeDescr::str() const
{
    const auto &r = row(type);
    const char orderChar = r.size == 1 ? '|' : (order == ByteOrder::Little ? '<' : '>');
    return std::string{orderChar} + r.kind + std::to_string(r.size);
}

std::optional<TypeDescr> parseDescr(std::string_view descr)
{
    TypeDescr d;
    if (!descr.empty() && std::string_view("<>|=").find(descr.front()) != std::string_view::npos) {
        const char c = descr.front();
        d.order = c == '<' ? ByteOrder::Little : c == '>' ? ByteOrder::Big : nativeByteOrder();
        descr.remove_prefix(1);
    }
    if (descr.size() < 2 || descr.size() > 3)
        return std::nullopt;
    const char kind = descr.front();
    std::size_t size = 0;
    for (char c : descr.substr(1)) {
        if (c < '0' || c > '9')
            return std::nullopt;
        size = size * 10 + std::size_t(c - '0');
    }
    for (const auto &r : kTypes) {
        if (r.kind == kind && r.size == size) {
            d.type = r.type;
            return d;
        }
    }
    return std::nullopt;
}

Float16::operator float() const
{
    const std::uint32_t sign = std::uint32_t(bits & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1fu;
    std::uint32_t mantissa = bits & 0x3ffu;
    std::uint32_t out;
    if (exponent == 0x1f) { // inf or NaN
        out = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) {
        out = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        out = sign;
    } else { // subnormal half: normalise into a float
        int e = -1;
        do {
            ++e;
            mantissa <<= 1;
        } while ((mantissa & 0x400u) == 0);
        out = sign | (std::uint32_t(112 - e) << 23) | ((mantissa & 0x3ffu) << 13);
    }
    return std::bit_cast<float>(out);
}

Float16 Float16::fromFloat(float value)
{
    const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
    const std::uint16_t sign = std::uint16_t((f >> 16) & 0x8000u);
    const std::uint32_t absBits = f & 0x7fffffffu;
    if (absBits >= 0x7f800000u) // inf or NaN (keep NaN a NaN)
        return {std::uint16_t(sign | 0x7c00u | (absBits > 0x7f800000u ? 0x200u : 0u))};
    if (absBits >= 0x477ff000u) // rounds past the largest half: infinity
        return {std::uint16_t(sign | 0x7c00u)};
    if (absBits < 0x38800000u) { // subnormal or zero in half: round to nearest even
        const float magnitude = std::bit_cast<float>(absBits);
        const float scaled = magnitude * 16777216.0f; // 2^24: units of the smallest subnormal
        return {std::uint16_t(sign | std::uint16_t(std::nearbyint(scaled)))};
    }
    // Normal: rebias the exponent and round the mantissa to nearest even.
    std::uint32_t h = ((absBits >> 13) - (112u << 10));
    const std::uint32_t rest = absBits & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        ++h;
    return {std::uint16_t(sign | h)};
}

void byteSwapInPlace(void *data, std::size_t count, std::size_t size)
{
    auto *p = static_cast<unsigned char *>(data);
    if (size <= 1)
        return;
    for (std::size_t i = 0; i < count; ++i, p += size)
        std::reverse(p, p + size);
}

double loadAsDouble(const std::byte *p, TypeDescr d)
{
    const bool swap = !d.isNativeOrder();
    switch (d.type) {
    case DType::Bool: return std::to_integer<unsigned>(*p) != 0 ? 1.0 : 0.0;
    case DType::Int8: return double(loadElement<std::int8_t>(p, false));
    case DType::Int16: return double(loadElement<std::int16_t>(p, swap));
    case DType::Int32: return double(loadElement<std::int32_t>(p, swap));
    case DType::Int64: return double(loadElement<std::int64_t>(p, swap));
    case DType::UInt8: return double(loadElement<std::uint8_t>(p, false));
    case DType::UInt16: return double(loadElement<std::uint16_t>(p, swap));
    case DType::UInt32: return double(loadElement<std::uint32_t>(p, swap));
    case DType::UInt64: return double(loadElement<std::uint64_t>(p, swap));
    case DType::Float16: return double(float(Float16{loadElement<std::uint16_t>(p, swap)}));
    case DType::Float32: return double(loadElement<float>(p, swap));
    case DType::Float64: return loadElement<double>(p, swap);
    }
    return 0.0;
}

} // namespace sluice
