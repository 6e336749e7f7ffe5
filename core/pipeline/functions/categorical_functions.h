#pragma once
// The categorical functions of `map`, each a Keras preprocessing layer in output_mode "int":
// hashing (keras.layers.Hashing), lookup (StringLookup / IntegerLookup, by the feature's type),
// bucketize (tf.raw_ops.Bucketize) and discretize (keras.layers.Discretization). Each turns a
// feature into int64 indices of the same shape, before or after batch; lookup and discretize
// can adapt (learn their vocabulary or bin boundaries) in a pass over the input while the
// pipeline is built, as normalize does. Listed with the other map functions by mapFunctions().

#include "pipeline/functions/map_functions.h"

#include <array>
#include <functional>
#include <optional>
#include <string_view>

namespace sluice::pipeline {

const std::vector<MapFunctionInfo> &categoricalMapFunctions();

// Null when `name` is not a categorical function. `input` is what the function is applied to
// (lookup and discretize adapt over it).
std::unique_ptr<MapFunction> makeCategoricalMapFunction(const std::string &name, BuildContext &context, Params &params,
                                                        const Dataset &input);

// --- Shared by the categorical functions' files ----------------------------------------------

// lookup_function.cpp.
std::unique_ptr<MapFunction> makeLookupFunction(BuildContext &context, Params &params, const Dataset &input);

// `salt` as Keras takes it: one integer (used for both halves of the key) or two, as the
// SipHash key {k0, k1}; nothing when absent.
std::optional<std::array<std::uint64_t, 2>> saltParam(Params &params);

// Value i of an integer (or bool) tensor as tf.strings.as_string writes it: "-12", "true"
// (a float: truncated to int64 first, as Keras's Hashing does).
std::string integerText(const Tensor &tensor, std::uint64_t i);

// An int64 as TensorFlow's safe_strto64 reads one (vocabulary files of IntegerLookup): spaces
// around it and a '+' allowed; nothing when it is not a whole int64.
std::optional<std::int64_t> parseInteger(std::string_view text);
// A token as a project file gives it for a string feature (an integer counts as its decimal
// text) or an integer feature (a string is read with parseInteger); nothing when it is neither.
std::optional<std::string> jsonText(const nlohmann::json &value);
std::optional<std::int64_t> jsonInteger(const nlohmann::json &value);

// One pass over `input` for adapting: `take` sees feature `feature` of each element, at most
// adapt_elements of them, and returns an error text to stop with. A failed pass, an error from
// `take` or an input with no elements is a build error naming `param`.
void adaptPass(BuildContext &context, Params &params, const Dataset &input, std::size_t feature, const std::string &param,
               const std::function<std::optional<std::string>(const Tensor &)> &take);

} // namespace sluice::pipeline
