#include "train/model/model.h"

#include "io/formats/npz_file.h"
#include "io/writers/npz_writer.h"
#include "pipeline/engine/element.h"
#include "train/model/initializers.h"
#include "train/model/layer_registry.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

namespace sluice::train {

namespace {

// "model: <where>: <reason>", with the key concerned as a field (Error::key); the model entry
// (Error::layer, "layers[2]") is added by Model::build, which knows which entry it is reading.
Error modelError(const std::string &what, const std::string &reason, const std::string &key = {})
{
    Error e = Error::invalid("model: " + what, reason);
    e.key = key;
    return e;
}

Result<std::string> stringField(const nlohmann::json &j, const char *key, const std::string &where)
{
    if (!j.contains(key))
        return modelError(where, std::string("needs \"") + key + "\"", key);
    if (!j[key].is_string() || j[key].get<std::string>().empty())
        return modelError(where, std::string("\"") + key + "\" must be a non-empty string", key);
    return j[key].get<std::string>();
}

Result<Shape> perSampleShape(const pipeline::ElementSpec &spec, std::size_t index, const std::string &where)
{
    const auto &f = spec.features[index];
    if (f.type.isString)
        return modelError(where, "feature '" + f.name + "' holds strings; a model needs numbers");
    if (f.shape.empty())
        return modelError(where, "feature '" + f.name + "' is a scalar per element: the pipeline must batch it (add a batch stage), as model.fit expects");
    Shape s(f.shape.begin() + 1, f.shape.end());
    for (auto d : s)
        if (d < 0)
            return modelError(where, "feature '" + f.name + "' has a dimension not known before running " + shapeString(s));
    return s;
}

Result<std::size_t> findFeature(const pipeline::ElementSpec &spec, const std::string &feature, const std::string &where)
{
    if (auto i = spec.find(feature))
        return *i;
    return modelError(where, "no feature '" + feature + "' in the pipeline's output (it has: " + spec.names() + ")");
}

// The layer's own parameters: everything but the graph keys.
nlohmann::json layerConfig(const nlohmann::json &j)
{
    nlohmann::json config = j.contains("config") && j["config"].is_object() ? j["config"] : nlohmann::json::object();
    for (auto it = j.begin(); it != j.end(); ++it)
        if (it.key() != "class_name" && it.key() != "name" && it.key() != "inputs" && it.key() != "config")
            config[it.key()] = it.value();
    return config;
}

} // namespace

Result<std::unique_ptr<Model>> Model::build(const nlohmann::json &json, const pipeline::ElementSpec &spec, ModelBuildOptions options)
{
    std::string reading; // the entry being read, "layers[2]": where an error is placed
    auto model = buildEntries(json, spec, options, reading);
    if (!model)
        return reading.empty() ? model.error() : model.error().inLayer(reading);
    return model;
}

Result<std::unique_ptr<Model>> Model::buildEntries(const nlohmann::json &json, const pipeline::ElementSpec &spec, ModelBuildOptions buildOptions,
                                                   std::string &reading)
{
    auto model = std::unique_ptr<Model>(new Model());
    if (!json.is_object())
        return modelError("", "must be an object with \"inputs\", \"layers\" and \"outputs\"");
    for (auto it = json.begin(); it != json.end(); ++it)
        if (it.key() != "inputs" && it.key() != "layers" && it.key() != "outputs" && it.key() != "name")
            return modelError(it.key(), "unknown key (known: name, inputs, layers, outputs)", it.key());
    for (const char *key : {"inputs", "layers", "outputs"})
        if (!json.contains(key) || !json[key].is_array() || json[key].empty())
            return modelError(key, "must be a non-empty array", key);

    std::map<std::string, int> byName;
    auto addName = [&](const std::string &name, const std::string &where) -> Status {
        if (name.find('/') != std::string::npos)
            return modelError(where, "name '" + name + "' may not contain '/' (weights are named <layer>/<param>)");
        if (!byName.emplace(name, int(model->m_nodes.size())).second)
            return modelError(where, "the name '" + name + "' is used twice");
        return Status::success();
    };

    for (std::size_t i = 0; i < json["inputs"].size(); ++i) {
        const auto &j = json["inputs"][i];
        const std::string where = "inputs[" + std::to_string(i) + "]";
        reading = where;
        if (!j.is_object())
            return modelError(where, "must be an object {\"name\", \"feature\"}");
        auto name = stringField(j, "name", where);
        if (!name)
            return name.error();
        const std::string feature = j.contains("feature") && j["feature"].is_string() ? j["feature"].get<std::string>() : *name;
        auto index = findFeature(spec, feature, "input '" + *name + "'");
        if (!index)
            return index.error().inLayer({}, "feature");
        auto shape = perSampleShape(spec, *index, "input '" + *name + "'");
        if (!shape)
            return shape.error().inLayer({}, "feature");
        if (auto s = addName(*name, where); !s.ok())
            return s.error();
        model->m_inputs.push_back({*name, feature, *index, *shape});
        ModelNode node;
        node.name = *name;
        node.shape = *shape;
        model->m_nodes.push_back(std::move(node));
    }

    for (std::size_t i = 0; i < json["layers"].size(); ++i) {
        const auto &j = json["layers"][i];
        const std::string where = "layers[" + std::to_string(i) + "]";
        reading = where;
        if (!j.is_object())
            return modelError(where, "must be an object {\"class_name\", \"name\", ...}");
        auto className = stringField(j, "class_name", where);
        if (!className)
            return className.error();
        const std::string name = j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>()
                                                                              : *className + "_" + std::to_string(i);
        ModelNode node;
        node.name = name;
        if (!j.contains("inputs")) {
            if (model->m_nodes.size() > model->m_inputs.size() || model->m_inputs.size() == 1)
                node.inputs.push_back(int(model->m_nodes.size()) - 1);
            else
                return modelError("layer '" + name + "'", "says no \"inputs\" and the model has several inputs: name the ones it takes", "inputs");
        } else {
            std::vector<std::string> names;
            if (j["inputs"].is_string())
                names.push_back(j["inputs"].get<std::string>());
            else if (j["inputs"].is_array() && !j["inputs"].empty() && std::all_of(j["inputs"].begin(), j["inputs"].end(), [](auto &v) { return v.is_string(); }))
                names = j["inputs"].get<std::vector<std::string>>();
            else
                return modelError("layer '" + name + "'", "\"inputs\" must be a name or a non-empty list of names", "inputs");
            for (const auto &n : names) {
                auto it = byName.find(n);
                if (it == byName.end())
                    return modelError("layer '" + name + "'", "input '" + n + "' is not a model input or an earlier layer", "inputs");
                node.inputs.push_back(it->second);
            }
        }
        auto layer = createLayer(*className, name, layerConfig(j));
        if (!layer)
            return modelError("layer '" + name + "'", layer.error().message(), layer.error().key);
        std::vector<Shape> shapes;
        for (int in : node.inputs)
            shapes.push_back(model->m_nodes[std::size_t(in)].shape);
        auto shape = (*layer)->build(shapes);
        if (!shape)
            return modelError("layer '" + name + "'", shape.error().reason, shape.error().key);
        node.shape = *shape;
        for (const auto &p : (*layer)->params()) {
            ParameterEntry entry{name + "/" + p.name, p.shape, p.initializer, model->m_parameterCount, std::size_t(shapeCount(p.shape)),
                                 p.trainable};
            entry.rowSparse = p.rowSparse && p.trainable && p.shape.size() >= 1 && p.shape[0] > 0;
            entry.sparseUpdates = entry.rowSparse && p.sparseUpdates;
            entry.rowSize = entry.rowSparse ? std::int64_t(entry.count) / p.shape[0] : 0;
            entry.node = int(model->m_nodes.size());
            // Each array starts on a 64-byte boundary so that vector loops over it stay aligned.
            // Non-trainable arrays are placed after every trainable one (below).
            if (p.trainable)
                model->m_parameterCount += (entry.count + 15) / 16 * 16;
            node.params.push_back(model->m_parameters.size());
            model->m_parameters.push_back(std::move(entry));
        }
        node.needsGradient = !node.params.empty();
        for (int in : node.inputs)
            node.needsGradient = node.needsGradient || model->m_nodes[std::size_t(in)].needsGradient;
        node.layer = std::move(*layer);
        if (auto s = addName(name, where); !s.ok())
            return s.error();
        model->m_nodes.push_back(std::move(node));
    }

    // The optimizer works on [0, trainableParameterCount()); the moving statistics follow.
    model->m_trainableCount = model->m_parameterCount;
    for (auto &entry : model->m_parameters)
        if (!entry.trainable) {
            entry.offset = model->m_parameterCount;
            model->m_parameterCount += (entry.count + 15) / 16 * 16;
        }
    // Everything but the row-sparse tables (padding included) is zeroed and summed densely.
    std::size_t cursor = 0;
    for (std::size_t p = 0; p < model->m_parameters.size(); ++p) {
        const auto &entry = model->m_parameters[p];
        if (!entry.rowSparse)
            continue;
        model->m_rowSparse.push_back(p);
        if (entry.offset > cursor)
            model->m_denseRanges.push_back({cursor, entry.offset - cursor});
        cursor = entry.offset + entry.count;
    }
    if (model->m_parameterCount > cursor)
        model->m_denseRanges.push_back({cursor, model->m_parameterCount - cursor});

    std::set<std::string> outputNames;
    for (std::size_t i = 0; i < json["outputs"].size(); ++i) {
        const auto &j = json["outputs"][i];
        const std::string where = "outputs[" + std::to_string(i) + "]";
        reading = where;
        if (!j.is_object())
            return modelError(where, "must be an object {\"name\", \"layer\", \"target\", \"loss\"}");
        static const std::set<std::string> known{"name", "layer", "target", "loss", "loss_weight", "metrics", "from_logits", "delta", "label_smoothing"};
        for (auto it = j.begin(); it != j.end(); ++it)
            if (!known.count(it.key()))
                return modelError(where + "." + it.key(), "unknown key (known: name, layer, target, loss, loss_weight, metrics, from_logits, delta, label_smoothing)", it.key());
        ModelOutput out;
        auto layerName = stringField(j, "layer", where);
        if (!layerName)
            return layerName.error();
        out.layer = *layerName;
        out.name = j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : out.layer;
        if (!outputNames.insert(out.name).second)
            return modelError(where, "output name '" + out.name + "' is used twice", "name");
        const std::string owhere = "output '" + out.name + "'";
        auto node = byName.find(out.layer);
        if (node == byName.end() || node->second < int(model->m_inputs.size()))
            return modelError(owhere, "layer '" + out.layer + "' is not a layer of the model", "layer");
        out.node = node->second;
        auto target = stringField(j, "target", owhere);
        if (!target)
            return target.error();
        out.target = *target;
        const bool withoutTarget = buildOptions.targetsOptional && !spec.find(out.target);
        if (withoutTarget) {
            out.targetIndex = ModelOutput::kNoTarget;
        } else {
            auto index = findFeature(spec, out.target, owhere);
            if (!index)
                return index.error().inLayer({}, "target");
            out.targetIndex = *index;
            auto tshape = perSampleShape(spec, *index, owhere);
            if (!tshape)
                return tshape.error().inLayer({}, "target");
            out.targetShape = *tshape;
        }
        if (!j.contains("loss"))
            return modelError(owhere, "needs a \"loss\"", "loss");
        nlohmann::json options = nlohmann::json::object();
        for (const char *k : {"from_logits", "delta", "label_smoothing"})
            if (j.contains(k))
                options[k] = j[k];
        auto loss = createLoss(j["loss"], options);
        if (!loss)
            return modelError(owhere + " loss", loss.error().message(), "loss");
        out.loss = std::move(*loss);
        out.lossName = out.loss->name();
        out.fromLogits = j.value("from_logits", false) || (j["loss"].is_object() && j["loss"].value("from_logits", false));
        if (auto s = withoutTarget ? Status::success() : out.loss->checkShapes(model->m_nodes[std::size_t(out.node)].shape, out.targetShape); !s.ok())
            return modelError(owhere, "layer '" + out.layer + "' gives " + shapeString(model->m_nodes[std::size_t(out.node)].shape) +
                                          " per sample and target '" + out.target + "' is " + shapeString(out.targetShape) + ": " + s.error().reason,
                              "target");
        if (j.contains("loss_weight")) {
            if (!j["loss_weight"].is_number() || j["loss_weight"].get<double>() < 0)
                return modelError(owhere + ".loss_weight", "must be a number >= 0", "loss_weight");
            out.lossWeight = j["loss_weight"].get<float>();
        }
        if (j.contains("metrics")) {
            if (!j["metrics"].is_array())
                return modelError(owhere + ".metrics", "must be a list of names", "metrics");
            for (const auto &m : j["metrics"]) {
                if (!m.is_string())
                    return modelError(owhere + ".metrics", "must be a list of names", "metrics");
                auto metric = createMetric(m.get<std::string>(), out.lossName, out.fromLogits);
                if (!metric)
                    return modelError(owhere + ".metrics", metric.error().message(), "metrics");
                out.metrics.push_back(m.get<std::string>());
            }
        }
        model->m_outputs.push_back(std::move(out));
    }
    return model;
}

Result<std::vector<float>> Model::initialWeights(std::uint64_t seed) const
{
    std::vector<float> weights(m_parameterCount, 0.0f);
    for (const auto &p : m_parameters)
        if (auto s = initialize(p.initializer, p.shape, seed, p.name, std::span<float>(weights).subspan(p.offset, p.count)); !s.ok())
            return Error::invalid("model: " + p.name, s.error().message());
    return weights;
}

Status Model::loadWeights(const std::string &path, std::span<float> weights) const
{
    auto npz = NpzFile::open(path);
    if (!npz)
        return npz.error();
    for (const auto &p : m_parameters) {
        if (!npz->find(p.name))
            return Error::invalid(path, "has no array '" + p.name + "' (the model's weights are named <layer>/<param>)");
        auto array = npz->load(p.name);
        if (!array)
            return array.error();
        const auto native = array->toNative();
        std::vector<std::uint64_t> want(p.shape.begin(), p.shape.end());
        if (native.shape() != want) {
            Shape got(native.shape().begin(), native.shape().end());
            return Error::invalid(path, "array '" + p.name + "' has shape " + shapeString(got) + ", the model needs " + shapeString(p.shape));
        }
        if (!isFloating(native.dtype()))
            return Error::invalid(path, "array '" + p.name + "' is " + std::string(dtypeName(native.dtype())) + ", weights must be floating point");
        auto out = weights.subspan(p.offset, p.count);
        const std::byte *bytes = native.data().data();
        const std::size_t item = itemSize(native.dtype());
        for (std::size_t i = 0; i < p.count; ++i)
            out[i] = float(loadAsDouble(bytes + i * item, native.descr()));
    }
    return Status::success();
}

Status Model::saveWeights(const std::string &path, std::span<const float> weights) const
{
    auto writer = NpzWriter::create(path);
    if (!writer)
        return writer.error();
    for (const auto &p : m_parameters) {
        std::vector<std::uint64_t> shape(p.shape.begin(), p.shape.end());
        auto values = weights.subspan(p.offset, p.count);
        if (auto s = writer->add(p.name, TypeDescr{DType::Float32}, shape, std::as_bytes(values)); !s.ok())
            return s;
    }
    return writer->finish();
}

std::string Model::summary() const
{
    std::ostringstream out;
    out << "Layer (class)                          Output shape         Param #\n";
    std::size_t total = 0;
    for (const auto &n : m_nodes) {
        std::size_t count = 0;
        for (auto p : n.params)
            count += m_parameters[p].count;
        total += count;
        std::string label = n.name + " (" + (n.layer ? n.layer->className() : std::string("Input")) + ")";
        label.resize(std::max<std::size_t>(label.size(), 38), ' ');
        std::string shape = "(None" + (n.shape.empty() ? std::string(")") : ", " + shapeString(n.shape).substr(1));
        if (n.shape.size() == 1)
            shape = "(None, " + std::to_string(n.shape[0]) + ")";
        shape.resize(std::max<std::size_t>(shape.size(), 20), ' ');
        out << label << " " << shape << " " << count << "\n";
    }
    std::size_t trainable = 0;
    for (const auto &p : m_parameters)
        trainable += p.trainable ? p.count : 0;
    out << "Total params: " << total << "\n";
    if (trainable != total)
        out << "Trainable params: " << trainable << "\nNon-trainable params: " << total - trainable << "\n";
    return out.str();
}

void applyStateUpdates(const Model &model, std::span<float> weights, std::span<float> grads)
{
    for (const auto &p : model.parameters()) {
        if (p.trainable)
            continue;
        for (std::size_t i = p.offset; i < p.offset + p.count; ++i) {
            weights[i] += grads[i];
            grads[i] = 0;
        }
    }
}

} // namespace sluice::train
