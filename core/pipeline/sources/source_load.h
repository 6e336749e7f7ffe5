#pragma once
// What the `load` source's two readers share (source_load.cpp: the op and its TFRecord reader;
// source_load_npy.cpp: its .npy reader): the datasets found at `path`, and the rotation that
// reads a dataset's shards back in the order `save` dealt its rows to them (save_pass.h).

#include "io/writers/shard_writer.h"
#include "pipeline/engine/build_context.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sluice::pipeline {

// The row order of shards filled in turn: row 0 of shard 0, row 0 of shard 1, …, row 1 of
// shard 0, …, a shard that ran out of rows left out of later rounds. For save's datasets this is
// the order of the pass that wrote them; for any manifest it is a fixed, documented order.
class ShardRotation
{
public:
    explicit ShardRotation(const std::vector<std::uint64_t> &shardRows);

    struct Place
    {
        std::size_t shard;
        std::uint64_t row; // within the shard
    };
    std::uint64_t rows() const { return m_rows; }
    Place locate(std::uint64_t row) const; // row < rows()

private:
    // Rounds in which the same shards still have rows.
    struct Segment
    {
        std::uint64_t firstRow = 0, firstRound = 0;
        std::vector<std::size_t> shards;
    };
    std::vector<Segment> m_segments; // by firstRow
    std::uint64_t m_rows = 0;
};

// One dataset folder read by load.
struct SavedDataset
{
    std::string folder;
    DatasetManifest manifest;
    ShardRotation rotation;

    std::string fileOf(std::size_t shard, std::size_t file = 0) const; // a shard file's path
};

// load's dataset over the .npy datasets `parts` (all of the same features): random access, each
// row read straight from its shard's mapping.
std::shared_ptr<Dataset> makeNpyLoad(BuildContext &context, Params &params, std::vector<SavedDataset> parts, ElementSpec spec);

} // namespace sluice::pipeline
