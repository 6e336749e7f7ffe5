// load's reader of npy datasets: every shard's .npy files memory-mapped (as from_npy maps its
// files), rows found through the shard rotation and read straight from the mappings. Random
// access, so batch gathers its rows in parallel and global_shuffle works over them.
#include "pipeline/sources/source_load.h"

#include "io/formats/npy_file.h"
#include "pipeline/engine/random_access.h"
#include "pipeline/sources/source_files.h"

#include <algorithm>
#include <cstring>

namespace sluice::pipeline {
namespace {

// One dataset's shards, opened: columns[feature][shard].
struct OpenedDataset
{
    ShardRotation rotation;
    std::vector<std::vector<NdArray>> columns;
    std::uint64_t firstRow = 0; // in the concatenation of the datasets
};

class LoadNpyRows final : public RowSource, public std::enable_shared_from_this<LoadNpyRows>
{
public:
    LoadNpyRows(std::vector<OpenedDataset> parts, const ElementSpec &spec) : m_parts(std::move(parts))
    {
        for (const FeatureSpec &f : spec.features) {
            m_dtypes.push_back(f.type.dtype);
            m_rowShapes.push_back(f.shape);
            m_rowBytes.push_back(elementCount(f.shape) * itemSize(f.type.dtype));
        }
        for (const auto &p : m_parts)
            m_rows += p.rotation.rows();
    }

    std::uint64_t rowCount() const override { return m_rows; }

    void gather(std::size_t feature, std::span<const std::uint64_t> rows, std::byte *out) const override
    {
        const std::size_t bytes = std::size_t(m_rowBytes[feature]);
        for (std::size_t i = 0; i < rows.size(); ++i)
            std::memcpy(out + i * bytes, rowData(feature, rows[i]), bytes);
    }

    Result<Element> element(std::uint64_t row) const override
    {
        Element e;
        e.tensors.reserve(m_dtypes.size());
        for (std::size_t f = 0; f < m_dtypes.size(); ++f)
            // The element keeps this source (and so the mappings) alive, not just the bytes.
            e.tensors.push_back(Tensor::view(m_dtypes[f], m_rowShapes[f],
                                             SharedBytes{shared_from_this(), {rowData(f, row), std::size_t(m_rowBytes[f])}}));
        return e;
    }

    std::vector<const MappedFile *> mappings() const override
    {
        std::vector<const MappedFile *> files;
        for (const auto &p : m_parts)
            for (const auto &column : p.columns)
                for (const auto &array : column)
                    if (const MappedFile *file = array.mapping())
                        files.push_back(file);
        return files;
    }

    std::uint64_t rowBytes() const override
    {
        std::uint64_t bytes = 0;
        for (auto b : m_rowBytes)
            bytes += b;
        return bytes;
    }

private:
    const std::byte *rowData(std::size_t feature, std::uint64_t row) const
    {
        const auto it = std::upper_bound(m_parts.begin(), m_parts.end(), row, [](std::uint64_t r, const OpenedDataset &p) { return r < p.firstRow; });
        const OpenedDataset &part = *std::prev(it);
        const auto place = part.rotation.locate(row - part.firstRow);
        return part.columns[feature][place.shard].data().data() + place.row * m_rowBytes[feature];
    }

    std::vector<OpenedDataset> m_parts; // by firstRow
    std::vector<DType> m_dtypes;
    std::vector<Shape> m_rowShapes;
    std::vector<std::uint64_t> m_rowBytes;
    std::uint64_t m_rows = 0;
};

// Opens a shard's file of one feature and checks it against the manifest (a reader relies on
// its dtype, row shape and row count).
NdArray openShardFile(Params &params, const SavedDataset &part, std::size_t shard, std::size_t feature)
{
    const DatasetFeature &f = part.manifest.features[feature];
    const std::string path = part.fileOf(shard, feature);
    NdArray array = valueOrFail(params, "path", openNpy(path));
    if (!array.isViewable())
        array = array.toNative();
    const std::uint64_t records = part.manifest.shards[shard].records;
    if (array.ndim() == 0 || array.dtype() != f.dtype || array.rowShape() != f.rowShape || array.rowCount() != records) {
        const auto shapeOf = [](std::vector<std::uint64_t> s) { return shapeText(Shape(s.begin(), s.end())); };
        std::vector<std::uint64_t> expected{records};
        expected.insert(expected.end(), f.rowShape.begin(), f.rowShape.end());
        params.fail("path", path + ": holds " + std::string(dtypeName(array.dtype())) + " " + shapeOf(array.shape()) + " where manifest.json says " +
                                std::string(dtypeName(f.dtype)) + " " + shapeOf(expected));
    }
    return array;
}

} // namespace

std::shared_ptr<Dataset> makeNpyLoad(BuildContext &context, Params &params, std::vector<SavedDataset> parts, ElementSpec spec)
{
    std::vector<OpenedDataset> opened;
    std::uint64_t firstRow = 0;
    for (const SavedDataset &part : parts) {
        // Mapped once per node and folder, however many per-file copies an interleave makes.
        auto columns = context.buildOnce<std::vector<std::vector<NdArray>>>(params.node().id, "npy " + part.folder, [&] {
            std::vector<std::vector<NdArray>> byFeature(part.manifest.features.size());
            for (std::size_t f = 0; f < byFeature.size(); ++f)
                for (std::size_t s = 0; s < part.manifest.shards.size(); ++s)
                    byFeature[f].push_back(openShardFile(params, part, s, f));
            return byFeature;
        });
        opened.push_back({part.rotation, *columns, firstRow});
        firstRow += part.rotation.rows();
    }
    StageStats *stats = context.statsFor(params.node());
    auto rows = std::make_shared<LoadNpyRows>(std::move(opened), spec);
    return std::make_shared<RowSourceDataset>(std::move(spec), stats, std::move(rows));
}

} // namespace sluice::pipeline
