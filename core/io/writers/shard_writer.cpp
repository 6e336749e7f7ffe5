#include "io/writers/shard_writer.h"

#include "io/writers/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <unistd.h>

namespace sluice {

namespace fs = std::filesystem;

// What every shard of one dataset shares; immutable once the writer is created.
struct ShardWriter::Layout
{
    std::string folder;
    DatasetFormat format = DatasetFormat::TfRecord;
    TfRecordWriter::Compression compression = TfRecordWriter::Compression::None;
    std::vector<DatasetFeature> features;
};

namespace {

std::string join(const std::string &folder, const std::string &name) { return (fs::path(folder) / name).string(); }

std::string padded(std::uint64_t v, std::size_t width)
{
    std::string s = std::to_string(v);
    return s.size() < width ? std::string(width - s.size(), '0') + s : s;
}

// Expands {index}, {count} and {feature}; an unknown placeholder or a stray brace is an error.
Result<std::string> expandPattern(const std::string &pattern, int index, int count, const std::string &feature)
{
    const std::size_t width = std::max<std::size_t>(5, std::to_string(count).size());
    std::string out;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '}')
            return Error::invalid("pattern", "'" + pattern + "' has a '}' without its '{'");
        if (pattern[i] != '{') {
            out += pattern[i];
            continue;
        }
        const std::size_t end = pattern.find('}', i);
        if (end == std::string::npos)
            return Error::invalid("pattern", "'" + pattern + "' has a '{' without its '}'");
        const std::string key = pattern.substr(i + 1, end - i - 1);
        if (key == "index")
            out += padded(std::uint64_t(index), width);
        else if (key == "count")
            out += padded(std::uint64_t(count), width);
        else if (key == "feature")
            out += feature;
        else
            return Error::invalid("pattern", "'" + pattern + "': unknown {" + key + "} (known: {index}, {count}, {feature})");
        i = end;
    }
    return out;
}

Status checkFeatures(const std::vector<DatasetFeature> &features, DatasetFormat format)
{
    if (features.empty())
        return Error::invalid("features", "a dataset needs at least one feature");
    std::set<std::string> seen;
    for (const DatasetFeature &f : features) {
        const std::string what = "feature '" + f.name + "'";
        if (f.name.empty())
            return Error::invalid("features", "a feature has no name");
        if (!seen.insert(f.name).second)
            return Error::invalid(what, "given twice");
        std::uint64_t elements = 1;
        for (std::uint64_t d : f.rowShape) {
            if (d != 0 && elements > std::numeric_limits<std::uint64_t>::max() / d)
                return Error::invalid(what, "row shape overflows 64 bits");
            elements *= d;
        }
        if (format != DatasetFormat::Npy)
            continue;
        if (f.isString)
            return Error::unsupported(what, "npy shards hold numeric features only; write strings as tfrecord");
        if (f.variableLength)
            return Error::unsupported(what, "npy shards need a fixed row shape; write variable-length features as tfrecord");
        if (f.rowElements() == 0)
            return Error::unsupported(what, "npy shards cannot hold rows of zero elements");
    }
    return Status::success();
}

} // namespace

// ---- DatasetFeature -------------------------------------------------------------------------

const char *datasetFormatName(DatasetFormat format) { return format == DatasetFormat::Npy ? "npy" : "tfrecord"; }

Result<DatasetFormat> parseDatasetFormat(const std::string &name)
{
    if (name == "tfrecord")
        return DatasetFormat::TfRecord;
    if (name == "npy")
        return DatasetFormat::Npy;
    return Error::invalid("format", "'" + name + "' is not \"tfrecord\" or \"npy\"");
}

std::uint64_t DatasetFeature::rowElements() const
{
    std::uint64_t n = 1;
    for (std::uint64_t d : rowShape)
        n *= d;
    return n;
}

std::string DatasetFeature::typeName() const { return isString ? "string" : std::string(dtypeName(dtype)); }

// ---- ShardWriter ----------------------------------------------------------------------------

