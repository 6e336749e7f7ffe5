#pragma once
// Elements are dicts of named features, as in tf.data. The names and static types live once in
// an ElementSpec (tf.data's element_spec); an Element holds only the tensors, in spec order, so
// that stages look features up by index resolved when the pipeline is built.

#include "pipeline/engine/tensor.h"

#include <optional>
#include <string>
#include <vector>

namespace sluice::pipeline {

struct FeatureSpec
{
    std::string name;
    ValueType type;
    Shape shape; // -1 where a dimension is not known before running (a last partial batch)
};

struct ElementSpec
{
    std::vector<FeatureSpec> features;

    // Index of the feature called `name`, or nothing.
    std::optional<std::size_t> find(const std::string &name) const;
    std::string names() const; // "image, label" for messages
    std::string text() const;  // "{image: float32 (28, 28), label: int64 ()}"
};

struct Element
{
    std::vector<Tensor> tensors; // parallel to ElementSpec::features
    std::uint64_t nbytes() const;
};

} // namespace sluice::pipeline
