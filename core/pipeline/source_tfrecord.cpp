// from_tfrecord: tf.train.Example records of one or more TFRecord files (plain or GZIP, every
// record's CRCs verified), decoded into the FixedLenFeatures the project declares, as
// tf.io.parse_single_example with a FixedLenFeature spec would.
#include "pipeline/source_files.h"

#include "io/tf_example.h"
#include "io/tfrecord_reader.h"

namespace sluice::pipeline {
namespace {

struct FixedLenFeature
{
    std::string name;
    ValueType type;
    Shape shape;
    std::optional<nlohmann::json> defaultValue;
};

class TfRecordIterator final : public Iterator
{
public:
    TfRecordIterator(std::vector<std::string> files, TfRecordReader::Compression compression, const std::vector<FixedLenFeature> &features)
        : m_files(std::move(files)), m_compression(compression), m_features(features)
    {
    }

    Result<Poll> next(Element &out) override
    {
        for (;;) {
            if (!m_reader) {
                if (m_file >= m_files.size())
                    return Poll::End;
                auto reader = TfRecordReader::open(m_files[m_file++], m_compression, true);
                if (!reader.ok())
                    return reader.error();
                m_reader.emplace(std::move(reader).value());
            }
            auto record = m_reader->next();
            if (!record.ok())
                return record.error();
            if (!*record) {
                m_reader.reset();
                continue;
            }
            const std::string what = m_reader->path() + ": record " + std::to_string(m_reader->recordsRead() - 1);
            auto example = parseExample(**record, what);
            if (!example.ok())
                return example.error();
            out.tensors.clear();
            for (const auto &f : m_features) {
                auto tensor = decode(f, *example, what);
                if (!tensor.ok())
                    return tensor.error();
                out.tensors.push_back(std::move(tensor).value());
            }
            return Poll::Ready;
        }
    }

private:
    static Result<Tensor> decode(const FixedLenFeature &f, const Example &example, const std::string &what)
    {
        const std::uint64_t want = elementCount(f.shape);
        const auto it = example.find(f.name);
        if (it == example.end() || it->second.size() == 0) {
            if (!f.defaultValue)
                return Error::corrupt(what, "feature \"" + f.name + "\" is missing and has no default_value");
            return fromDefault(f, what);
        }
        const ExampleFeature &v = it->second;
        const auto kind = f.type.isString ? ExampleFeature::Kind::Bytes
                          : f.type.dtype == DType::Int64 ? ExampleFeature::Kind::Int64 : ExampleFeature::Kind::Float;
        if (v.kind != kind)
            return Error::corrupt(what, "feature \"" + f.name + "\" holds " + exampleKindName(v.kind) + " values, the spec says " +
                                            f.type.name());
        if (v.size() != want)
            return Error::corrupt(what, "feature \"" + f.name + "\" has " + std::to_string(v.size()) + " values, its shape " +
                                            shapeText(f.shape) + " needs " + std::to_string(want));
        if (f.type.isString) {
            std::vector<std::string> values;
            for (auto b : v.bytes)
                values.emplace_back(reinterpret_cast<const char *>(b.data()), b.size());
            return Tensor::strings(f.shape, std::move(values));
        }
        Tensor t = Tensor::allocate(f.type.dtype, f.shape);
        if (kind == ExampleFeature::Kind::Int64)
            std::copy(v.ints.begin(), v.ints.end(), t.mutableAs<std::int64_t>());
        else
            std::copy(v.floats.begin(), v.floats.end(), t.mutableAs<float>());
        return t;
    }

    static Result<Tensor> fromDefault(const FixedLenFeature &f, const std::string &what)
    {
        const std::uint64_t n = elementCount(f.shape);
        const nlohmann::json &d = *f.defaultValue;
        auto valueAt = [&](std::uint64_t i) -> const nlohmann::json & { return d.is_array() ? d[i] : d; };
        if (d.is_array() && d.size() != n)
            return Error::invalid(what, "default_value of \"" + f.name + "\" has " + std::to_string(d.size()) + " values, needs " +
                                            std::to_string(n));
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

    std::vector<std::string> m_files;
    std::size_t m_file = 0;
    TfRecordReader::Compression m_compression;
    const std::vector<FixedLenFeature> &m_features;
    std::optional<TfRecordReader> m_reader;
};

class TfRecordDataset final : public Dataset
{
public:
    TfRecordDataset(ElementSpec spec, StageStats *stats, std::vector<std::string> files, TfRecordReader::Compression compression,
                    std::vector<FixedLenFeature> features)
        : Dataset(std::move(spec), stats), m_files(std::move(files)), m_compression(compression), m_features(std::move(features))
    {
    }

protected:
    std::unique_ptr<Iterator> makeRawIterator(const IteratorContext &) const override
    {
        return std::make_unique<TfRecordIterator>(m_files, m_compression, m_features);
    }

private:
    std::vector<std::string> m_files;
    TfRecordReader::Compression m_compression;
    std::vector<FixedLenFeature> m_features;
};

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
            feature.defaultValue = d;
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
                    {"features", "object", "", "name → {dtype: float32|int64|string, shape: [...], default_value}", true}},
                   0, 0, buildFromTfRecord});
}

} // namespace sluice::pipeline
