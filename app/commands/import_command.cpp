// sluice import MODEL [--weights W.h5] --into PROJECT [--replace]: a Keras 3 model (.keras, or
// model.to_json() with a .weights.h5) becomes the project's model section (train/keras_import.h)
// and its weights the project's training.initial_weights, an .npz beside the project. The model
// is built against the Keras inputs' shapes first, so weights that disagree with the config are
// refused before anything is written; the project is saved atomically.
#include "commands/commands.h"

#include "cli/cli_support.h"
#include "io/npz_writer.h"
#include "pipeline/element.h"
#include "pipeline/pipeline.h"
#include "project/project.h"
#include "train/keras_import.h"
#include "train/model.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>

#include <cstdio>
#include <set>

namespace sluice::commands {
namespace {

using train::Shape;
using train::shapeString;

// The model built against Keras's input shapes (a batch of 1), or why not: weights that do not
// fit the config are caught here, naming the weight. Unknown dimensions (null) skip the check.
Status checkWeights(const train::KerasImport &imported)
{
    pipeline::ElementSpec spec;
    const auto &inputs = imported.config.model["inputs"];
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        Shape shape{1};
        for (const auto &d : imported.config.inputShapes[i]) {
            if (!d.is_number_integer())
                return Status::success(); // built against the pipeline's shapes when it runs
            shape.push_back(d.get<std::int64_t>());
        }
        spec.features.push_back({inputs[i]["feature"].get<std::string>(), pipeline::ValueType{}, shape});
    }
    auto model = train::Model::build(imported.config.model, spec, train::ModelBuildOptions{true});
    if (!model)
        return model.error();
    std::set<std::string> given;
    for (const auto &w : imported.weights) {
        given.insert(w.name);
        const auto &params = (*model)->parameters();
        const auto it = std::find_if(params.begin(), params.end(), [&](const train::ParameterEntry &p) { return p.name == w.name; });
        if (it == params.end())
            return Error::corrupt(imported.source, "has weights " + w.name + ", which the model has not");
        if (it->shape != Shape(w.shape.begin(), w.shape.end()))
            return Error::corrupt(imported.source, "weights " + w.name + " have shape " + shapeString(Shape(w.shape.begin(), w.shape.end())) +
                                                       ", the model needs " + shapeString(it->shape));
    }
    if (!imported.weights.empty())
        for (const auto &p : (*model)->parameters())
            if (!given.count(p.name))
                return Error::corrupt(imported.source, "has no weights for " + p.name);
    return Status::success();
}

Status writeWeights(const std::string &path, const std::vector<train::ImportedWeight> &weights)
{
    auto npz = NpzWriter::create(path);
    if (!npz)
        return npz.error();
    for (const auto &w : weights) {
        const std::vector<std::uint64_t> shape(w.shape.begin(), w.shape.end());
        if (auto s = npz->add(w.name, TypeDescr{DType::Float32, nativeByteOrder()}, shape, std::as_bytes(std::span(w.values))); !s.ok())
            return s;
    }
    return npz->finish();
}

} // namespace

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
    auto imported = train::importKerasModel(positional[0].toStdString(), parser.value("weights").toStdString());
    if (!imported) {
        cli::printError(imported.error());
        return cli::BadInput;
    }
    if (auto s = checkWeights(*imported); !s.ok()) {
        cli::printError(s.error());
        return cli::BadInput;
    }

    // Inputs and targets are bound to features of their names: say which the pipeline lacks.
    std::vector<std::string> notes = imported->config.notes;
    project->model = imported->config.model;
    if (auto pipe = pipeline::Pipeline::build(*project, pipeline::PipelineOptions{}); pipe) {
        const auto &features = (*pipe)->elementSpec();
        for (const auto &input : project->model["inputs"])
            if (!features.find(input["feature"].get<std::string>()))
                notes.push_back("model input '" + input["name"].get<std::string>() + "': the pipeline has no feature of that name (it has " +
                                features.names() + "); set the input's \"feature\"");
        for (const auto &output : project->model["outputs"])
            if (!features.find(output["target"].get<std::string>()))
                notes.push_back("model output '" + output["name"].get<std::string>() + "': the pipeline has no target feature '" +
                                output["target"].get<std::string>() + "'; set the output's \"target\" before training");
    }

    if (!imported->weights.empty()) {
        const QString weightsName = QFileInfo(positional[0]).completeBaseName() + ".weights.npz";
        const QString weightsPath = QDir(QString::fromStdString(project->folder())).filePath(weightsName);
        if (QFileInfo::exists(weightsPath) && !replace) {
            cli::printError(weightsPath.toStdString(), "exists: --replace to overwrite it");
            return cli::BadInput;
        }
        if (auto s = writeWeights(weightsPath.toStdString(), imported->weights); !s.ok()) {
            cli::printError(s.error());
            return cli::RunFailed;
        }
        if (project->training.is_null())
            project->training = nlohmann::json::object();
        project->training["initial_weights"] = weightsName.toStdString();
    }
    if (auto s = project->save(project->path()); !s.ok()) {
        cli::printError(s.error());
        return cli::RunFailed;
    }
    for (const auto &note : notes)
        std::fprintf(stderr, "sluice: note: %s\n", note.c_str());
    std::size_t floats = 0;
    for (const auto &w : imported->weights)
        floats += w.values.size();
    std::printf("%zu layers, %zu weights (%zu floats) from %s -> %s%s\n", project->model["layers"].size(), imported->weights.size(), floats,
                positional[0].toStdString().c_str(), project->path().c_str(),
                imported->weights.empty() ? " (no weights: the model starts from its initializers)" : "");
    return cli::Success;
}

} // namespace sluice::commands
