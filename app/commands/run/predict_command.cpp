// sluice predict PROJECT --weights W --out DIR [--node ID]: the project's model run forward (as
// Keras's model.predict: inference mode, no dropout, BatchNormalization's moving statistics)
// over what a pipeline node emits, every model output written as DIR/<output>.npy (float32, one
// row per input row, in the order the node emits them). The model is built against the node's
// features: its inputs must be there; its targets need not be (predictions need none).
#include "commands/commands.h"

#include "cli/cli_support.h"
#include "cli/pipeline_options.h"
#include "cli/weights_argument.h"
#include "io/writers/npy_writer.h"
#include "train/loop/batch_slicer.h"
#include "train/loop/replica.h"

#include <oneapi/tbb/task_arena.h>

#include <QDir>
#include <QFileInfo>

#include <cstdio>

namespace sluice::commands {
namespace {

// An output's file name: its name, with path separators replaced.
std::string fileNameFor(std::string name)
{
    for (char &c : name)
        if (c == '/' || c == '\\')
            c = '_';
    return name + ".npy";
}

// The rows of one forward pass appended to the outputs' files.
Status appendOutputs(const train::Model &model, const train::Replica &replica, std::vector<NpyWriter> &writers)
{
    for (std::size_t o = 0; o < model.outputs().size(); ++o) {
        const train::FloatTensor &y = replica.activation(std::size_t(model.outputs()[o].node));
        if (auto s = writers[o].appendRows(std::span<const float>(y.data.data(), y.size())); !s.ok())
            return s;
    }
    return Status::success();
}

} // namespace

int predict(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Runs a project's model forward over what a pipeline node emits (inference, as Keras's model.predict)\n"
        "and writes each model output as DIR/<output>.npy (float32, a row per input row, in the node's order).\n\n"
        "Examples:\n"
        "  sluice predict projects/regression.sluice --weights runs/first --out predictions/\n"
        "  sluice predict p.sluice --weights runs/first/weights.npz --node val_batch --out val-predictions/\n"
        "  sluice predict p.sluice --weights w.npz --out out/ --threads 2 --set nodes.batch.batch_size=1024\n"
        "  sluice predict p.sluice --weights w.npz --out out/ --seed 7 --ram-budget 1G --resident-budget 512M\n\n"
        "The model is built against the node's features: its inputs must be among them, its targets need not.\n"
        "--weights: a weights.npz (sluice run --out writes one) or the run folder that holds it.");
    parser.addPositionalArgument("PROJECT", "The .sluice project file (with a model).");
    parser.addOption({"weights", "The model's weights: a weights.npz, or a run folder that has one.", "W"});
    parser.addOption({"node", "The pipeline node whose batches to predict on (default: the pipeline's output).", "ID"});
    parser.addOption({"out", "The folder for the predictions (created if missing).", "DIR"});
    cli::addSetOption(parser);
    cli::addPipelineOptions(parser);
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    auto project = cli::loadProjectArgument(parser, "predict");
    if (!project)
        return cli::BadInput;
    auto options = cli::pipelineOptions(parser);
    if (!options)
        return cli::BadInput;
    if (!parser.isSet("weights")) {
        cli::printError("--weights", "is required: a weights.npz, or the folder of a run that has one");
        return cli::BadInput;
    }
    if (!parser.isSet("out")) {
        cli::printError("--out", "is required: the folder for the predictions");
        return cli::BadInput;
    }
    if (project->model.is_null() || project->model.empty()) {
        cli::printError("PROJECT", "has no model to predict with (a \"model\" section)");
        return cli::BadInput;
    }
    const QString out = parser.value("out");
    auto pipe = cli::buildPipeline(*project, *options);
    if (!pipe)
        return cli::BadInput;
    auto model = train::Model::build(project->model, pipe->elementSpec(), train::ModelBuildOptions{true});
    if (!model) {
        cli::printError(model.error());
        return cli::BadInput;
    }
    const train::Model &m = **model;
    std::vector<float> weights(m.parameterCount());
    if (auto s = m.loadWeights(cli::weightsFile(parser.value("weights")), weights); !s.ok()) {
        cli::printError(s.error());
        return cli::BadInput;
    }
    if (!QDir().mkpath(out)) {
        cli::printError(out.toStdString(), "cannot create the folder");
        return cli::BadInput;
    }
    std::vector<NpyWriter> writers;
    for (const auto &output : m.outputs()) {
        const auto &shape = m.nodes()[std::size_t(output.node)].shape;
        auto writer = NpyWriter::create(QDir(out).filePath(QString::fromStdString(fileNameFor(output.name))).toStdString(),
                                        TypeDescr{DType::Float32, nativeByteOrder()}, std::vector<std::uint64_t>(shape.begin(), shape.end()));
        if (!writer) {
            cli::printError(writer.error());
            return cli::BadInput;
        }
        writers.push_back(std::move(writer).value());
    }

    // The model's layers split their work over the same CPU budget as the pipeline.
    oneapi::tbb::task_arena arena(options->threads > 0 ? options->threads : oneapi::tbb::task_arena::automatic);
    train::Replica replica(m, false);
    train::BatchSlice slice;
    train::PassContext ctx;
    ctx.training = false;
    for (;;) {
        auto next = pipe->next();
        if (!next.ok()) {
            cli::printError(next.error());
            return cli::RunFailed;
        }
        if (!*next)
            break;
        const pipeline::Element &batch = **next;
        auto rows = train::batchRows(m, batch);
        if (!rows) {
            cli::printError(rows.error());
            return cli::RunFailed;
        }
        train::sliceBatch(m, batch, {}, 0, *rows, slice);
        ctx.globalRowOffset = std::int64_t(writers.empty() ? 0 : writers.front().rows());
        train::SliceResult result;
        arena.execute([&] { result = replica.predict(ctx, weights, slice); });
        if (result.error) {
            cli::printError(*result.error);
            return cli::RunFailed;
        }
        if (auto s = appendOutputs(m, replica, writers); !s.ok()) {
            cli::printError(s.error());
            return cli::RunFailed;
        }
    }
    // Published only now, each whole: a run that stops early leaves no file that looks complete.
    for (auto &w : writers) {
        if (auto s = w.finish(); !s.ok()) {
            cli::printError(s.error());
            return cli::RunFailed;
        }
    }
    for (std::size_t o = 0; o < writers.size(); ++o) {
        const auto &shape = m.nodes()[std::size_t(m.outputs()[o].node)].shape;
        std::string text = "(" + std::to_string(writers[o].rows());
        for (auto d : shape)
            text += ", " + std::to_string(d);
        text += shape.empty() ? ",)" : ")";
        std::printf("%s: %s float32 -> %s\n", m.outputs()[o].name.c_str(), text.c_str(), writers[o].path().c_str());
    }
    return cli::Success;
}

} // namespace sluice::commands
