// sluice export RUN_DIR|WEIGHTS --project P --format safetensors --out FILE: a trained model's
// weights as a safetensors file, by "<layer>/<weight>" name in Sluice's (Keras's) layouts, and
// beside it model.py, the equivalent torch.nn.Module with a load() that maps the weights to
// PyTorch's layouts (train/torch_export.h; docs/export.md). The model is built as `sluice
// predict` builds it, against the project's pipeline, so the data must be where the project says.
#include "commands/commands.h"

#include "cli/cli_support.h"
#include "cli/pipeline_options.h"
#include "cli/weights_argument.h"
#include "io/atomic_file.h"
#include "io/safetensors_writer.h"
#include "train/model.h"
#include "train/torch_export.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <cstdio>

namespace sluice::commands {
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

int exportModel(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Exports a trained model for other tools. --format safetensors writes the weights by \"<layer>/<weight>\"\n"
        "name (Sluice's and Keras's layouts) and, beside them, model.py: the same model as a torch.nn.Module\n"
        "whose load() reads them into PyTorch's layouts (transposed kernels, GRU gates reordered).\n\n"
        "Examples:\n"
        "  sluice export projects/runs/regression-20261128 --project projects/regression.sluice --format safetensors --out export/model.safetensors\n"
        "  sluice export weights.npz --project p.sluice --format safetensors --out model.safetensors\n"
        "  sluice export runs/big --project p.sluice --set nodes.arrays.features.x=/data/x.npy --format safetensors --out m.safetensors\n\n"
        "The model is built against the project's pipeline, as sluice predict builds it: its data must be there.\n"
        "Then, in Python: from model import load; y = load()(x).");
    parser.addPositionalArgument("WEIGHTS", "A weights.npz (sluice run --out writes one) or the run folder that holds it.");
    parser.addOption({"project", "The .sluice project the weights were trained with.", "P"});
    parser.addOption({"format", "safetensors (keras and onnx: not in this version yet).", "FORMAT"});
    parser.addOption({"out", "The file to write (its folder is created if missing); model.py goes beside it.", "FILE"});
    cli::addSetOption(parser);
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1) {
        cli::printError("export", positional.isEmpty() ? "missing WEIGHTS (a weights.npz or a run folder)" : "expected one WEIGHTS, got " +
                                                                                                                 std::to_string(positional.size()));
        return cli::BadInput;
    }
    for (const char *required : {"project", "format", "out"})
        if (!parser.isSet(required)) {
            cli::printError(std::string("--") + required, "is required");
            return cli::BadInput;
        }
    const QString format = parser.value("format");
    if (format == "keras" || format == "onnx") {
        cli::printError("--format", format.toStdString() + " export is not in this version of Sluice yet; safetensors (with model.py for PyTorch) is");
        return cli::BadInput;
    }
    if (format != "safetensors") {
        cli::printError("--format", "unknown format '" + format.toStdString() + "' (known: safetensors)");
        return cli::BadInput;
    }
    auto project = cli::loadProject(parser, parser.value("project"));
    if (!project)
        return cli::BadInput;
    if (project->model.is_null() || project->model.empty()) {
        cli::printError("--project", "has no model to export (a \"model\" section)");
        return cli::BadInput;
    }
    // Only the pipeline's element spec is needed (the model's input shapes): nothing is read.
    auto pipe = cli::buildPipeline(*project, pipeline::PipelineOptions{});
    if (!pipe)
        return cli::BadInput;
    auto model = train::Model::build(project->model, pipe->elementSpec(), train::ModelBuildOptions{true});
    if (!model) {
        cli::printError(model.error());
        return cli::BadInput;
    }
    const train::Model &m = **model;
    std::vector<float> weights(m.parameterCount());
    if (auto s = m.loadWeights(cli::weightsFile(positional[0]), weights); !s.ok()) {
        cli::printError(s.error());
        return cli::BadInput;
    }

    const QFileInfo out(parser.value("out"));
    const QString folder = out.absolutePath(), modelPy = QDir(folder).filePath("model.py");
    train::TorchExportOptions torch;
    torch.weightsFile = out.fileName().toStdString();
    torch.modelName = project->name;
    torch.sluiceVersion = SLUICE_VERSION;
    auto source = train::torchModelSource(m, torch);
    if (!source) {
        cli::printError(source.error());
        return cli::BadInput;
    }
    if (!QDir().mkpath(folder)) {
        cli::printError(folder.toStdString(), "cannot create the folder");
        return cli::BadInput;
    }
    if (!mayOverwrite(modelPy)) {
        cli::printError(modelPy.toStdString(), "exists and was not written by sluice export: move it away, or export into another folder");
        return cli::BadInput;
    }
    std::vector<SafetensorsTensor> tensors;
    for (const auto &p : m.parameters())
        tensors.push_back({p.name, p.shape, std::span<const float>(weights).subspan(p.offset, p.count)});
    const std::map<std::string, std::string> metadata{{"format", "sluice"}, {"sluice_version", SLUICE_VERSION}, {"model", project->name},
                                                      {"layout", "Sluice/Keras layouts; model.py maps them to PyTorch's"}};
    if (auto s = writeSafetensors(out.absoluteFilePath().toStdString(), tensors, metadata); !s.ok()) {
        cli::printError(s.error());
        return cli::RunFailed;
    }
    if (auto s = writeText(modelPy.toStdString(), *source); !s.ok()) {
        cli::printError(s.error());
        return cli::RunFailed;
    }
    std::printf("%zu weights (%zu floats) -> %s\nPyTorch module -> %s\n", m.parameters().size(), m.parameterCount(),
                out.absoluteFilePath().toStdString().c_str(), modelPy.toStdString().c_str());
    return cli::Success;
}

} // namespace sluice::commands
