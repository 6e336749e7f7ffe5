// sluice import MODEL [--weights W.h5] --into PROJECT [--replace]: a Keras 3 model (.keras, or
// model.to_json() with a .weights.h5) becomes the project's model section (train/interchange/keras_import.h)
// and its weights the project's training.initial_weights, an .npz beside the project. The model
// is built against the Keras inputs' shapes first, so weights that disagree with the config are
// refused before anything is written; the project is saved atomically.
#include "commands/commands.h"

#include "bridge/model_import.h"
#include "cli/cli_support.h"
#include "project/project.h"

#include <QCommandLineParser>

#include <cstdio>

namespace sluice::commands {

int importModel(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Imports a Keras 3 model into a project: its layers become the project's model section (inputs bound\n"
        "to features of the same name), its weights the project's training.initial_weights (an .npz beside it).\n\n"
        "Examples:\n"
        "  sluice import model.keras --into projects/mine.sluice\n"
        "  sluice import model.json --weights model.weights.h5 --into p.sluice --replace\n\n"
        "MODEL: a .keras archive (keras.Model.save), or the JSON of model.to_json() (then --weights gives\n"
        "the .weights.h5 of model.save_weights; without it the model comes without weights).\n"
        "A project that has a model already keeps it unless --replace.");
    parser.addPositionalArgument("MODEL", "A .keras archive, or a model.to_json() file.");
    parser.addOption({"weights", "The .weights.h5 for a model.to_json() file (or to use instead of a .keras archive's own).", "W"});
    parser.addOption({"into", "The .sluice project to import into (saved in place).", "PROJECT"});
    parser.addOption({"replace", "Replace the project's model (and the weights file of an earlier import)."});
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1) {
        cli::printError("import", positional.isEmpty() ? "missing MODEL (a .keras archive or a model.to_json() file)" : "expected one MODEL, got " +
                                                                                                                         std::to_string(positional.size()));
        return cli::BadInput;
    }
    if (!parser.isSet("into")) {
        cli::printError("--into", "is required: the .sluice project to import the model into");
        return cli::BadInput;
    }
    auto project = Project::load(parser.value("into").toStdString());
    if (!project) {
        cli::printError(project.error());
        return cli::BadInput;
    }
    const bool replace = parser.isSet("replace");
    if (!project->model.is_null() && !project->model.empty() && !replace) {
        cli::printError(parser.value("into").toStdString(), "has a model already: --replace to replace it with the imported one");
        return cli::BadInput;
    }
    auto imported = bridge::importKerasModel(*project, positional[0].toStdString(), parser.value("weights").toStdString(), replace);
    if (!imported) {
        cli::printError(imported.error());
        return imported.error().kind == Error::Kind::Failed ? cli::RunFailed : cli::BadInput;
    }
    project->model = imported->model;
    if (!imported->initialWeights.empty()) {
        if (project->training.is_null())
            project->training = nlohmann::json::object();
        project->training["initial_weights"] = imported->initialWeights;
    }
    if (auto s = project->save(project->path()); !s.ok()) {
        cli::printError(s.error());
        return cli::RunFailed;
    }
    for (const auto &note : imported->notes)
        std::fprintf(stderr, "sluice: note: %s\n", note.c_str());
    std::printf("%zu layers, %zu weights (%zu floats) from %s -> %s%s\n", imported->layers, imported->arrays, imported->floats,
                positional[0].toStdString().c_str(), project->path().c_str(),
                imported->initialWeights.empty() ? " (no weights: the model starts from its initializers)" : "");
    return cli::Success;
}

} // namespace sluice::commands
