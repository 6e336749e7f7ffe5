// load: the datasets that `save` and `sluice convert` write (io/writers/shard_writer.h), read back as
// tf.data's Dataset.load reads what Dataset.save wrote. `path` names dataset folders (or their
// manifest.json); several are read one after another and must hold the same features. Within a
// dataset the shards are read in turn (ShardRotation), which gives back the order in which save
// received the rows.
//
// TFRecord datasets are decoded as from_tfrecord decodes (ExampleColumns, every CRC checked) and
// each feature is cast back to the dtype the manifest records (a FloatList holds float32, an
// Int64List int64; uint8 images come back as uint8). Npy datasets are random access, rows read
// straight from the mappings (source_load_npy.cpp).
#include "pipeline/sources/source_load.h"

#include "io/formats/tfrecord_reader.h"
#include "pipeline/engine/dtype_dispatch.h"
#include "pipeline/sources/example_columns.h"
#include "pipeline/sources/source_files.h"

#include <algorithm>
#include <filesystem>
#include <type_traits>

namespace sluice::pipeline {

ShardRotation::ShardRotation(const std::vector<std::uint64_t> &shardRows)
{
    std::vector<std::uint64_t> levels(shardRows.begin(), shardRows.end());
    std::sort(levels.begin(), levels.end());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    std::uint64_t round = 0;
    for (std::uint64_t level : levels) {
        if (level == round)
            continue; // empty shards take no part
        Segment segment{m_rows, round, {}};
        for (std::size_t s = 0; s < shardRows.size(); ++s)
            if (shardRows[s] > round)
                segment.shards.push_back(s);
        m_rows += (level - round) * segment.shards.size();
        m_segments.push_back(std::move(segment));
        round = level;
    }
}

ShardRotation::Place ShardRotation::locate(std::uint64_t row) const
{
    const auto it = std::upper_bound(m_segments.begin(), m_segments.end(), row,
                                     [](std::uint64_t r, const Segment &s) { return r < s.firstRow; });
    const Segment &s = *std::prev(it);
    const std::uint64_t offset = row - s.firstRow, width = s.shards.size();
    return {s.shards[std::size_t(offset % width)], s.firstRound + offset / width};
}

std::string SavedDataset::fileOf(std::size_t shard, std::size_t file) const
{
    return (std::filesystem::path(folder) / manifest.shards.at(shard).files.at(file)).string();
}

namespace {

// A decoded column (float32 or int64) converted to the dtype the manifest records. The values
// were written from that dtype, so integers convert exactly; float64 comes back as the float32
// the Example held.
Tensor castColumn(const Tensor &column, DType to)
{
    if (column.dtype() == to)
        return column;
    Tensor out = Tensor::allocate(to, column.shape());
    const std::uint64_t n = column.count();
    visitDType(column.dtype(), [&](auto inTag) {
        using In = decltype(inTag);
        const In *src = column.as<In>();
        visitDType(to, [&](auto outTag) {
            using Out = decltype(outTag);
            Out *dst = out.mutableAs<Out>();
            for (std::uint64_t i = 0; i < n; ++i) {
                if constexpr (std::is_same_v<Out, Float16>)
                    dst[i] = Float16::fromFloat(float(toDouble(src[i])));
                else if constexpr (std::is_same_v<In, Float16>)
                    dst[i] = Out(float(src[i]));
                else if constexpr (std::is_same_v<Out, bool>)
                    dst[i] = src[i] != In(0);
                else
                    dst[i] = static_cast<Out>(src[i]);
            }
            return 0;
        });
        return 0;
    });
    return out;
}

// Chunks of rows of the datasets one after another, each dataset's shards read in rotation.
// A damaged record, or a shard that holds another number of records than its manifest says,
// ends the pass: the rows before it are delivered in a chunk that carries the error.
class LoadTfRecordChunks final : public Iterator
{
public:
    LoadTfRecordChunks(const std::vector<SavedDataset> &parts, const std::vector<FixedLenFeature> &decode, const ElementSpec &decodeSpec,
                       const ElementSpec &spec)
        : m_parts(parts), m_spec(spec), m_columns(decode, decodeSpec, rowsPerChunk(decodeSpec))
    {
    }

