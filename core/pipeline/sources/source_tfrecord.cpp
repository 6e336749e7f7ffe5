// from_tfrecord: tf.train.Example records of one or more TFRecord files (plain or GZIP, every
// record's CRCs verified), decoded into the FixedLenFeatures the project declares, as
// tf.io.parse_example with a FixedLenFeature spec would. Records are decoded in chunks of rows
// (row_chunks.h): batch cuts its batches from them, interleave runs whole chunks ahead on the
// arena, other consumers get one element per record.
#include "pipeline/sources/source_files.h"

#include "io/formats/tfrecord_reader.h"
#include "pipeline/sources/example_columns.h"

namespace sluice::pipeline {
namespace {

// Chunks of decoded records, the files read one after another. A damaged record ends the pass:
// the rows before it are delivered in a chunk that carries the error.
class TfRecordChunks final : public Iterator
{
public:
    TfRecordChunks(const std::vector<std::string> &files, TfRecordReader::Compression compression,
                   const std::vector<FixedLenFeature> &features, const ElementSpec &spec)
        : m_files(files), m_compression(compression), m_columns(features, spec, rowsPerChunk(spec))
    {
    }

    Result<Poll> next(Element &out) override
    {
        if (m_ended)
            return Poll::End;
        for (;;) {
            if (!m_reader) {
                if (m_file >= m_files.size()) {
                    m_ended = true;
                    if (m_columns.rows() == 0)
                        return Poll::End;
                    out = m_columns.take();
                    return Poll::Ready;
                }
                auto reader = TfRecordReader::open(m_files[m_file++], m_compression, true);
                if (!reader.ok())
                    return endWith(reader.error(), out);
                m_reader.emplace(std::move(reader).value());
            }
            auto record = m_reader->next();
            if (!record.ok())
                return endWith(record.error(), out);
            if (!*record) {
                m_reader.reset();
                continue;
            }
            const auto what = [this] { return m_reader->path() + ": record " + std::to_string(m_reader->recordsRead() - 1); };
            if (auto status = m_columns.add(**record, what); !status.ok())
                return endWith(status.error(), out);
            if (m_columns.full()) {
                out = m_columns.take();
                return Poll::Ready;
            }
        }
    }

private:
    Poll endWith(const Error &error, Element &out)
    {
        out = m_columns.take();
        attachChunkError(out, error);
        m_ended = true;
        m_reader.reset();
        return Poll::Ready;
    }

    const std::vector<std::string> &m_files;
    std::size_t m_file = 0;
    TfRecordReader::Compression m_compression;
    ExampleColumns m_columns;
    std::optional<TfRecordReader> m_reader;
    bool m_ended = false;
};

class TfRecordDataset final : public Dataset, public ChunkedRows
{
public:
    TfRecordDataset(ElementSpec spec, StageStats *stats, std::vector<std::string> files, TfRecordReader::Compression compression,
                    std::vector<FixedLenFeature> features)
        : Dataset(std::move(spec), stats), m_files(std::move(files)), m_compression(compression), m_features(std::move(features))
    {
    }

    const ChunkedRows *chunkedRows() const override { return this; }
    std::unique_ptr<Iterator> makeChunkIterator(const IteratorContext &) const override
    {
        return measureChunks(chunks(), stats());
    }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &) const override { return rowsOfChunks(chunks(), spec()); }

private:
    // The dataset outlives its iterators (the pipeline keeps it), so they may refer to its members.
    std::unique_ptr<Iterator> chunks() const { return std::make_unique<TfRecordChunks>(m_files, m_compression, m_features, spec()); }

