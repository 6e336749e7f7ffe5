#pragma once
// Writing small TFRecord files of tf.train.Example records in tests, for pipelines over many
// files and rows (the fixtures TensorFlow wrote check the format itself; these check the
// pipeline). Framing and CRCs as TensorFlow writes them; GZIP through zlib.

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::test {

// A minimal protobuf writer for hand-built records.
struct Proto
{
    std::string b;
    Proto &varint(std::uint64_t v);
    Proto &key(int field, int type) { return varint(std::uint64_t(field) << 3 | std::uint64_t(type)); }
    Proto &bytes(int field, const std::string &s); // length-delimited
    Proto &fixed32(int field, float f);
};

// One feature of an Example: floats (packed), int64s (packed) or byte strings.
struct ExampleValue
{
    std::string name;
    std::vector<float> floats;
    std::vector<std::int64_t> ints;
    std::vector<std::string> strings;
};

// A serialized tf.train.Example.
std::string serializeExample(const std::vector<ExampleValue> &features);
// A record framed as in a TFRecord file: length, its masked CRC-32C, the data, its masked CRC-32C.
std::string frameRecord(const std::string &data);
// `bytes` as one GZIP member (what TFRecordWriter with GZIP compression writes).
std::string gzipped(const std::string &bytes);

} // namespace sluice::test
