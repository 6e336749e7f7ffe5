// sluice export RUN_DIR|WEIGHTS --project P --format safetensors --out FILE: a trained model's
// weights as a safetensors file, by "<layer>/<weight>" name in Sluice's (Keras's) layouts, and
// beside it model.py, the equivalent torch.nn.Module with a load() that maps the weights to
// PyTorch's layouts (train/interchange/torch_export.h; docs/models.md). The model is built as `sluice
// predict` builds it, against the project's pipeline, so the data must be where the project says.
#include "commands/commands.h"

#include "bridge/model_export.h"
#include "cli/cli_support.h"
#include "cli/pipeline_options.h"
#include "cli/weights_argument.h"

#include <cstdio>

namespace sluice::commands {

int exportModel(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Exports a trained model for other tools. --format safetensors writes the weights by \"<layer>/<weight>\"\n"
        "name (Sluice's and Keras's layouts) and, beside them, model.py: the same model as a torch.nn.Module\n"
        "whose load() reads them into PyTorch's layouts (transposed kernels, GRU gates reordered).\n"
        "--format keras writes a Keras 3 .keras archive that keras.saving.load_model reads; --format onnx an\n"
        "ONNX inference graph (opset 17) that onnxruntime runs.\n\n"
        "Examples:\n"
        "  sluice export projects/runs/regression-20261128 --project projects/regression.sluice --format safetensors --out export/model.safetensors\n"
        "  sluice export weights.npz --project p.sluice --format safetensors --out model.safetensors\n"
        "  sluice export runs/first --project p.sluice --format keras --out model.keras\n"
        "  sluice export runs/first --project p.sluice --format onnx --out model.onnx\n"
        "  sluice export runs/big --project p.sluice --set nodes.arrays.features.x=/data/x.npy --format safetensors --out m.safetensors\n\n"
        "The model is built against the project's pipeline, as sluice predict builds it: its data must be there.\n"
        "Then, in Python: from model import load; y = load()(x).");
    parser.addPositionalArgument("WEIGHTS", "A weights.npz (sluice run --out writes one) or the run folder that holds it.");
    parser.addOption({"project", "The .sluice project the weights were trained with.", "P"});
    parser.addOption({"format", "safetensors (with model.py for PyTorch), keras (a .keras archive) or onnx (an opset 17 inference graph).", "FORMAT"});
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
    if (format != "safetensors" && format != "keras" && format != "onnx") {
        cli::printError("--format", "unknown format '" + format.toStdString() + "' (known: safetensors, keras, onnx)");
        return cli::BadInput;
    }
    auto project = cli::loadProject(parser, parser.value("project"));
    if (!project)
        return cli::BadInput;
    const std::string weights = cli::weightsFile(positional[0]), out = parser.value("out").toStdString();
    auto done = format == "keras" ? bridge::exportKeras(*project, weights, out)
                : format == "onnx"  ? bridge::exportOnnx(*project, weights, out)
                                    : bridge::exportSafetensors(*project, weights, out);
    if (!done) {
        cli::printError(done.error());
        return done.error().kind == Error::Kind::Failed ? cli::RunFailed : cli::BadInput;
    }
    std::printf("%zu weights (%zu floats) -> %s\n", done->arrays, done->floats, done->weightsFile.c_str());
    if (!done->modelPy.empty())
        std::printf("PyTorch module -> %s\n", done->modelPy.c_str());
    return cli::Success;
}

} // namespace sluice::commands