    std::vector<std::string> m_files;
    TfRecordReader::Compression m_compression;
    std::vector<FixedLenFeature> m_features;
};

// One row of a feature's default_value (checked against the feature's type and size).
Tensor defaultRow(const FixedLenFeature &f, const nlohmann::json &d)
{
    const std::uint64_t n = elementCount(f.shape);
    auto valueAt = [&](std::uint64_t i) -> const nlohmann::json & { return d.is_array() ? d[i] : d; };
    if (f.type.isString) {
        std::vector<std::string> values;
        for (std::uint64_t i = 0; i < n; ++i)
            values.push_back(valueAt(i).get<std::string>());
        return Tensor::strings(f.shape, std::move(values));
    }
    Tensor t = Tensor::allocate(f.type.dtype, f.shape);
    for (std::uint64_t i = 0; i < n; ++i) {
        if (f.type.dtype == DType::Int64)
            t.mutableAs<std::int64_t>()[i] = valueAt(i).get<std::int64_t>();
        else
            t.mutableAs<float>()[i] = valueAt(i).get<float>();
    }
    return t;
}

std::shared_ptr<Dataset> buildFromTfRecord(BuildContext &context, Params &params, const Inputs &)
{
    const nlohmann::json *names = params.raw("filenames");
    if (!names)
        params.fail("filenames", "missing (this parameter is required)");
    auto files = filesInScope(context, params, expandSourceFiles(context, params, "filenames", *names));
    const auto compression = valueOrFail(params, "compression_type",
                                         TfRecordReader::parseCompression(params.choice("compression_type", "", {"", "GZIP"})));
    const nlohmann::json *spec = params.raw("features");
    if (!spec || !spec->is_object() || spec->empty())
        params.fail("features", "must be an object: feature name → {\"dtype\": \"float32\"|\"int64\"|\"string\", \"shape\": [...]}");
    std::vector<FixedLenFeature> features;
    ElementSpec elementSpec;
    for (const auto &[name, f] : spec->items()) {
        const std::string param = "features." + name;
        if (!f.is_object() || !f.contains("dtype") || !f["dtype"].is_string())
            params.fail(param, "must be an object with \"dtype\" (float32, int64 or string) and optional \"shape\"");
        FixedLenFeature feature{name, {}, {}, std::nullopt};
        const std::string dtype = f["dtype"].get<std::string>();
        if (dtype == "float32")
            feature.type = {DType::Float32, false};
        else if (dtype == "int64")
            feature.type = {DType::Int64, false};
        else if (dtype == "string")
            feature.type = ValueType::string();
        else
            params.fail(param + ".dtype", "\"" + dtype + "\": tf.train.Example holds float32, int64 or string");
        if (f.contains("shape")) {
            if (!f["shape"].is_array())
                params.fail(param + ".shape", "must be a list of dimensions");
            for (const auto &d : f["shape"]) {
                if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
                    params.fail(param + ".shape", "dimensions must be non-negative integers, got " + d.dump());
                feature.shape.push_back(d.get<std::int64_t>());
            }
        }
        if (f.contains("default_value")) {
            const auto &d = f["default_value"];
            auto fits = [&](const nlohmann::json &v) { return feature.type.isString ? v.is_string() : v.is_number(); };
            bool ok = d.is_array() ? std::all_of(d.begin(), d.end(), fits) && d.size() == elementCount(feature.shape) : fits(d);
            if (!ok)
                params.fail(param + ".default_value", "must be a " + feature.type.name() + " value or a list of " +
                                                          std::to_string(elementCount(feature.shape)));
            feature.defaultValue = defaultRow(feature, d);
        }
        for (const auto &key : f.items())
            if (key.key() != "dtype" && key.key() != "shape" && key.key() != "default_value")
                params.fail(param + "." + key.key(), "unknown key (known: dtype, shape, default_value)");
        elementSpec.features.push_back({name, feature.type, feature.shape});
        features.push_back(std::move(feature));
    }
    return std::make_shared<TfRecordDataset>(std::move(elementSpec), context.statsFor(params.node()), std::move(files), compression,
                                             std::move(features));
}

} // namespace

void registerTfRecordSource(std::vector<OpInfo> &ops)
{
    ops.push_back({"from_tfrecord", "sources",
                   "tf.train.Example records of TFRecord files, decoded into fixed-length features (tf.data.TFRecordDataset + "
                   "tf.io.parse_single_example with FixedLenFeature). Every record's CRC-32C is verified.",
                   {{"filenames", "path|glob|list", "", "TFRecord files, read one after another", true},
                    {"compression_type", "enum:|GZIP", "", "\"\" (none) or \"GZIP\" (absent: none)"},
                    {"features", "feature_spec", "", "name → {dtype: float32|int64|string, shape: [...], default_value}", true}},
                   0, 0, buildFromTfRecord});
}

} // namespace sluice::pipeline
