// sluice preview PROJECT [--node ID] [--batches N] [--out DIR]: what a stage emits, printed or
// written as DIR/batch_00000.npz, … (one array per feature, named as the feature).
#include "commands/commands.h"

#include "cli/cli_support.h"
#include "cli/pipeline_options.h"
#include "io/writers/npz_writer.h"
#include "pipeline/engine/preview.h"

#include <QDir>

#include <cstdio>

namespace sluice::commands {
namespace {

Status writeNpz(const std::string &path, const pipeline::ElementSpec &spec, const pipeline::Element &e)
{
    auto writer = NpzWriter::create(path);
    if (!writer.ok())
        return writer.error();
    for (std::size_t f = 0; f < spec.features.size(); ++f) {
        const pipeline::Tensor &t = e.tensors[f];
        std::vector<std::uint64_t> shape(t.shape().begin(), t.shape().end());
        Status s = t.isString() ? writer->addStrings(spec.features[f].name, shape, t.stringValues())
                                : writer->add(spec.features[f].name, TypeDescr{t.dtype(), nativeByteOrder()}, shape, t.bytes());
        if (!s.ok())
            return s;
    }
    return writer->finish();
}

} // namespace

int preview(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription("Runs a project's pipeline up to a node and shows what it emits.\n\n"
                                     "Examples:\n  sluice preview p.sluice --node shuffle --batches 2\n"
                                     "  sluice preview p.sluice --batches 3 --out preview/   # preview/batch_00000.npz, …\n"
                                     "  sluice preview p.sluice --seed 7 --threads 2 --ram-budget 1G   # the same shuffle as run --seed 7\n"
                                     "  sluice preview big.sluice --resident-budget 512M   # mapped sources hold at most 512 MiB\n"
                                     "  sluice preview p.sluice --set nodes.batch.batch_size=4   # the project with one value changed");
    parser.addPositionalArgument("PROJECT", "The .sluice project file.");
    parser.addOption({"node", "The node whose output to show (default: the pipeline's output).", "ID"});
    parser.addOption({"batches", "Elements (batches, after a batch stage) to take (default 1).", "N"});
    parser.addOption({"out", "Write each element as DIR/batch_NNNNN.npz instead of printing it.", "DIR"});
    cli::addSetOption(parser);
    cli::addPipelineOptions(parser);
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    auto project = cli::loadProjectArgument(parser, "preview");
    if (!project)
        return cli::BadInput;
    auto options = cli::pipelineOptions(parser);
    if (!options)
        return cli::BadInput;
    std::uint64_t batches = 1;
    if (parser.isSet("batches")) {
        auto n = cli::parseCount("batches", parser.value("batches"), 1);
        if (!n)
            return cli::BadInput;
        batches = *n;
    }
    const QString out = parser.value("out");
    if (!out.isEmpty() && !QDir().mkpath(out)) {
        cli::printError(out.toStdString(), "cannot create the folder");
        return cli::BadInput;
    }
    auto pipe = cli::buildPipeline(*project, *options);
    if (!pipe)
        return cli::BadInput;
    const auto &spec = pipe->elementSpec();
    if (out.isEmpty())
        std::printf("%s emits %s\n", pipe->outputNode().c_str(), spec.text().c_str());
    std::uint64_t i = 0;
    for (; i < batches; ++i) {
        auto r = pipe->next();
        if (!r.ok()) {
            cli::printError(r.error());
            return cli::RunFailed;
        }
        if (!*r)
            break;
        const pipeline::Element &e = **r;
        if (!out.isEmpty()) {
            char name[32];
            std::snprintf(name, sizeof name, "batch_%05llu.npz", (unsigned long long)i);
            const std::string path = QDir(out).filePath(name).toStdString();
            if (Status s = writeNpz(path, spec, e); !s.ok()) {
                cli::printError(s.error());
                return cli::RunFailed;
            }
            continue;
        }
        std::printf("element %llu\n", (unsigned long long)i);
        for (std::size_t f = 0; f < spec.features.size(); ++f)
            std::printf("  %-16s %-8s %-14s %s\n", spec.features[f].name.c_str(), e.tensors[f].type().name().c_str(),
                        pipeline::shapeText(e.tensors[f].shape()).c_str(), pipeline::firstValues(e.tensors[f]).c_str());
    }
    if (!out.isEmpty())
        std::printf("wrote %llu element%s of %s to %s\n", (unsigned long long)i, i == 1 ? "" : "s", pipe->outputNode().c_str(),
                    out.toStdString().c_str());
    else if (i < batches)
        std::printf("(the pipeline ended after %llu element%s)\n", (unsigned long long)i, i == 1 ? "" : "s");
    return cli::Success;
}

} // namespace sluice::commands
