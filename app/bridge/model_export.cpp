#include "bridge/model_export.h"

#include "io/atomic_file.h"
#include "io/safetensors_writer.h"
#include "pipeline/pipeline.h"
#include "train/model.h"
#include "train/torch_export.h"

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

} // namespace

Result<ModelExport> exportSafetensors(const Project &project, const std::string &weightsNpz, const std::string &outFile)
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
    const train::Model &m = **model;
    std::vector<float> weights(m.parameterCount());
    if (auto s = m.loadWeights(weightsNpz, weights); !s.ok())
        return s.error();

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

} // namespace sluice::bridge
