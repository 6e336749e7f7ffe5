#include "bridge/model_export.h"

#include "io/writers/atomic_file.h"
#include "io/writers/npz_writer.h"
#include "io/writers/safetensors_writer.h"
#include "train/interchange/keras_export.h"
#include "train/interchange/onnx_export.h"
#include "pipeline/engine/pipeline.h"
#include "train/model/model.h"
#include "train/interchange/torch_export.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace sluice::bridge {
namespace {

// True when `path` is missing or was written by sluice export (its first line says so): only
// those are overwritten, so that a user's own model.py is never lost.
bool mayOverwrite(const QString &path)
{
    QFile file(path);
    if (!file.exists())
        return true;
    if (!file.open(QIODevice::ReadOnly))
        return false;
    return file.readLine().startsWith(train::kTorchExportMarker);
}

Status writeText(const std::string &path, const std::string &text)
{
    auto file = AtomicFile::create(path);
    if (!file)
        return file.error();
    if (auto s = file->write(text); !s.ok())
        return s;
    return file->commit();
}

// The project's model built against its pipeline (nothing is read) and the weights loaded.
struct Loaded
{
    std::unique_ptr<train::Model> model;
    std::vector<float> weights;
};

Result<Loaded> loadModel(const Project &project, const std::string &weightsNpz)
{
    if (project.model.is_null() || project.model.empty())
        return Error::invalid(project.path().empty() ? "project" : project.path(), "has no model to export (a \"model\" section)");
    // Only the pipeline's element spec is needed (the model's input shapes): nothing is read.
    auto pipe = pipeline::Pipeline::build(project, pipeline::PipelineOptions{});
    if (!pipe)
        return pipe.error();
    auto model = train::Model::build(project.model, (*pipe)->elementSpec(), train::ModelBuildOptions{true});
    if (!model)
        return model.error();
    Loaded loaded{std::move(model).value(), {}};
    loaded.weights.resize(loaded.model->parameterCount());
    if (auto s = loaded.model->loadWeights(weightsNpz, loaded.weights); !s.ok())
        return s.error();
    return loaded;
}

} // namespace

Result<ModelExport> exportSafetensors(const Project &project, const std::string &weightsNpz, const std::string &outFile)
{
    auto loaded = loadModel(project, weightsNpz);
    if (!loaded)
        return loaded.error();
    const train::Model &m = *loaded->model;
    const std::vector<float> &weights = loaded->weights;

    const QFileInfo out(QString::fromStdString(outFile));
    const QString folder = out.absolutePath(), modelPy = QDir(folder).filePath("model.py");
    train::TorchExportOptions torch;
    torch.weightsFile = out.fileName().toStdString();
    torch.modelName = project.name;
    torch.sluiceVersion = SLUICE_VERSION;
    auto source = train::torchModelSource(m, torch);
    if (!source)
        return source.error();
    if (!QDir().mkpath(folder))
        return Error::failed(folder.toStdString(), "cannot create the folder");
    if (!mayOverwrite(modelPy))
        return Error::invalid(modelPy.toStdString(), "exists and was not written by sluice export: move it away, or export into another folder");

    std::vector<SafetensorsTensor> tensors;
    for (const auto &p : m.parameters())
        tensors.push_back({p.name, p.shape, std::span<const float>(weights).subspan(p.offset, p.count)});
    const std::map<std::string, std::string> metadata{{"format", "sluice"}, {"sluice_version", SLUICE_VERSION}, {"model", project.name},
                                                      {"layout", "Sluice/Keras layouts; model.py maps them to PyTorch's"}};
    ModelExport done{out.absoluteFilePath().toStdString(), modelPy.toStdString(), m.parameters().size(), m.parameterCount()};
    if (auto s = writeSafetensors(done.weightsFile, tensors, metadata); !s.ok())
        return Error::failed(s.error().what, s.error().reason);
    if (auto s = writeText(done.modelPy, *source); !s.ok())
        return Error::failed(s.error().what, s.error().reason);
    return done;
}

Result<ModelExport> exportKeras(const Project &project, const std::string &weightsNpz, const std::string &outFile)
{
    auto loaded = loadModel(project, weightsNpz);
    if (!loaded)
        return loaded.error();
    auto files = train::kerasModelFiles(*loaded->model, project.model, loaded->weights, project.name.empty() ? "model" : project.name);
    if (!files)
        return files.error();
    const QFileInfo out(QString::fromStdString(outFile));
    if (!QDir().mkpath(out.absolutePath()))
        return Error::failed(out.absolutePath().toStdString(), "cannot create the folder");
    ModelExport done{out.absoluteFilePath().toStdString(), {}, loaded->model->parameters().size(), loaded->model->parameterCount()};
    // A .keras archive is a zip of these three (stored), written whole or not at all.
    auto zip = NpzWriter::create(done.weightsFile);
    if (!zip)
        return Error::failed(zip.error().what, zip.error().reason);
    auto text = [](const std::string &t) { return std::as_bytes(std::span(t.data(), t.size())); };
    Status s = zip->addFile("metadata.json", text(files->metadataJson));
    if (s.ok())
        s = zip->addFile("config.json", text(files->configJson));
    if (s.ok())
        s = zip->addFile("model.weights.h5", files->weightsH5);
    if (s.ok())
        s = zip->finish();
    if (!s.ok())
        return Error::failed(s.error().what, s.error().reason);
    return done;
}

Result<ModelExport> exportOnnx(const Project &project, const std::string &weightsNpz, const std::string &outFile)
{
    auto loaded = loadModel(project, weightsNpz);
    if (!loaded)
        return loaded.error();
    auto bytes = train::onnxModelBytes(*loaded->model, loaded->weights, project.name);
    if (!bytes)
        return bytes.error();
    const QFileInfo out(QString::fromStdString(outFile));
    if (!QDir().mkpath(out.absolutePath()))
        return Error::failed(out.absolutePath().toStdString(), "cannot create the folder");
    ModelExport done{out.absoluteFilePath().toStdString(), {}, loaded->model->parameters().size(), loaded->model->parameterCount()};
    if (auto s = writeText(done.weightsFile, *bytes); !s.ok())
        return Error::failed(s.error().what, s.error().reason);
    return done;
}

} // namespace sluice::bridge
