// Random-access sources: from_npy (one or more .npy files per feature), from_npz (members of
// one or more archives as features) and range. Rows are read straight from the mapping.
#include "pipeline/engine/build_context.h"
#include "pipeline/engine/op_registry.h"
#include "pipeline/engine/random_access.h"
#include "pipeline/sources/source_files.h"

#include "io/formats/npy_file.h"
#include "io/formats/npz_file.h"
#include "io/storage/row_gather.h"
#include "io/storage/storage_probe.h"

#include <algorithm>
#include <cstring>

namespace sluice::pipeline {
namespace {

// One feature: the same array's rows spread over one or more files, read one after another.
struct ArrayColumn
{
    std::string name;
    std::vector<NdArray> parts;
    std::vector<std::uint64_t> starts; // first global row of each part, plus the total at the end
    std::uint64_t rowBytes = 0;
    DType dtype = DType::Float32;
    Shape rowShape;
};

class ArrayRowSource final : public RowSource, public std::enable_shared_from_this<ArrayRowSource>
{
public:
    // The columns are shared by every per-file copy of the source (interleave's sub-pipelines),
    // so each file is opened and mapped once however many copies there are.
    ArrayRowSource(std::shared_ptr<const std::vector<ArrayColumn>> columns, std::uint64_t begin, std::uint64_t end)
        : m_shared(std::move(columns)), m_columns(*m_shared), m_begin(begin), m_end(end)
    {
    }

    std::uint64_t rowCount() const override { return m_end - m_begin; }

    void gather(std::size_t feature, std::span<const std::uint64_t> rows, std::byte *out) const override
    {
        const ArrayColumn &c = m_columns[feature];
        if (c.parts.size() == 1) {
            if (m_begin == 0) {
                gatherRows(c.parts[0], rows, out);
                return;
            }
            thread_local std::vector<std::uint64_t> absolute;
            absolute.resize(rows.size());
            for (std::size_t i = 0; i < rows.size(); ++i)
                absolute[i] = rows[i] + m_begin;
            gatherRows(c.parts[0], absolute, out);
            return;
        }
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto [part, local] = locate(c, rows[i] + m_begin);
            std::memcpy(out + i * c.rowBytes, c.parts[part].data().data() + local * c.rowBytes, c.rowBytes);
        }
    }

    void visitStorage(std::uint64_t begin, std::uint64_t end, const StorageVisitor &visit) const override
    {
        begin += m_begin;
        end = std::min(end + m_begin, m_end);
        for (const auto &c : m_columns)
            for (std::uint64_t row = begin; row < end;) {
                const auto [part, local] = locate(c, row);
                const NdArray &array = c.parts[part];
                const std::uint64_t partEnd = std::min(end, c.starts[part + 1]);
                if (const MappedFile *file = array.mapping()) {
                    const auto offset = std::size_t(array.data().data() - file->bytes().data());
                    visit(*file, offset + std::size_t(local * c.rowBytes), std::size_t((partEnd - row) * c.rowBytes));
                }
                row = partEnd;
            }
    }

    std::vector<const MappedFile *> mappings() const override
    {
        // Only the parts this source's rows touch (one file's inside an interleave sub-pipeline).
        std::vector<const MappedFile *> files;
        visitStorage(0, rowCount(), [&files](const MappedFile &file, std::size_t, std::size_t) {
            if (std::find(files.begin(), files.end(), &file) == files.end())
                files.push_back(&file);
        });
        return files;
    }

    std::uint64_t rowBytes() const override
    {
        std::uint64_t bytes = 0;
        for (const auto &c : m_columns)
            bytes += c.rowBytes;
        return bytes;
    }

    Result<Element> element(std::uint64_t row) const override
    {
        Element e;
        e.tensors.reserve(m_columns.size());
        for (const auto &c : m_columns) {
            const auto [part, local] = locate(c, row + m_begin);
            const std::byte *p = c.parts[part].data().data() + local * c.rowBytes;
            // The element keeps this source (and so the mappings) alive, not just the bytes.
            e.tensors.push_back(Tensor::view(c.dtype, c.rowShape, SharedBytes{shared_from_this(), {p, std::size_t(c.rowBytes)}}));
        }
        return e;
    }

private:
    static std::pair<std::size_t, std::uint64_t> locate(const ArrayColumn &c, std::uint64_t row)
    {
        if (c.parts.size() == 1)
            return {0, row};
        const auto it = std::upper_bound(c.starts.begin(), c.starts.end(), row);
        const std::size_t part = std::size_t(it - c.starts.begin()) - 1;
        return {part, row - c.starts[part]};
    }