    Result<Poll> next(Element &out) override
    {
        if (m_ended)
            return Poll::End;
        for (;;) {
            if (m_part >= m_parts.size()) {
                m_ended = true;
                if (m_columns.rows() == 0)
                    return Poll::End;
                out = take();
                return Poll::Ready;
            }
            const SavedDataset &part = m_parts[m_part];
            if (m_readers.empty()) {
                for (std::size_t s = 0; s < part.manifest.shards.size(); ++s) {
                    auto reader = TfRecordReader::open(part.fileOf(s), part.manifest.compression, true);
                    if (!reader.ok())
                        return endWith(reader.error(), out);
                    m_readers.push_back(std::move(reader).value());
                }
            }
            if (m_row == part.rotation.rows()) {
                // Every shard read to its manifest's count: nothing may follow.
                for (auto &reader : m_readers) {
                    auto extra = reader.next();
                    if (!extra.ok())
                        return endWith(extra.error(), out);
                    if (*extra)
                        return endWith(Error::corrupt(reader.path(), "holds more records than manifest.json says (" +
                                                                         std::to_string(reader.recordsRead() - 1) + ")"),
                                       out);
                }
                m_readers.clear();
                m_row = 0;
                ++m_part;
                continue;
            }
            const auto place = part.rotation.locate(m_row++);
            TfRecordReader &reader = m_readers[place.shard];
            auto record = reader.next();
            if (!record.ok())
                return endWith(record.error(), out);
            if (!*record)
                return endWith(Error::corrupt(reader.path(), "ends after " + std::to_string(reader.recordsRead()) + " records; manifest.json says " +
                                                                 std::to_string(part.manifest.shards[place.shard].records)),
                               out);
            const auto what = [&reader] { return reader.path() + ": record " + std::to_string(reader.recordsRead() - 1); };
            if (auto status = m_columns.add(**record, what); !status.ok())
                return endWith(status.error(), out);
            if (m_columns.full()) {
                out = take();
                return Poll::Ready;
            }
        }
    }

private:
    // The rows decoded so far, each column in the dtype the manifest records.
    Element take()
    {
        Element chunk = m_columns.take();
        for (std::size_t f = 0; f < m_spec.features.size(); ++f)
            if (!m_spec.features[f].type.isString)
                chunk.tensors[f] = castColumn(chunk.tensors[f], m_spec.features[f].type.dtype);
        return chunk;
    }
    Poll endWith(const Error &error, Element &out)
    {
        out = take();
        attachChunkError(out, error);
        m_ended = true;
        m_readers.clear();
        return Poll::Ready;
    }

    const std::vector<SavedDataset> &m_parts;
    const ElementSpec &m_spec;
    ExampleColumns m_columns;
    std::size_t m_part = 0;
    std::uint64_t m_row = 0; // within the current part
    std::vector<TfRecordReader> m_readers; // the current part's shards
    bool m_ended = false;
};

class LoadTfRecordDataset final : public Dataset, public ChunkedRows
{
public:
    LoadTfRecordDataset(ElementSpec spec, StageStats *stats, std::vector<SavedDataset> parts, std::vector<FixedLenFeature> decode,
                        ElementSpec decodeSpec)
        : Dataset(std::move(spec), stats), m_parts(std::move(parts)), m_decode(std::move(decode)), m_decodeSpec(std::move(decodeSpec))
    {
    }

    std::int64_t cardinality() const override
    {
        std::uint64_t rows = 0;
        for (const auto &p : m_parts)
            rows += p.rotation.rows();
        return std::int64_t(rows);
    }
    const ChunkedRows *chunkedRows() const override { return this; }
    std::unique_ptr<Iterator> makeChunkIterator(const IteratorContext &) const override { return measureChunks(chunks(), stats()); }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &) const override { return rowsOfChunks(chunks(), spec()); }

private:
    // The dataset outlives its iterators (the pipeline keeps it), so they may refer to its members.
    std::unique_ptr<Iterator> chunks() const { return std::make_unique<LoadTfRecordChunks>(m_parts, m_decode, m_decodeSpec, spec()); }

