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
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
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

// The streaming form behind parseExample, for decoders that must not allocate per record:
// calls `visit(name, feature)` for every feature entry in record order, `feature` being the
// entry's serialized Feature (a later entry of the same name replaces an earlier one, as for a
// protobuf map). On damage, returns why (without the record's name); empty when the record is
// whole. `what` is only built by the caller when this fails.
using ExampleVisitor = std::function<void(std::string_view name, std::span<const std::byte> feature)>;
std::string visitExample(std::span<const std::byte> record, const ExampleVisitor &visit);
// Decodes a serialized Feature into `out`, reusing its vectors' storage; false when damaged.
bool decodeExampleFeature(std::span<const std::byte> feature, ExampleFeature &out);

} // namespace sluice
