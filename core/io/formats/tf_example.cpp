#include "io/formats/tf_example.h"

#include <bit>
#include <cstring>

namespace sluice {
namespace {

enum WireType { Varint = 0, Fixed64 = 1, LengthDelimited = 2, Fixed32 = 5 };

// A bounds-checked cursor over protobuf wire data.
class Wire
{
public:
    explicit Wire(std::span<const std::byte> b) : m_b(b) {}
    bool done() const { return m_pos == m_b.size(); }

    bool varint(std::uint64_t &v)
    {
        v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (m_pos >= m_b.size())
                return false;
            const auto byte = std::to_integer<std::uint64_t>(m_b[m_pos++]);
            v |= (byte & 0x7f) << shift;
            if (!(byte & 0x80))
                return true;
        }
        return false; // more than 10 bytes: not a varint
    }
    bool bytes(std::span<const std::byte> &out)
    {
        std::uint64_t n;
        if (!varint(n) || n > m_b.size() - m_pos)
            return false;
        out = m_b.subspan(m_pos, std::size_t(n));
        m_pos += std::size_t(n);
        return true;
    }
    bool fixed32(std::uint32_t &v)
    {
        if (m_b.size() - m_pos < 4)
            return false;
        std::memcpy(&v, m_b.data() + m_pos, 4);
        m_pos += 4;
        return true;
    }
    bool skip(int wireType)
    {
        std::uint64_t v;
        std::span<const std::byte> s;
        std::uint32_t f;
        switch (wireType) {
        case Varint: return varint(v);
        case Fixed64:
            if (m_b.size() - m_pos < 8)
                return false;
            m_pos += 8;
            return true;
        case LengthDelimited: return bytes(s);
        case Fixed32: return fixed32(f);
        default: return false; // groups (3, 4) are not used by tf.train.Example
        }
    }
    // Reads a field key; false at end or on damage (`damaged` tells which).
    bool key(int &field, int &wireType, bool &damaged)
    {
        damaged = false;
        if (done())
            return false;
        std::uint64_t k;
        if (!varint(k)) {
            damaged = true;
            return false;
        }
        field = int(k >> 3);
        wireType = int(k & 7);
        return true;
    }

private:
    std::span<const std::byte> m_b;
    std::size_t m_pos = 0;
};

static_assert(std::endian::native == std::endian::little, "protobuf fixed32 floats are read as little-endian");

bool parseList(std::span<const std::byte> list, ExampleFeature &f)
{
    Wire w(list);
    int field, type;
    bool damaged;
    while (w.key(field, type, damaged)) {
        if (field != 1) {
            if (!w.skip(type))
                return false;
            continue;
        }
        if (f.kind == ExampleFeature::Kind::Bytes) {
            std::span<const std::byte> s;
            if (type != LengthDelimited || !w.bytes(s))
                return false;
            f.bytes.push_back(s);
        } else if (f.kind == ExampleFeature::Kind::Float) {
            if (type == Fixed32) {
                std::uint32_t bits;
                if (!w.fixed32(bits))
                    return false;
                f.floats.push_back(std::bit_cast<float>(bits));
            } else if (type == LengthDelimited) { // packed
                std::span<const std::byte> s;
                if (!w.bytes(s) || s.size() % 4 != 0)
                    return false;
                const std::size_t n = s.size() / 4, at = f.floats.size();
                if (n > 0) { // an empty packed list is valid; memcpy must not see a null vector
                    f.floats.resize(at + n);
                    std::memcpy(f.floats.data() + at, s.data(), s.size());
                }
            } else {
                return false;
            }
        } else { // Int64
            if (type == Varint) {
                std::uint64_t v;
                if (!w.varint(v))
                    return false;
                f.ints.push_back(std::int64_t(v));
            } else if (type == LengthDelimited) { // packed
                std::span<const std::byte> s;
                if (!w.bytes(s))
                    return false;
                Wire packed(s);
                while (!packed.done()) {
                    std::uint64_t v;
                    if (!packed.varint(v))
                        return false;
                    f.ints.push_back(std::int64_t(v));
                }
            } else {
                return false;
            }
        }
    }
    return !damaged;
}

} // namespace