ShardWriter::ShardWriter(std::shared_ptr<const Layout> layout, int index, std::vector<std::string> files)
    : m_layout(std::move(layout)), m_index(index), m_files(std::move(files))
{
}

ShardWriter::~ShardWriter() = default; // unpublished files' writers remove their temporaries

std::string ShardWriter::pathOf(std::size_t file) const { return join(m_layout->folder, m_files[file]); }

Status ShardWriter::fail(Error error)
{
    m_failed = true;
    m_error = error;
    return error;
}

Status ShardWriter::open()
{
    if (m_layout->format == DatasetFormat::TfRecord) {
        auto w = TfRecordWriter::create(pathOf(0), m_layout->compression);
        if (!w)
            return fail(w.error());
        m_tfrecord.emplace(std::move(w).value());
        m_values.resize(m_layout->features.size());
        return Status::success();
    }
    for (std::size_t i = 0; i < m_layout->features.size(); ++i) {
        const DatasetFeature &f = m_layout->features[i];
        auto w = NpyWriter::create(pathOf(i), {f.dtype, nativeByteOrder()}, f.rowShape);
        if (!w)
            return fail(w.error());
        m_npy.push_back(std::move(w).value());
    }
    return Status::success();
}

Status ShardWriter::check(std::uint64_t rows, std::span<const ColumnRows> columns) const
{
    const std::string shardName = "shard " + std::to_string(m_index);
    if (m_closed)
        return Error::invalid(shardName, "rows appended after close()");
    if (m_failed)
        return Error::io(shardName, "an earlier write failed: " + m_error->message());
    const auto &features = m_layout->features;
    if (columns.size() != features.size())
        return Error::invalid(shardName, std::to_string(columns.size()) + " columns given for " + std::to_string(features.size()) + " features");
    for (std::size_t i = 0; i < features.size(); ++i) {
        const DatasetFeature &f = features[i];
        const ColumnRows &c = columns[i];
        const std::string what = "feature '" + f.name + "'";
        const std::size_t item = f.isString ? 1 : itemSize(f.dtype);
        if (!f.isString && c.data.size() % item != 0)
            return Error::invalid(what, std::to_string(c.data.size()) + " bytes are not a whole number of " + f.typeName() + " values");
        const std::uint64_t given = f.isString ? c.strings.size() : c.data.size() / item;
        std::uint64_t want = 0;
        if (f.variableLength) {
            if (c.rowLengths.size() != rows)
                return Error::invalid(what, std::to_string(c.rowLengths.size()) + " row lengths for " + std::to_string(rows) + " rows");
            for (std::uint64_t n : c.rowLengths)
                want += n;
        } else {
            const std::uint64_t per = f.rowElements();
            if (per != 0 && rows > std::numeric_limits<std::uint64_t>::max() / per)
                return Error::invalid(what, "row count overflows");
            want = rows * per;
        }
        if (given != want)
            return Error::invalid(what, std::to_string(given) + " values given where " + std::to_string(rows) + " rows hold " + std::to_string(want));
        // Checked here rather than when encoding, so that a refused append writes nothing.
        if (m_layout->format == DatasetFormat::TfRecord && f.dtype == DType::UInt64 && !f.isString)
            for (std::size_t at = 0; at < c.data.size(); at += 8)
                if (loadElement<std::uint64_t>(c.data.data() + at, false) > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
                    return Error::invalid(what, "a uint64 value is larger than the largest int64 (an Int64List cannot hold it)");
    }
    return Status::success();
}

Status ShardWriter::appendRecords(std::uint64_t rows, std::span<const ColumnRows> columns)
{
    const auto &features = m_layout->features;
    m_offsets.assign(features.size(), 0);
    for (std::uint64_t r = 0; r < rows; ++r) {
        for (std::size_t i = 0; i < features.size(); ++i) {
            const DatasetFeature &f = features[i];
            const std::size_t n = std::size_t(f.variableLength ? columns[i].rowLengths[r] : f.rowElements());
            std::size_t &at = m_offsets[i];
            if (f.isString) {
                m_values[i] = ExampleFeatureValues::bytes(f.name, columns[i].strings.subspan(at, n));
            } else {
                const std::size_t item = itemSize(f.dtype);
                m_values[i] = ExampleFeatureValues::numeric(f.name, f.dtype, columns[i].data.subspan(at * item, n * item));
            }
            at += n;
        }
        if (auto s = m_encoder.encode(m_values, m_record); !s)
            return fail(s.error());
        if (auto s = m_tfrecord->write(std::string_view(m_record)); !s)
            return fail(s.error());
        ++m_rows;
    }
    return Status::success();
}

Status ShardWriter::append(std::uint64_t rows, std::span<const ColumnRows> columns)
{
    if (auto s = check(rows, columns); !s)
        return s;
    if (!m_tfrecord && m_npy.empty())
        if (auto s = open(); !s)
            return s;
    if (m_tfrecord)
        return appendRecords(rows, columns);
    for (std::size_t i = 0; i < m_npy.size(); ++i)
        if (auto s = m_npy[i].appendRows(columns[i].data); !s)
            return fail(s.error());
    m_rows += rows;
    return Status::success();
}

Status ShardWriter::close()
{
    if (m_closed)
        return Error::invalid("shard " + std::to_string(m_index), "closed twice");
    if (m_failed)
        return *m_error;
    if (!m_tfrecord && m_npy.empty())
        if (auto s = open(); !s)
            return s;
    if (m_tfrecord) {
        if (auto s = m_tfrecord->commit(); !s)
            return fail(s.error());
        m_published = 1;
    } else {
        // Every column complete and on disk before any is renamed into place.
        for (NpyWriter &w : m_npy)
            if (auto s = w.prepare(); !s)
                return fail(s.error());
        for (NpyWriter &w : m_npy) {
            if (auto s = w.finish(); !s)
                return fail(s.error());
            ++m_published;
        }
    }
    m_tfrecord.reset();
    m_npy.clear();
    m_closed = true;
    return Status::success();
}

// ---- ShardedDatasetWriter -------------------------------------------------------------------

Result<ShardedDatasetWriter> ShardedDatasetWriter::create(const ShardedDatasetOptions &options, std::vector<DatasetFeature> features)
{
    const std::string &folder = options.folder;
    if (folder.empty())
        return Error::invalid("folder", "no output folder given");
    if (options.shards < 1)
        return Error::invalid("shards", std::to_string(options.shards) + " shards: at least one is needed");
    if (options.format == DatasetFormat::Npy && options.compression != TfRecordWriter::Compression::None)
        return Error::invalid("compression", "npy shards are not compressed; compression is for tfrecord");
    if (auto s = checkFeatures(features, options.format); !s)
        return s.error();

    // Every file name, checked before anything touches the disk.
    const bool npy = options.format == DatasetFormat::Npy;
    const std::string pattern = !options.pattern.empty() ? options.pattern
                                : npy                    ? "{feature}-{index}-of-{count}.npy"
                                                         : "data-{index}-of-{count}.tfrecord";
    std::vector<std::vector<std::string>> names(std::size_t(options.shards));
    std::set<std::string> unique;
    for (int i = 0; i < options.shards; ++i) {
        for (std::size_t k = 0; k < (npy ? features.size() : 1); ++k) {
            auto name = expandPattern(pattern, i, options.shards, npy ? features[k].name : std::string());
            if (!name)
                return name.error();
            if (!isDatasetFileName(*name) || *name == kDatasetManifestName)
                return Error::invalid("pattern", "'" + pattern + "' gives '" + *name + "', not a file name of its own in the folder");
            if (!unique.insert(*name).second)
                return Error::invalid("pattern", "'" + pattern + "' gives '" + *name + "' twice (" +
                                                     (npy ? "{index} and {feature} are both needed" : "{index} is needed") + ")");
            names[std::size_t(i)].push_back(std::move(name).value());
        }
    }

    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        return Error::io(folder, "cannot create folder: " + ec.message());
    if (!fs::is_directory(folder, ec))
        return Error::io(folder, "is not a folder");

    ShardedDatasetWriter w;
    // A dataset (or files of the same names) already here: refused, or replaced as asked.
    const std::string manifestPath = join(folder, kDatasetManifestName);
    std::string existing = fs::exists(manifestPath, ec) ? std::string(kDatasetManifestName) : std::string();
    for (const auto &name : unique)
        if (existing.empty() && fs::exists(join(folder, name), ec))
            existing = name;
    if (!existing.empty()) {
        if (!options.overwrite)
            return Error::invalid(folder, "already holds '" + existing + "'; choose another folder or overwrite it");
        if (auto old = readDatasetManifest(folder))
            for (const auto &shard : old->shards)
                for (const auto &file : shard.files)
                    if (!unique.count(file))
                        w.m_staleFiles.push_back(file);
        // The old manifest goes first: while shards are replaced, the folder must not claim to
        // hold a complete dataset.
        if (::unlink(manifestPath.c_str()) != 0 && errno != ENOENT)
            return Error::io(manifestPath, std::string("cannot remove the old manifest: ") + std::strerror(errno));
    }

    auto layout = std::make_shared<ShardWriter::Layout>();
    layout->folder = folder;
    layout->format = options.format;
    layout->compression = options.compression;
    layout->features = std::move(features);
    w.m_layout = layout;
    for (int i = 0; i < options.shards; ++i)
        w.m_shards.push_back(std::unique_ptr<ShardWriter>(new ShardWriter(layout, i, std::move(names[std::size_t(i)]))));
    return w;
}

ShardedDatasetWriter::ShardedDatasetWriter(ShardedDatasetWriter &&other) noexcept { *this = std::move(other); }

ShardedDatasetWriter &ShardedDatasetWriter::operator=(ShardedDatasetWriter &&other) noexcept
{
    if (this != &other) {
        discard();
        m_layout = std::move(other.m_layout);
        m_shards = std::exchange(other.m_shards, {});
        m_staleFiles = std::exchange(other.m_staleFiles, {});
        m_committed = std::exchange(other.m_committed, false);
    }
    return *this;
}

ShardedDatasetWriter::~ShardedDatasetWriter() { discard(); }

void ShardedDatasetWriter::discard()
{
    // An uncommitted dataset leaves nothing under a final name: the files its shards published
    // go (the shards' writers remove their own temporaries).
    if (!m_committed)
        for (const auto &shard : m_shards)
            for (std::size_t i = 0; i < shard->m_published; ++i)
                ::unlink(shard->pathOf(i).c_str());
    m_shards.clear();
}

const std::vector<DatasetFeature> &ShardedDatasetWriter::features() const { return m_layout->features; }
const std::string &ShardedDatasetWriter::folder() const { return m_layout->folder; }

DatasetManifest ShardedDatasetWriter::manifest() const
{
    DatasetManifest m;
    m.format = m_layout->format;
    m.compression = m_layout->compression;
    m.features = m_layout->features;
    for (const auto &shard : m_shards)
        m.shards.push_back({shard->files(), shard->rows()});
    return m;
}

Status ShardedDatasetWriter::commit()
{
    if (m_committed)
        return Error::invalid(folder(), "committed twice");
    for (const auto &shard : m_shards) {
        if (shard->m_failed)
            return Error::make(shard->m_error->kind, shard->m_error->what, "shard " + std::to_string(shard->index()) + " failed: " + shard->m_error->reason);
        if (!shard->closed())
            if (auto s = shard->close(); !s)
                return s;
    }
    const std::string manifestPath = join(folder(), kDatasetManifestName);
    auto file = AtomicFile::create(manifestPath);
    if (!file)
        return file.error();
    if (auto s = file->write(manifestToJson(manifest()).dump(1) + "\n"); !s)
        return s;
    if (auto s = file->commit(); !s)
        return s;
    m_committed = true;
    // The overwritten dataset's files that the new one did not replace.
    for (const auto &name : m_staleFiles)
        ::unlink(join(folder(), name).c_str());
    m_staleFiles.clear();
    return Status::success();
}

} // namespace sluice
