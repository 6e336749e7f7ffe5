#include "support/pipeline_test_support.h"

#include <QProcess>

#include <QFile>

#include <QDir>
#include "support/test_support.h"

#include "io/writers/npy_writer.h"
#include "project/project.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sluice::test {

using pipeline::Pipeline;

std::string projectText(const std::string &pipelineJson)
{
    return R"({"format": "sluice-project", "version": 1, "pipeline": )" + pipelineJson + "}";
}

std::string chain(const std::vector<std::string> &nodes)
{
    std::string n, e;
    std::string previous;
    for (const auto &text : nodes) {
        const std::string id = nlohmann::json::parse(text).at("id").get<std::string>();
        n += (n.empty() ? "" : ", ") + text;
        if (!previous.empty())
            e += std::string(e.empty() ? "" : ", ") + "[\"" + previous + "\", \"" + id + "\"]";
        previous = id;
    }
    return "{\"nodes\": [" + n + "], \"edges\": [" + e + "]}";
}

std::string node(const std::string &id, const std::string &op, const std::string &params)
{
    return R"({"id": ")" + id + R"(", "op": ")" + op + R"(", "params": )" + params + "}";
}

std::string op(const std::string &id, const std::string &name, const nlohmann::json &params) { return node(id, name, params.dump()); }

std::unique_ptr<Pipeline> buildPipeline(const std::string &pipelineJson, const std::string &folder, pipeline::PipelineOptions options,
                                        std::string *error)
{
    auto project = Project::fromText(projectText(pipelineJson), folder);
    std::string message;
    if (!project.ok()) {
        message = "project: " + project.error().message();
    } else {
        auto built = Pipeline::build(*project, options);
        if (built.ok())
            return std::move(built).value();
        message = built.error().message();
    }
    if (error)
        *error = message;
    else
        qWarning("pipeline does not build: %s", message.c_str());
    return nullptr;
}

std::string buildError(const std::string &pipelineJson, const std::string &folder)
{
    std::string error;
    auto p = buildPipeline(pipelineJson, folder, {}, &error);
    return p ? std::string() : error;
}

std::vector<double> Pass::flat() const
{
    std::vector<double> out;
    for (const auto &v : values)
        out.insert(out.end(), v.begin(), v.end());
    return out;
}

std::vector<std::int64_t> Pass::firstValues() const
{
    std::vector<std::int64_t> out;
    for (const auto &v : values)
        out.push_back(v.empty() ? INT64_MIN : std::int64_t(v[0]));
    return out;
}

std::vector<std::int64_t> Pass::batchSizes() const
{
    std::vector<std::int64_t> out;
    for (const auto &s : shapes)
        out.push_back(s.empty() ? -1 : s[0]);
    return out;
}

Pass collect(Pipeline &pipeline, const std::string &feature, std::size_t limit)
{
    Pass pass;
    const auto index = pipeline.elementSpec().find(feature);
    if (!index) {
        pass.error = "no feature \"" + feature + "\" (have: " + pipeline.elementSpec().names() + ")";
        return pass;
    }
    while (pass.size() < limit) {
        auto r = pipeline.next();
        if (!r.ok()) {
            pass.error = r.error().message();
            break;
        }
        if (!*r)
            break;
        const pipeline::Tensor &t = (*r)->tensors.at(*index);
        std::vector<double> v;
        for (std::uint64_t i = 0; i < t.count(); ++i)
            v.push_back(t.valueAsDouble(i));
        pass.values.push_back(std::move(v));
        pass.shapes.push_back(t.shape());
        pass.bytes.push_back(t.isString() ? std::string() : std::string(reinterpret_cast<const char *>(t.data()), t.nbytes()));
        pass.elements.push_back(std::move(**r));
    }
    return pass;
}

Pass runPass(const std::string &pipelineJson, const std::string &feature, const std::string &folder, pipeline::PipelineOptions options)
{
    std::string error;
    auto p = buildPipeline(pipelineJson, folder, options, &error);
    if (!p) {
        Pass pass;
        pass.error = "build: " + error;
        return pass;
    }
    return collect(*p, feature);
}

std::vector<std::int64_t> iota(std::int64_t begin, std::int64_t end)
{
    std::vector<std::int64_t> out;
    for (std::int64_t i = begin; i < end; ++i)
        out.push_back(i);
    return out;
}

std::vector<std::int64_t> sorted(std::vector<std::int64_t> values)
{
    std::sort(values.begin(), values.end());
    return values;
}

bool sameValues(const std::vector<double> &a, const std::vector<double> &b, double tolerance)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!(a[i] == b[i] || std::abs(a[i] - b[i]) <= tolerance || (std::isnan(a[i]) && std::isnan(b[i]))))
            return false;
    return true;
}

std::vector<double> manifestValues(const nlohmann::json &entry)
{
    std::vector<double> out;
    for (const auto &v : entry.at("values"))
        out.push_back(v.is_boolean() ? double(v.get<bool>()) : jsonNumber(v));
    return out;
}

void writeNpy(const std::string &path, DType dtype, const std::vector<std::uint64_t> &rowShape, std::span<const std::byte> data)
{
    auto writer = NpyWriter::create(path, TypeDescr{dtype, nativeByteOrder()}, rowShape);
    if (!writer.ok())
        qFatal("cannot write %s: %s", path.c_str(), writer.error().message().c_str());
    Status s = writer->appendRows(data);
    if (s.ok())
        s = writer->finish();
    if (!s.ok())
        qFatal("cannot write %s: %s", path.c_str(), s.error().message().c_str());
}

std::string sluiceBinary() { return SLUICE_BINARY; }

std::vector<nlohmann::json> jsonLines(const QString &out)
{
    std::vector<nlohmann::json> lines;
    for (const QString &line : out.split('\n', Qt::SkipEmptyParts))
        if (line.startsWith('{'))
            lines.push_back(nlohmann::json::parse(line.toStdString(), nullptr, false));
    return lines;
}

pipeline::PipelineOptions untunedOptions(int threads)
{
    pipeline::PipelineOptions options;
    options.threads = threads;
    options.autotune = false;
    return options;
}

std::optional<std::string> writeExampleCopy(const QString &root, const QStringList &kinds, const QStringList &projects,
                                            const std::map<QString, QString> &settings)
{
    if (!QDir().mkpath(root))
        return "cannot create " + root.toStdString();
    QProcess gen;
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert("SLUICE", QString::fromStdString(sluiceBinary()));
    env.insert("SLUICE_DATA_ROOT", root + "/data");
    env.remove("SLUICE_EXAMPLE_DATA");
    for (const auto &[key, value] : settings)
        env.insert(key, value);
    gen.setProcessEnvironment(env);
    gen.start("bash", QStringList{QStringLiteral(SLUICE_SOURCE_DIR) + "/scripts/generate-example-data.sh"} + kinds);
    if (!gen.waitForFinished(300000) || gen.exitStatus() != QProcess::NormalExit || gen.exitCode() != 0)
        return "generate-example-data.sh failed: " + gen.readAllStandardError().toStdString();
    for (const QString &name : projects) {
        const QString copy = root + "/" + name + ".sluice";
        QFile::remove(copy);
        if (!QFile::copy(QStringLiteral(SLUICE_SOURCE_DIR) + "/projects/" + name + ".sluice", copy))
            return "cannot copy the example project " + name.toStdString();
    }
    return std::nullopt;
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

} // namespace sluice::test