std::size_t ExampleFeature::size() const
{
    switch (kind) {
    case Kind::Bytes: return bytes.size();
    case Kind::Float: return floats.size();
    case Kind::Int64: return ints.size();
    case Kind::Empty: return 0;
    }
    return 0;
}

const char *exampleKindName(ExampleFeature::Kind kind)
{
    switch (kind) {
    case ExampleFeature::Kind::Bytes: return "string";
    case ExampleFeature::Kind::Float: return "float32";
    case ExampleFeature::Kind::Int64: return "int64";
    case ExampleFeature::Kind::Empty: return "empty";
    }
    return "?";
}

std::string visitExample(std::span<const std::byte> record, const ExampleVisitor &visit)
{
    Wire example(record);
    int field, type;
    bool bad;
    while (example.key(field, type, bad)) {
        if (field != 1 || type != LengthDelimited) {
            if (!example.skip(type))
                return "unreadable field " + std::to_string(field);
            continue;
        }
        std::span<const std::byte> features;
        if (!example.bytes(features))
            return "'features' runs past the record";
        Wire map(features);
        while (map.key(field, type, bad)) {
            std::span<const std::byte> entry;
            if (field != 1 || type != LengthDelimited) {
                if (!map.skip(type))
                    return "unreadable field in 'features'";
                continue;
            }
            if (!map.bytes(entry))
                return "a feature entry runs past the record";
            std::string_view name;
            std::span<const std::byte> feature;
            Wire e(entry);
            while (e.key(field, type, bad)) {
                std::span<const std::byte> s;
                if (type != LengthDelimited) {
                    if (!e.skip(type))
                        return "unreadable feature entry";
                    continue;
                }
                if (!e.bytes(s))
                    return "a feature entry is truncated";
                if (field == 1)
                    name = {reinterpret_cast<const char *>(s.data()), s.size()};
                else if (field == 2)
                    feature = s;
            }
            if (bad)
                return "a feature entry is damaged";
            visit(name, feature);
        }
        if (bad)
            return "'features' is damaged";
    }
    if (bad)
        return "damaged field key";
    return {};
}

bool decodeExampleFeature(std::span<const std::byte> feature, ExampleFeature &out)
{
    out.kind = ExampleFeature::Kind::Empty;
    out.floats.clear();
    out.ints.clear();
    out.bytes.clear();
    Wire fw(feature);
    int field, type;
    bool bad;
    while (fw.key(field, type, bad)) {
        std::span<const std::byte> list;
        if (type != LengthDelimited || field < 1 || field > 3) {
            if (!fw.skip(type))
                return false;
            continue;
        }
        if (!fw.bytes(list))
            return false;
        out.kind = field == 1 ? ExampleFeature::Kind::Bytes : field == 2 ? ExampleFeature::Kind::Float : ExampleFeature::Kind::Int64;
        if (!parseList(list, out))
            return false;
    }
    return !bad;
}

Result<Example> parseExample(std::span<const std::byte> record, const std::string &what)
{
    auto damaged = [&](const std::string &why) { return Error::corrupt(what, "not a valid tf.train.Example: " + why); };
    Example out;
    std::string badFeature;
    const std::string why = visitExample(record, [&](std::string_view name, std::span<const std::byte> feature) {
        ExampleFeature &f = out[std::string(name)];
        if (!decodeExampleFeature(feature, f) && badFeature.empty())
            badFeature = std::string(name);
    });
    if (!why.empty())
        return damaged(why);
    if (!badFeature.empty())
        return damaged("feature '" + badFeature + "' is damaged");
    return out;
}

} // namespace sluice
