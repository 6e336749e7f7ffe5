#pragma once
// Datasets whose elements can be read by position: mapped .npy/.npz arrays and range, and
// shard / skip / take / global_shuffle over them. A pass over such a dataset is an IndexMap
// from output position to source row; batch gathers the rows of each batch straight from the
// mapping into the batch buffer (no per-element work or allocation on that path).
//
// Threading: RowSource and IndexMap are immutable and used from many tasks at once.

#include "pipeline/engine/dataset.h"

#include "io/storage/mapped_file.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace sluice::pipeline {

// Where rows come from.
class RowSource
{
public:
    virtual ~RowSource() = default;
    virtual std::uint64_t rowCount() const = 0;
    // Copies the rows `rows` of feature `feature` one after another into `out`.
    virtual void gather(std::size_t feature, std::span<const std::uint64_t> rows, std::byte *out) const = 0;
    // Row `row` as an element (views into the mapping where possible). A source that reads
    // files per row (from_files) may fail here; one that skips bad files returns an element
    // without tensors, which the pass leaves out.
    virtual Result<Element> element(std::uint64_t row) const = 0;

    // Where rows live, so that passes can tell the kernel how they read them (pass_storage.h).
    // visitStorage calls `visit` with the mapped bytes of rows [begin, end) of every feature, one
    // contiguous range per file; rows held in memory (range, inflated arrays) visit nothing.
    using StorageVisitor = std::function<void(const MappedFile &file, std::size_t offset, std::size_t length)>;
    virtual void visitStorage(std::uint64_t, std::uint64_t, const StorageVisitor &) const {}
    // Every mapping the rows are read from, each once.
    virtual std::vector<const MappedFile *> mappings() const { return {}; }
    // Bytes of one row over all features.
    virtual std::uint64_t rowBytes() const { return 0; }
};

// One pass: output position → source row.
class IndexMap
{
public:
    virtual ~IndexMap() = default;
    virtual std::uint64_t size() const = 0;
    virtual std::uint64_t row(std::uint64_t position) const = 0;
    // Whether rows come in increasing order (identity, take, skip, shard): such a pass reads its
    // files front to back; a global_shuffle's pass reads them at random.
    virtual bool inOrder() const { return true; }
};

class RandomAccess
{
public:
    virtual ~RandomAccess() = default;
    virtual const RowSource &rows() const = 0;
    // The index of a new pass (global_shuffle counts passes to draw a fresh permutation each);
    // with newPass false, an index of the same size that counts nothing (for cardinality).
    virtual std::shared_ptr<const IndexMap> openPass(bool newPass = true) const = 0;
};

// A random-access dataset: its element iterator walks the index map and reads rows one by one.
class RandomAccessDataset : public Dataset, public RandomAccess
{
public:
    using Dataset::Dataset;
    const RandomAccess *randomAccess() const override { return this; }
    std::int64_t cardinality() const override;

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &context) const override;
};

// A source's rows in their order: the dataset of every mapped source (from_npy, from_npz, the
// .npy datasets `load` reads), whatever its RowSource.
class RowSourceDataset final : public RandomAccessDataset
{
public:
    RowSourceDataset(ElementSpec spec, StageStats *stats, std::shared_ptr<const RowSource> rows)
        : RandomAccessDataset(std::move(spec), stats), m_rows(std::move(rows))
    {
    }
    const RowSource &rows() const override { return *m_rows; }
    std::shared_ptr<const IndexMap> openPass(bool newPass = true) const override;

private:
    std::shared_ptr<const RowSource> m_rows;
};

// Random access derived from the input's by remapping each pass's positions (take, skip, shard,
// global_shuffle over a random-access input).
class DerivedAccessDataset final : public RandomAccessDataset
{
public:
    using Remap = std::function<std::shared_ptr<const IndexMap>(std::shared_ptr<const IndexMap>, bool newPass)>;
    DerivedAccessDataset(DatasetPtr input, StageStats *stats, Remap remap)
        : RandomAccessDataset(input->spec(), stats), m_input(std::move(input)), m_remap(std::move(remap))
    {
    }
    const RowSource &rows() const override { return m_input->randomAccess()->rows(); }
    std::shared_ptr<const IndexMap> openPass(bool newPass = true) const override
    {
        return m_remap(m_input->randomAccess()->openPass(newPass), newPass);
    }

private:
    DatasetPtr m_input;
    Remap m_remap;
};

// A bijection on [0, n) drawn from `seed`. Up to kTableRows rows, a Fisher–Yates shuffle kept as
// a table (at most 256 KiB): on small domains a Feistel network's orders are far from uniform
// (tst_shuffle_statistics measured it). Above, an unbalanced Feistel network on the next power
// of two, cycle-walked into range: O(1) memory whatever n, so a global shuffle of billions of rows
// needs no permutation table and no buffer to fill.
class FeistelPermutation
{
public:
    static constexpr std::uint64_t kTableRows = std::uint64_t(1) << 16;
    static constexpr int kRounds = 6; // even: rounds go in pairs, one per half

    FeistelPermutation(std::uint64_t n, std::uint64_t seed);
    std::uint64_t operator()(std::uint64_t i) const;

private:
    std::uint64_t m_n;
    std::vector<std::uint32_t> m_table; // small n: the permutation itself
    unsigned m_leftBits = 0, m_rightBits = 0;
    std::uint64_t m_leftMask = 0, m_rightMask = 0;
    std::uint64_t m_keys[kRounds] = {};
};

} // namespace sluice::pipeline