    std::vector<SavedDataset> m_parts;
    std::vector<FixedLenFeature> m_decode;
    ElementSpec m_decodeSpec;
};

std::shared_ptr<Dataset> makeTfRecordLoad(BuildContext &context, Params &params, std::vector<SavedDataset> parts, ElementSpec spec)
{
    std::vector<FixedLenFeature> decode;
    ElementSpec decodeSpec;
    for (const FeatureSpec &f : spec.features) {
        // The list kind the Example holds the feature as (shard_writer.h).
        const ValueType type = f.type.isString ? ValueType::string() : ValueType{isFloating(f.type.dtype) ? DType::Float32 : DType::Int64, false};
        decode.push_back({f.name, type, f.shape, std::nullopt});
        decodeSpec.features.push_back({f.name, type, f.shape});
    }
    return std::make_shared<LoadTfRecordDataset>(std::move(spec), context.statsFor(params.node()), std::move(parts), std::move(decode),
                                                 std::move(decodeSpec));
}

// The dataset folders `path` names (folders holding a manifest.json, or the manifests
// themselves), each with its manifest, in the order given. Read once per node: an interleave's
// per-file copies share them.
using Manifests = std::vector<std::pair<std::string, DatasetManifest>>;
const Manifests &readManifests(BuildContext &context, Params &params)
{
    return *context.buildOnce<Manifests>(params.node().id, "manifests", [&] {
        const nlohmann::json *value = params.raw("path");
        if (!value)
            params.fail("path", "missing (this parameter is required)");
        Manifests manifests;
        for (const auto &path : expandSourceFiles(context, params, "path", *value)) {
            const std::filesystem::path p(path);
            const std::string folder = p.filename() == kDatasetManifestName ? p.parent_path().string() : path;
            auto manifest = readDatasetManifest(folder);
            if (!manifest)
                params.fail("path", manifest.error().message());
            manifests.emplace_back(folder, std::move(manifest).value());
        }
        return manifests;
    });
}

std::string featuresText(const std::vector<DatasetFeature> &features)
{
    std::string s;
    for (const DatasetFeature &f : features) {
        std::string shape = "(";
        for (std::size_t i = 0; i < f.rowShape.size(); ++i)
            shape += (i ? ", " : "") + std::to_string(f.rowShape[i]);
        shape += f.rowShape.size() == 1 ? ",)" : ")";
        s += (s.empty() ? "" : ", ") + f.name + ": " + f.typeName() + " " + (f.variableLength ? "(variable length)" : shape);
    }
    return "{" + s + "}";
}

std::shared_ptr<Dataset> buildLoad(BuildContext &context, Params &params, const Inputs &)
{
    const Manifests &all = readManifests(context, params);
    // Every dataset holds the same features, in the same order, as the first.
    const auto &[firstFolder, first] = all.front();
    for (const auto &[folder, manifest] : all) {
        if (manifest.format != first.format)
            params.fail("path", folder + " holds " + datasetFormatName(manifest.format) + " shards where " + firstFolder + " holds " +
                                    datasetFormatName(first.format) + " ones");
        if (manifest.features != first.features)
            params.fail("path", folder + " holds " + featuresText(manifest.features) + " where " + firstFolder + " holds " +
                                    featuresText(first.features));
    }
    if (first.features.empty())
        params.fail("path", firstFolder + ": the manifest lists no features");
    ElementSpec spec;
    for (const DatasetFeature &f : first.features) {
        if (f.variableLength)
            params.fail("path", "feature \"" + f.name + "\" has rows of varying length; load reads fixed-shape features only (read the "
                                                         "shards with tf.io.VarLenFeature, or save the feature with a fixed shape)");
        spec.features.push_back({f.name, f.isString ? ValueType::string() : ValueType{f.dtype, false},
                                 Shape(f.rowShape.begin(), f.rowShape.end())});
    }

    // The datasets this copy reads: all of them, or the one an interleave's sub-pipeline keeps.
    std::vector<std::string> folders;
    for (const auto &entry : all)
        folders.push_back(entry.first);
    std::vector<SavedDataset> parts;
    for (const auto &folder : filesInScope(context, params, folders)) {
        const DatasetManifest &manifest = std::find_if(all.begin(), all.end(), [&](const auto &e) { return e.first == folder; })->second;
        std::vector<std::uint64_t> rows;
        for (const auto &shard : manifest.shards)
            rows.push_back(shard.records);
        parts.push_back({folder, manifest, ShardRotation(rows)});
    }
    if (first.format == DatasetFormat::Npy)
        return makeNpyLoad(context, params, std::move(parts), std::move(spec));
    return makeTfRecordLoad(context, params, std::move(parts), std::move(spec));
}

} // namespace

void registerLoadSource(std::vector<OpInfo> &ops)
{
    ops.push_back({"load", "sources",
                   "The rows of datasets written by save or sluice convert (a folder with a manifest.json), as tf.data Dataset.load: "
                   "features, dtypes and shapes from the manifest, shards read in turn so that the rows come back in the order they "
                   "were saved. npy datasets are memory-mapped and random access; tfrecord ones are decoded with every CRC checked.",
                   {{"path", "path|glob|list", "",
                     "dataset folder(s) or their manifest.json (relative to the project); several are read one after another and must "
                     "hold the same features",
                     true}},
                   0, 0, buildLoad});
}

} // namespace sluice::pipeline