    std::shared_ptr<const std::vector<ArrayColumn>> m_shared;
    const std::vector<ArrayColumn> &m_columns;
    std::uint64_t m_begin, m_end;
};

NdArray native(Params &params, const std::string &param, NdArray array)
{
    if (array.ndim() == 0)
        params.fail(param, array.name() + ": is a 0-d array; a source needs at least one dimension (its rows)");
    return array.isViewable() ? array : array.toNative(); // big-endian or Fortran order: converted in memory
}

void addPart(Params &params, const std::string &param, ArrayColumn &column, NdArray array)
{
    array = native(params, param, std::move(array));
    Shape rowShape;
    for (auto d : array.rowShape())
        rowShape.push_back(std::int64_t(d));
    if (column.parts.empty()) {
        column.dtype = array.dtype();
        column.rowShape = rowShape;
        column.rowBytes = array.rowBytes();
        column.starts = {0};
    } else if (array.dtype() != column.dtype || rowShape != column.rowShape) {
        params.fail(param, array.name() + ": rows are " + std::string(dtypeName(array.dtype())) + " " + shapeText(rowShape) +
                               " but the feature's first file has " + std::string(dtypeName(column.dtype)) + " " +
                               shapeText(column.rowShape));
    }
    column.starts.push_back(column.starts.back() + array.rowCount());
    column.parts.push_back(std::move(array));
}

// Checks that every feature has as many rows as the first, and builds the dataset (restricted
// to one file of the first feature inside an interleave's sub-pipeline).
std::shared_ptr<Dataset> makeArrayDataset(BuildContext &context, Params &params, std::shared_ptr<const std::vector<ArrayColumn>> shared,
                                          const std::string &param)
{
    const std::vector<ArrayColumn> &columns = *shared;
    const ArrayColumn &first = columns.front();
    for (const auto &c : columns)
        if (c.starts.back() != first.starts.back())
            params.fail(param, "features have different lengths: \"" + first.name + "\" has " + std::to_string(first.starts.back()) +
                                        " rows, \"" + c.name + "\" has " + std::to_string(c.starts.back()));
    ElementSpec spec;
    for (const auto &c : columns)
        spec.features.push_back({c.name, ValueType{c.dtype, false}, c.rowShape});
    std::uint64_t begin = 0, end = first.starts.back();
    context.noteFiles(params.node().id, first.parts.size());
    if (auto f = context.fileFilter()) {
        begin = first.starts[*f];
        end = first.starts[*f + 1];
    }
    auto rows = std::make_shared<ArrayRowSource>(std::move(shared), begin, end);
    StageStats *stats = context.statsFor(params.node());
    stats->readsMappedRows = true;
    stats->storage.residentBudgetBytes.store(context.residentBudget());
    if (!first.parts.empty()) {
        // An .npz member's name is "archive.npz:member"; the device is the archive's.
        const std::string &name = first.parts.front().name();
        const std::size_t colon = name.rfind(':');
        auto known = knownStorage(name);
        if (!known && colon != std::string::npos)
            known = knownStorage(name.substr(0, colon));
        if (known) {
            stats->storageDevice = known->device.name;
            stats->storageDeviceIops = known->randomReadIops;
        }
    }
    return std::make_shared<RowSourceDataset>(std::move(spec), stats, std::move(rows));
}

std::shared_ptr<Dataset> buildFromNpy(BuildContext &context, Params &params, const Inputs &)
{
    const nlohmann::json *features = params.raw("features");
    if (!features || !features->is_object() || features->empty())
        params.fail("features", "must be an object mapping feature names to .npy paths (or lists / globs of paths)");
    auto columns = context.buildOnce<std::vector<ArrayColumn>>(params.node().id, "columns", [&] {
        std::vector<ArrayColumn> opened;
        for (const auto &[name, value] : features->items()) {
            const std::string param = "features." + name;
            ArrayColumn column;
            column.name = name;
            for (const auto &path : expandSourceFiles(context, params, param, value))
                addPart(params, param, column, valueOrFail(params, param, openNpy(path)));
            opened.push_back(std::move(column));
        }
        return opened;
    });
    return makeArrayDataset(context, params, std::move(columns), "features");
}

std::vector<ArrayColumn> openNpzColumns(Params &params, const std::vector<std::string> &paths, std::vector<std::string> members);

std::shared_ptr<Dataset> buildFromNpz(BuildContext &context, Params &params, const Inputs &)
{
    const nlohmann::json *pathValue = params.raw("path");
    if (!pathValue)
        params.fail("path", "missing (this parameter is required)");
    std::vector<std::string> members = params.strings("members", std::vector<std::string>{});
    auto columns = context.buildOnce<std::vector<ArrayColumn>>(params.node().id, "columns", [&] {
        return openNpzColumns(params, expandSourceFiles(context, params, "path", *pathValue), members);
    });
    return makeArrayDataset(context, params, std::move(columns), params.has("members") ? "members" : "path");
}

std::vector<ArrayColumn> openNpzColumns(Params &params, const std::vector<std::string> &paths, std::vector<std::string> members)
{
    std::vector<ArrayColumn> columns;
    for (const auto &path : paths) {
        NpzFile npz = valueOrFail(params, "path", NpzFile::open(path));
        if (columns.empty()) {
            if (members.empty())
                for (const auto &m : npz.members())
                    members.push_back(m.name);
            for (const auto &m : members)
                columns.push_back(ArrayColumn{m, {}, {}, 0, DType::Float32, {}});
        }
        for (auto &column : columns) {
            const auto *member = npz.find(column.name);
            if (!member) {
                std::string known;
                for (const auto &m : npz.members())
                    known += (known.empty() ? "" : ", ") + m.name;
                params.fail("members", path + ": has no array \"" + column.name + "\" (it has: " + known + ")");
            }
            addPart(params, "path", column, valueOrFail(params, "path", npz.load(*member)));
        }
    }
    if (columns.empty())
        params.fail("path", "the archive holds no arrays");
    return columns;
}

class RangeRowSource final : public RowSource
{
public:
    RangeRowSource(std::int64_t start, std::int64_t step, std::uint64_t count) : m_start(start), m_step(step), m_count(count) {}
    std::uint64_t rowCount() const override { return m_count; }
    void gather(std::size_t, std::span<const std::uint64_t> rows, std::byte *out) const override
    {
        auto *values = reinterpret_cast<std::int64_t *>(out);
        for (std::size_t i = 0; i < rows.size(); ++i)
            values[i] = m_start + std::int64_t(rows[i]) * m_step;
    }
    Result<Element> element(std::uint64_t row) const override
    {
        Element e;
        e.tensors.push_back(Tensor::scalar<std::int64_t>(m_start + std::int64_t(row) * m_step));
        return e;
    }

private:
    std::int64_t m_start, m_step;
    std::uint64_t m_count;
};

std::shared_ptr<Dataset> buildRange(BuildContext &context, Params &params, const Inputs &)
{
    const std::int64_t start = params.integer("start", 0, INT64_MIN / 2, INT64_MAX / 2);
    const std::int64_t stop = params.integer("stop", std::nullopt, INT64_MIN / 2, INT64_MAX / 2);
    const std::int64_t step = params.integer("step", 1, INT64_MIN / 2, INT64_MAX / 2);
    if (step == 0)
        params.fail("step", "must not be zero");
    const std::string name = params.string("name", "value");
    std::uint64_t count = 0;
    if (step > 0 && stop > start)
        count = std::uint64_t((stop - start + step - 1) / step);
    else if (step < 0 && stop < start)
        count = std::uint64_t((start - stop + (-step) - 1) / (-step));
    ElementSpec spec;
    spec.features.push_back({name, ValueType{DType::Int64, false}, {}});
    return std::make_shared<RowSourceDataset>(std::move(spec), context.statsFor(params.node()),
                                          std::make_shared<RangeRowSource>(start, step, count));
}

} // namespace

