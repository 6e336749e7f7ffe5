#include "cli/pipeline_options.h"

#include "cli/cli_support.h"
#include "train/loop/training_config.h"

#include <cstdio>

namespace sluice::cli {

void addPipelineOptions(QCommandLineParser &parser)
{
    parser.addOption({"threads", "CPU budget: threads of the pipeline's task arena (default: all cores).", "N"});
    parser.addOption({"seed", "Pipeline seed: random ops without a seed of their own derive theirs from it.", "S"});
    parser.addOption({"ram-budget", "RAM budget for AUTOTUNE'd buffers, e.g. 4G (default: half of RAM).", "SIZE"});
    parser.addOption({"resident-budget",
                      "Resident memory mapped sources may hold, e.g. 2G: a shuffled pass over more data than this reads "
                      "rows ahead from storage and releases its pages whenever the process grows by this much "
                      "(default: a quarter of RAM).",
                      "SIZE"});
}

std::optional<Project> loadProjectArgument(const QCommandLineParser &parser, const char *command)
{
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1) {
        printError(command, positional.isEmpty() ? "missing PROJECT (a .sluice file)" : "expected one PROJECT, got " +
                                                                                               std::to_string(positional.size()));
        return std::nullopt;
    }
    return loadProject(parser, positional[0]);
}

std::optional<Project> loadProject(const QCommandLineParser &parser, const QString &path)
{
    auto project = Project::load(path.toStdString());
    if (!project.ok()) {
        printError(project.error());
        return std::nullopt;
    }
    if (!parser.optionNames().contains(QStringLiteral("set")))
        return std::move(project).value();
    nlohmann::json document = project->toJson();
    for (const QString &assignment : parser.values("set"))
        if (auto s = train::applySetting(document, assignment.toStdString()); !s.ok()) {
            printError(s.error());
            return std::nullopt;
        }
    auto changed = Project::fromJson(document, project->folder(), project->path());
    if (!changed) {
        printError(changed.error());
        return std::nullopt;
    }
    return std::move(changed).value();
}

void addSetOption(QCommandLineParser &parser)
{
    parser.addOption({"set", "Overrides a value of the project: a dotted key (training.epochs, training.optimizer.learning_rate) or "
                             "nodes.<id>.<param> for a pipeline stage; the value is JSON or text. Repeatable.", "key=value"});
}

std::optional<pipeline::PipelineOptions> pipelineOptions(const QCommandLineParser &parser)
{
    pipeline::PipelineOptions options;
    if (parser.isSet("threads")) {
        auto n = parseCount("threads", parser.value("threads"), 1);
        if (!n)
            return std::nullopt;
        options.threads = int(std::min<std::uint64_t>(*n, 1024));
    }
    if (parser.isSet("seed")) {
        auto s = parseCount("seed", parser.value("seed"));
        if (!s)
            return std::nullopt;
        options.seed = *s;
    }
    if (parser.isSet("ram-budget")) {
        auto b = parseByteSize("ram-budget", parser.value("ram-budget"));
        if (!b)
            return std::nullopt;
        options.ramBudgetBytes = *b;
    }
    if (parser.isSet("resident-budget")) {
        auto b = parseByteSize("resident-budget", parser.value("resident-budget"));
        if (!b)
            return std::nullopt;
        options.residentBudgetBytes = std::max<std::uint64_t>(*b, 1);
    }
    if (parser.isSet("node"))
        options.outputNode = parser.value("node").toStdString();
    return options;
}

std::unique_ptr<pipeline::Pipeline> buildPipeline(const Project &project, const pipeline::PipelineOptions &options)
{
    auto built = pipeline::Pipeline::build(project, options);
    if (!built.ok()) {
        printError(built.error());
        return nullptr;
    }
    for (const auto &note : (*built)->notes())
        std::fprintf(stderr, "sluice: note: %s\n", note.c_str());
    return std::move(built).value();
}

} // namespace sluice::cli
