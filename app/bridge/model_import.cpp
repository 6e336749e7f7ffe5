#include "bridge/model_import.h"

#include "io/writers/npz_writer.h"
#include "pipeline/engine/element.h"
#include "pipeline/engine/pipeline.h"
#include "train/interchange/keras_import.h"
#include "train/model/model.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <set>

namespace sluice::bridge {
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

// Inputs and targets are bound to features of their names: which the pipeline lacks.
std::vector<std::string> bindingNotes(const Project &project, const nlohmann::json &model)
{
    std::vector<std::string> notes;
    Project withModel = project;
    withModel.model = model;
    auto pipe = pipeline::Pipeline::build(withModel, pipeline::PipelineOptions{});
    if (!pipe)
        return notes;
    const auto &features = (*pipe)->elementSpec();
    for (const auto &input : model["inputs"])
        if (!features.find(input["feature"].get<std::string>()))
            notes.push_back("model input '" + input["name"].get<std::string>() + "': the pipeline has no feature of that name (it has " +
                            features.names() + "); set the input's \"feature\"");
    for (const auto &output : model["outputs"])
        if (!features.find(output["target"].get<std::string>()))
            notes.push_back("model output '" + output["name"].get<std::string>() + "': the pipeline has no target feature '" +
                            output["target"].get<std::string>() + "'; set the output's \"target\" before training");
    return notes;
}

} // namespace

Result<ModelImport> importKerasModel(const Project &project, const std::string &modelFile, const std::string &weightsH5, bool replace)
{
    auto imported = train::importKerasModel(modelFile, weightsH5);
    if (!imported)
        return imported.error();
    if (auto s = checkWeights(*imported); !s.ok())
        return s.error();
    ModelImport done;
    done.model = imported->config.model;
    done.notes = imported->config.notes;
    for (auto &note : bindingNotes(project, done.model))
        done.notes.push_back(std::move(note));
    done.layers = done.model["layers"].size();
    done.arrays = imported->weights.size();
    for (const auto &w : imported->weights)
        done.floats += w.values.size();
    if (imported->weights.empty())
        return done;
    const QString name = QFileInfo(QString::fromStdString(modelFile)).completeBaseName() + ".weights.npz";
    const QString path = QDir(QString::fromStdString(project.folder())).filePath(name);
    if (QFileInfo::exists(path) && !replace)
        return Error::invalid(path.toStdString(), "exists: replace it (--replace) or move it away");
    if (auto s = writeWeights(path.toStdString(), imported->weights); !s.ok())
        return Error::failed(s.error().what, s.error().reason);
    done.initialWeights = name.toStdString();
    return done;
}

} // namespace sluice::bridge
