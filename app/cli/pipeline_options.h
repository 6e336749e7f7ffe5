#pragma once
// What `run` and `preview` share: loading the project named on the command line and turning
// --threads / --seed / --node into PipelineOptions, with errors printed as docs/architecture.md, decision 9
// says (exit code 2 for bad input).

#include "pipeline/engine/pipeline.h"
#include "project/project.h"

#include <QCommandLineParser>

#include <memory>
#include <optional>

namespace sluice::cli {

void addPipelineOptions(QCommandLineParser &parser);
// --set key=value (repeatable): overrides of the project's values, applied by loadProjectArgument.
void addSetOption(QCommandLineParser &parser);
// The project (first positional argument), with the --set overrides applied where the command
// takes them, or, after printing why, nothing.
std::optional<Project> loadProjectArgument(const QCommandLineParser &parser, const char *command);
// The same for a project file named otherwise (an option's value).
std::optional<Project> loadProject(const QCommandLineParser &parser, const QString &path);
std::optional<pipeline::PipelineOptions> pipelineOptions(const QCommandLineParser &parser);
// Builds the pipeline; prints the error (naming node and parameter) and returns nothing on failure.
std::unique_ptr<pipeline::Pipeline> buildPipeline(const Project &project, const pipeline::PipelineOptions &options);

} // namespace sluice::cli
