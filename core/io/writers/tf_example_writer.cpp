#include "io/writers/tf_example_writer.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <limits>

namespace sluice {
namespace {

static_assert(std::endian::native == std::endian::little, "protobuf fixed32 floats are written as little-endian");

// Field keys: (field number << 3) | wire type, all single bytes here.
constexpr char kLengthDelimited1 = 0x0a; // field 1, length-delimited
constexpr char kLengthDelimited2 = 0x12; // field 2, length-delimited

// Feature's oneof: bytes_list = 1, float_list = 2, int64_list = 3.
char featureKey(ExampleFeature::Kind kind)
{
    return kind == ExampleFeature::Kind::Bytes ? 0x0a : kind == ExampleFeature::Kind::Float ? 0x12 : 0x1a;
}

std::size_t varintSize(std::uint64_t v)
{
    std::size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

// A field key plus length prefix plus `payload` bytes.
std::size_t delimitedSize(std::uint64_t payload) { return 1 + varintSize(payload) + payload; }

// Calls f(value) for each element of `data` read as `T` (any alignment, native order).
template <typename T, typename F>
void forEach(std::span<const std::byte> data, F &&f)
{
    for (std::size_t at = 0; at + sizeof(T) <= data.size(); at += sizeof(T))
        f(loadElement<T>(data.data() + at, false));
}

// Calls f(std::int64_t) for each element of an integer or bool array; false if some uint64
// value does not fit (checked by the sizing pass, so the writing pass never sees one).
template <typename F>
bool forEachInt(DType dtype, std::span<const std::byte> data, F &&f)
{
    bool fits = true;
    switch (dtype) {
    case DType::Bool: forEach<std::uint8_t>(data, [&](std::uint8_t v) { f(std::int64_t(v != 0)); }); break;
    case DType::Int8: forEach<std::int8_t>(data, [&](std::int8_t v) { f(std::int64_t(v)); }); break;
    case DType::Int16: forEach<std::int16_t>(data, [&](std::int16_t v) { f(std::int64_t(v)); }); break;
    case DType::Int32: forEach<std::int32_t>(data, [&](std::int32_t v) { f(std::int64_t(v)); }); break;
    case DType::Int64: forEach<std::int64_t>(data, f); break;
    case DType::UInt8: forEach<std::uint8_t>(data, [&](std::uint8_t v) { f(std::int64_t(v)); }); break;
    case DType::UInt16: forEach<std::uint16_t>(data, [&](std::uint16_t v) { f(std::int64_t(v)); }); break;
    case DType::UInt32: forEach<std::uint32_t>(data, [&](std::uint32_t v) { f(std::int64_t(v)); }); break;
    case DType::UInt64:
        forEach<std::uint64_t>(data, [&](std::uint64_t v) {
            if (v > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
                fits = false;
            f(std::int64_t(v));
        });
        break;
    case DType::Float16:
    case DType::Float32:
    case DType::Float64: return false; // refused before: an Int64List holds no fractions
    }
    return fits;
}

template <typename F>
void forEachFloat(DType dtype, std::span<const std::byte> data, F &&f)
{
    switch (dtype) {
    case DType::Float16: forEach<Float16>(data, [&](Float16 v) { f(float(v)); }); break;
    case DType::Float32: forEach<float>(data, f); break;
    case DType::Float64: forEach<double>(data, [&](double v) { f(float(v)); }); break;
    default: forEachInt(dtype, data, [&](std::int64_t v) { f(float(v)); }); break;
    }
}

// Appends to a buffer sized in advance; the sizing and writing passes must agree exactly.
class Out
{
public:
    explicit Out(char *p) : m_p(p) {}
    char *pos() const { return m_p; }
    void byte(char c) { *m_p++ = c; }
    void varint(std::uint64_t v)
    {
        while (v >= 0x80) {
            *m_p++ = char((v & 0x7f) | 0x80);
            v >>= 7;
        }
        *m_p++ = char(v);
    }
    void raw(const void *data, std::size_t n)
    {
        if (n > 0)
            std::memcpy(m_p, data, n);
        m_p += n;
    }
    void delimited(char key, std::uint64_t length)
    {
        byte(key);
        varint(length);
    }

private:
    char *m_p;
};

} // namespace

ExampleFeatureValues ExampleFeatureValues::floats(std::string_view name, std::span<const float> values)
{
    return {name, ExampleFeature::Kind::Float, DType::Float32, std::as_bytes(values), {}};
}

ExampleFeatureValues ExampleFeatureValues::ints(std::string_view name, std::span<const std::int64_t> values)
{
    return {name, ExampleFeature::Kind::Int64, DType::Int64, std::as_bytes(values), {}};
}

ExampleFeatureValues ExampleFeatureValues::bytes(std::string_view name, std::span<const std::string> values)
{
    return {name, ExampleFeature::Kind::Bytes, DType::UInt8, {}, values};
}

ExampleFeatureValues ExampleFeatureValues::numeric(std::string_view name, DType dtype, std::span<const std::byte> values)
{
    return {name, isFloating(dtype) ? ExampleFeature::Kind::Float : ExampleFeature::Kind::Int64, dtype, values, {}};
}

Status ExampleEncoder::encode(std::span<const ExampleFeatureValues> features, std::string &out)
{
    using Kind = ExampleFeature::Kind;
    auto bad = [](std::string_view name, const std::string &why) { return Error::invalid("feature '" + std::string(name) + "'", why); };

    // Map entries are written sorted by name, as protobuf's deterministic serialization does.
    m_order.resize(features.size());
    for (std::size_t i = 0; i < features.size(); ++i)
        m_order[i] = i;
    std::sort(m_order.begin(), m_order.end(), [&](std::size_t a, std::size_t b) { return features[a].name < features[b].name; });
    for (std::size_t i = 1; i < m_order.size(); ++i)
        if (features[m_order[i]].name == features[m_order[i - 1]].name)
            return bad(features[m_order[i]].name, "given twice (an Example holds one feature per name)");

    // Sizing pass: every length prefix is known before a byte is written. m_listSizes holds
    // each feature's list payload (for packed lists, the packed bytes).
    m_listSizes.assign(features.size(), 0);
    std::uint64_t mapSize = 0;
    for (std::size_t i = 0; i < features.size(); ++i) {
        const ExampleFeatureValues &f = features[i];
        std::uint64_t &list = m_listSizes[i];
        if (f.kind == Kind::Float || f.kind == Kind::Int64) {
            const std::size_t item = itemSize(f.dtype);
            if (f.data.size() % item != 0)
                return bad(f.name, std::to_string(f.data.size()) + " bytes are not a whole number of " + std::string(dtypeName(f.dtype)) + " values");
            if (f.kind == Kind::Float) {
                list = 4 * (f.data.size() / item);
            } else {
                if (isFloating(f.dtype))
                    return bad(f.name, std::string(dtypeName(f.dtype)) + " values cannot be stored in an Int64List");
                if (!forEachInt(f.dtype, f.data, [&](std::int64_t v) { list += varintSize(std::uint64_t(v)); }))
                    return bad(f.name, "a uint64 value is larger than the largest int64 (an Int64List cannot hold it)");
            }
        } else if (f.kind == Kind::Bytes) {
            for (const std::string &s : f.strings)
                list += delimitedSize(s.size());
        }
        // An empty packed list is no field at all, as protobuf writes it.
        const std::uint64_t listMessage = f.kind == Kind::Bytes ? list : list > 0 ? delimitedSize(list) : 0;
        const std::uint64_t feature = f.kind == Kind::Empty ? 0 : delimitedSize(listMessage);
        const std::uint64_t entry = delimitedSize(f.name.size()) + delimitedSize(feature);
        mapSize += delimitedSize(entry);
    }

    out.resize(std::size_t(delimitedSize(mapSize)));
    Out w(out.data());
    w.delimited(kLengthDelimited1, mapSize); // Example.features (written even when empty, as TensorFlow does)
    for (std::size_t i : m_order) {
        const ExampleFeatureValues &f = features[i];
        const std::uint64_t list = m_listSizes[i];
        const std::uint64_t listMessage = f.kind == Kind::Bytes ? list : list > 0 ? delimitedSize(list) : 0;
        const std::uint64_t feature = f.kind == Kind::Empty ? 0 : delimitedSize(listMessage);
        // Map entries always carry both key and value, even empty ones.
        w.delimited(kLengthDelimited1, delimitedSize(f.name.size()) + delimitedSize(feature));
        w.delimited(kLengthDelimited1, f.name.size());
        w.raw(f.name.data(), f.name.size());
        w.delimited(kLengthDelimited2, feature);
        if (f.kind == Kind::Empty)
            continue;
        w.delimited(featureKey(f.kind), listMessage);
        if (f.kind == Kind::Bytes) {
            for (const std::string &s : f.strings) {
                w.delimited(kLengthDelimited1, s.size());
                w.raw(s.data(), s.size());
            }
        } else if (list > 0) {
            w.delimited(kLengthDelimited1, list); // packed
            if (f.kind == Kind::Float) {
                if (f.dtype == DType::Float32)
                    w.raw(f.data.data(), f.data.size());
                else
                    forEachFloat(f.dtype, f.data, [&](float v) { w.raw(&v, 4); });
            } else {
                forEachInt(f.dtype, f.data, [&](std::int64_t v) { w.varint(std::uint64_t(v)); });
            }
        }
    }
    assert(w.pos() == out.data() + out.size());
    return Status::success();
}

Status encodeExample(std::span<const ExampleFeatureValues> features, std::string &out)
{
    ExampleEncoder encoder;
    return encoder.encode(features, out);
}

Result<std::string> encodeExample(std::span<const ExampleFeatureValues> features)
{
    std::string out;
    if (auto s = encodeExample(features, out); !s)
        return s.error();
    return out;
}

} // namespace sluice
