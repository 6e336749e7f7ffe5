#pragma once
// Decoding tf.train.Example protocol buffers (what TFRecord files of training data hold)
// straight from the wire format: no protobuf library, every length checked against the
// record so that a damaged record is an error, never a read past its end.
//
//   Example  { Features features = 1; }
//   Features { map<string, Feature> feature = 1; }
//   Feature  { oneof { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; } }
//   *List    { repeated <bytes|float|int64> value = 1; }   (floats and int64s packed or not)

#include "io/error.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace sluice {

struct ExampleFeature
{
    // tf.io's dtype names for the three kinds: "string", "float32", "int64".
    enum class Kind { Bytes, Float, Int64, Empty };
    Kind kind = Kind::Empty;
    std::vector<float> floats;
    std::vector<std::int64_t> ints;
    std::vector<std::span<const std::byte>> bytes; // views into the record

    std::size_t size() const;
};

const char *exampleKindName(ExampleFeature::Kind kind);

using Example = std::map<std::string, ExampleFeature>;

// Decodes one serialized tf.train.Example. `what` names the record in messages.
Result<Example> parseExample(std::span<const std::byte> record, const std::string &what);

} // namespace sluice
