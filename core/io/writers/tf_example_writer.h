#pragma once
// Encoding tf.train.Example protocol buffers by hand, the inverse of tf_example.h: no protobuf
// library, the output byte for byte what TensorFlow's protobuf writes with deterministic
// serialization (map entries sorted by key; tests/data/tfrecord_writer/make_reference.py).
//
//   Example  { Features features = 1; }                 always written, empty or not
//   Features { map<string, Feature> feature = 1; }     entries sorted by name (bytewise)
//   Feature  { oneof { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; } }
//   *List    { repeated <bytes|float|int64> value = 1; }   floats and int64s packed
//
// Threading: the functions are pure; an ExampleEncoder is used by one thread at a time.

#include "io/dtype.h"
#include "io/error.h"
#include "io/formats/tf_example.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// One feature to encode: a name and a view of its values (nothing is copied; keep the values
// alive until the Example is encoded).
struct ExampleFeatureValues
{
    std::string_view name;
    ExampleFeature::Kind kind = ExampleFeature::Kind::Empty; // Empty: a Feature with no list set
    // Float and Int64 features: `count` elements of `dtype` in native byte order. Any numeric
    // dtype is accepted and converted as tf.train.Feature stores it: floating types become a
    // FloatList (float32, so float64 values are rounded), integers and bool an Int64List.
    DType dtype = DType::Float32;
    std::span<const std::byte> data;
    // Bytes features: the byte strings.
    std::span<const std::string> strings;

    static ExampleFeatureValues floats(std::string_view name, std::span<const float> values);
    static ExampleFeatureValues ints(std::string_view name, std::span<const std::int64_t> values);
    static ExampleFeatureValues bytes(std::string_view name, std::span<const std::string> values);
    // Elements of any numeric dtype (native byte order): a FloatList for floating dtypes,
    // an Int64List for integers and bool.
    static ExampleFeatureValues numeric(std::string_view name, DType dtype, std::span<const std::byte> values);
};

// Serializes an Example holding `features` into `out`, replacing its contents (its capacity is
// reused: encoding record after record into the same string allocates nothing once it is big
// enough). Fails, naming the feature, on two features of one name, a data size that is not a
// whole number of elements, or a uint64 value too large for an Int64List (TensorFlow refuses
// it too).
Status encodeExample(std::span<const ExampleFeatureValues> features, std::string &out);
Result<std::string> encodeExample(std::span<const ExampleFeatureValues> features);

// encodeExample with its sorting scratch kept between calls, for a writer that encodes many
// records.
class ExampleEncoder
{
public:
    Status encode(std::span<const ExampleFeatureValues> features, std::string &out);

private:
    std::vector<std::size_t> m_order;
    std::vector<std::uint64_t> m_listSizes;
};

} // namespace sluice
