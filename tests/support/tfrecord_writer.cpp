#include "support/tfrecord_writer.h"

#include "io/crc32c.h"

#include <cstring>
#include <span>
#include <stdexcept>
#include <zlib.h>

namespace sluice::test {
namespace {

std::uint32_t maskedCrc(const std::string &s) { return maskCrc32c(crc32c(std::as_bytes(std::span(s.data(), s.size())))); }

std::string littleEndian(std::uint64_t v, int bytes)
{
    std::string out;
    for (int i = 0; i < bytes; ++i)
        out.push_back(char((v >> (8 * i)) & 0xff));
    return out;
}

} // namespace

Proto &Proto::varint(std::uint64_t v)
{
    do {
        unsigned char c = v & 0x7f;
        v >>= 7;
        if (v)
            c |= 0x80;
        b.push_back(char(c));
    } while (v);
    return *this;
}

Proto &Proto::bytes(int field, const std::string &s)
{
    key(field, 2).varint(s.size());
    b += s;
    return *this;
}

Proto &Proto::fixed32(int field, float f)
{
    key(field, 5);
    char raw[4];
    std::memcpy(raw, &f, 4);
    b.append(raw, 4);
    return *this;
}

std::string serializeExample(const std::vector<ExampleValue> &features)
{
    Proto map;
    for (const ExampleValue &f : features) {
        Proto list;
        int kind;
        if (!f.strings.empty()) {
            kind = 1;
            for (const auto &s : f.strings)
                list.bytes(1, s);
        } else if (!f.floats.empty()) {
            kind = 2;
            list.bytes(1, std::string(reinterpret_cast<const char *>(f.floats.data()), f.floats.size() * sizeof(float)));
        } else {
            kind = 3;
            Proto packed;
            for (std::int64_t v : f.ints)
                packed.varint(std::uint64_t(v));
            list.bytes(1, packed.b);
        }
        const std::string feature = Proto().bytes(kind, list.b).b;
        map.bytes(1, Proto().bytes(1, f.name).bytes(2, feature).b);
    }
    return Proto().bytes(1, map.b).b;
}

std::string frameRecord(const std::string &data)
{
    const std::string length = littleEndian(data.size(), 8);
    return length + littleEndian(maskedCrc(length), 4) + data + littleEndian(maskedCrc(data), 4);
}

std::string gzipped(const std::string &bytes)
{
    z_stream zs{};
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2 failed");
    std::string out(deflateBound(&zs, uLong(bytes.size())), '\0');
    zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
    zs.avail_in = uInt(bytes.size());
    zs.next_out = reinterpret_cast<Bytef *>(out.data());
    zs.avail_out = uInt(out.size());
    const int rc = deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    if (rc != Z_STREAM_END)
        throw std::runtime_error("deflate did not finish");
    return out;
}

} // namespace sluice::test
