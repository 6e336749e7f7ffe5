#pragma once
// Decoding tf.train.Example records straight into columns, as tf.io.parse_example does for a
// batch with a FixedLenFeature spec: each declared feature is one column whose rows are the
// records. Nothing is allocated per record (the feature lists are decoded into reused scratch
// and copied into their row), which is what lets from_tfrecord keep up with GZIP inflation.

#include "io/formats/tf_example.h"
#include "pipeline/sources/row_chunks.h"

#include <functional>
#include <span>

namespace sluice::pipeline {

struct FixedLenFeature
{
    std::string name;
    ValueType type;
    Shape shape;
    std::optional<Tensor> defaultValue; // one row, used when a record lacks the feature
};

class ExampleColumns
{
public:
    // `rowSpec` lists `features` in order; both outlive the decoder.
    ExampleColumns(const std::vector<FixedLenFeature> &features, const ElementSpec &rowSpec, std::uint64_t rowsPerChunk);

    // Decodes `record` as the next row. On failure nothing is added and the error names the
    // record through `what` (built only then).
    Status add(std::span<const std::byte> record, const std::function<std::string()> &what);

    std::uint64_t rows() const { return m_builder.rows(); }
    bool full() const { return m_builder.full(); }
    // The rows decoded so far as a chunk of columns; starts a new one.
    Element take() { return m_builder.take(); }

private:
    Status fill(std::size_t feature, const std::function<std::string()> &what);

    const std::vector<FixedLenFeature> &m_features;
    ChunkBuilder m_builder;
    std::vector<std::span<const std::byte>> m_found; // per feature: its entry in the current record
    std::vector<bool> m_seen;
    std::vector<std::size_t> m_stringsBefore; // string counts before the current record
    ExampleFeature m_scratch;
    ExampleFeature m_unused; // for checking entries that are not kept
};

} // namespace sluice::pipeline
