#pragma once
// The numeric element types Sluice reads and writes, named as numpy names them.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace sluice {

enum class DType : std::uint8_t {
    Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float16, Float32, Float64,
};

enum class ByteOrder : std::uint8_t { Little, Big };

constexpr ByteOrder nativeByteOrder()
{
    return std::endian::native == std::endian::little ? ByteOrder::Little : ByteOrder::Big;
}

std::size_t itemSize(DType t);
bool isFloating(DType t);
bool isSignedInteger(DType t);
std::string_view dtypeName(DType t); // numpy's name: "float32", "int64", "bool"…
std::optional<DType> dtypeFromName(std::string_view name);

// A dtype together with the byte order of the bytes it describes.
struct TypeDescr
{
    DType type = DType::Float32;
    ByteOrder order = nativeByteOrder();

    bool isNativeOrder() const { return itemSize(type) == 1 || order == nativeByteOrder(); }
    // numpy's descr string: "<f4", ">i8", "|b1", "|u1".
    std::string str() const;
    bool operator==(const TypeDescr &) const = default;
};

// Parses numpy's descr string ("<f4", ">u2", "|b1", "=f8", "b1", "f4"). Returns nothing for
// any dtype Sluice does not read (objects, strings, structured, complex, datetimes).
std::optional<TypeDescr> parseDescr(std::string_view descr);

// IEEE half precision, stored as its bits; converted on read.
struct Float16
{
    std::uint16_t bits = 0;
    operator float() const;
    static Float16 fromFloat(float value);
};

// Maps a C++ element type to its DType, so that typed views can check what they are given.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<std::int8_t> { static constexpr DType value = DType::Int8; };
template <> struct DTypeOf<std::int16_t> { static constexpr DType value = DType::Int16; };
template <> struct DTypeOf<std::int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<std::int64_t> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<std::uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct DTypeOf<std::uint16_t> { static constexpr DType value = DType::UInt16; };
template <> struct DTypeOf<std::uint32_t> { static constexpr DType value = DType::UInt32; };
template <> struct DTypeOf<std::uint64_t> { static constexpr DType value = DType::UInt64; };
template <> struct DTypeOf<Float16> { static constexpr DType value = DType::Float16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Float64; };

// Reverses the bytes of each of `count` elements of `size` bytes, in place.
void byteSwapInPlace(void *data, std::size_t count, std::size_t size);

// Reads one T at `p`, at any alignment, reversing its bytes when `swap` (the file's byte
// order is not this machine's). memcpy keeps the read free of alignment and aliasing UB.
template <typename T>
T loadElement(const std::byte *p, bool swap)
{
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, p, sizeof(T));
    if (swap)
        for (std::size_t i = 0; i < sizeof(T) / 2; ++i)
            std::swap(raw[i], raw[sizeof(T) - 1 - i]);
    return std::bit_cast<T>(raw);
}

// Reads one element at `p` (any alignment, any byte order) as double: the common currency
// of statistics and of the CLI's printing.
double loadAsDouble(const std::byte *p, TypeDescr d);

} // namespace sluice