void registerSourceOps(std::vector<OpInfo> &ops)
{
    ops.push_back({"from_npy", "sources",
                   "Rows of .npy files, memory-mapped: one file (or list / glob of files) per feature, all with the same "
                   "number of rows. tf.data: Dataset.from_tensor_slices over np.load(mmap_mode='r').",
                   {{"features", "features", "", "feature name → .npy path, list of paths or glob pattern (relative to the project)", true}},
                   0, 0, buildFromNpy});
    ops.push_back({"from_npz", "sources",
                   "Arrays of .npz archives as features (stored members mapped, deflated ones inflated). tf.data: "
                   "from_tensor_slices(dict(np.load(path))).",
                   {{"path", "path|glob|list", "", ".npz archive(s); several are read one after another", true},
                    {"members", "members", "all", "the arrays to use as features, by name"}},
                   0, 0, buildFromNpz});
    ops.push_back({"range", "sources", "Integers start, start+step, … below stop, as tf.data.Dataset.range.",
                   {{"start", "int", "0", "first value"},
                    {"stop", "int", "", "end (exclusive)", true},
                    {"step", "int", "1", "increment (negative counts down)"},
                    {"name", "string", "value", "the feature's name"}},
                   0, 0, buildRange});
    registerTfRecordSource(ops);
    registerCsvSource(ops);
    registerParquetSource(ops);
    registerFilesSource(ops);
}

} // namespace sluice::pipeline
