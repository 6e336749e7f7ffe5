// The config half of train/interchange/keras_import.h: config.json to Sluice's model section. Pure JSON work
// with no dependency on the layer registry (the supported names come through
// kerasSupportedLayers()/kerasSupportedLosses()), so that tests/fuzz compiles it on its own.
#include "train/interchange/keras_import.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <regex>

namespace sluice::train {

// keras.src.utils.naming.to_snake_case: how Keras names a layer's place in a weights file.
std::string kerasSnakeCase(const std::string &className)
{
    std::string name;
    for (char c : className)
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_')
            name += c;
    name = std::regex_replace(name, std::regex("(.)([A-Z][a-z]+)"), "$1_$2");
    name = std::regex_replace(name, std::regex("([a-z])([A-Z])"), "$1_$2");
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return name;
}

namespace {

using nlohmann::json;

Error configError(const std::string &layer, const std::string &key, const std::string &reason)
{
    Error e = Error::invalid(layer.empty() ? std::string("config") : layer, reason);
    e.layer = layer;
    e.key = key;
    return e;
}

std::string shortText(const json &value)
{
    std::string text = value.dump();
    return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

const json *member(const json &object, const char *key)
{
    return object.is_object() && object.contains(key) ? &object[key] : nullptr;
}

bool flag(const json &config, const char *key, bool fallback)
{
    const json *v = member(config, key);
    return v && v->is_boolean() ? v->get<bool>() : fallback;
}

// The variables a layer of this class keeps, by Sluice's names, in Keras's order.
std::vector<std::string> weightNames(const std::string &cls, const json &config)
{
    if (cls == "Dense" || cls == "Conv1D" || cls == "Conv2D")
        return flag(config, "use_bias", true) ? std::vector<std::string>{"kernel", "bias"} : std::vector<std::string>{"kernel"};
    if (cls == "TimeDistributed") {
        const json *inner = member(config, "layer");
        return weightNames("Dense", inner && member(*inner, "config") ? (*inner)["config"] : json::object());
    }
    if (cls == "Embedding")
        return {"embeddings"};
    if (cls == "GRU" || cls == "LSTM") {
        std::vector<std::string> names{"kernel", "recurrent_kernel"};
        if (flag(config, "use_bias", true))
            names.push_back("bias");
        return names;
    }
    if (cls == "LayerNormalization" || cls == "BatchNormalization") {
        std::vector<std::string> names;
        if (flag(config, "scale", true))
            names.push_back("gamma");
        if (flag(config, "center", true))
            names.push_back("beta");
        if (cls == "BatchNormalization") {
            names.push_back("moving_mean");
            names.push_back("moving_variance");
        }
        return names;
    }
    return {};
}

std::string varsPath(const std::string &cls)
{
    if (cls == "GRU" || cls == "LSTM")
        return "/cell/vars";
    if (cls == "TimeDistributed")
        return "/layer/vars";
    return "/vars";
}

// Names Keras gives layers' places in the weights file: the class in snake case, then _1, _2, ...
class WeightPlaces
{
public:
    std::string next(const std::string &cls)
    {
        const std::string base = kerasSnakeCase(cls);
        auto [it, first] = m_used.try_emplace(base, 0);
        if (first)
            return "layers/" + base;
        return "layers/" + base + "_" + std::to_string(++it->second);
    }

private:
    std::map<std::string, int> m_used;
};

Result<std::string> layerName(const json &layer, std::size_t index)
{
    const json *config = member(layer, "config");
    const json *name = member(layer, "name");
    if (!name && config)
        name = member(*config, "name");
    if (!name || !name->is_string() || name->get<std::string>().empty())
        return configError("layers[" + std::to_string(index) + "]", "name", "a layer without a name");
    const std::string text = name->get<std::string>();
    if (text.find('/') != std::string::npos)
        return configError(text, "name", "layer names may not contain '/' (Sluice names weights \"<layer>/<weight>\")");
    return text;
}

Result<std::string> className(const json &layer, const std::string &name)
{
    const json *cls = member(layer, "class_name");
    if (!cls || !cls->is_string())
        return configError(name, "class_name", "a layer without a \"class_name\"");
    const std::string text = cls->get<std::string>();
    if (text == "InputLayer")
        return text;
    const auto &known = kerasSupportedLayers();
    if (std::find(known.begin(), known.end(), text) == known.end()) {
        std::string list;
        for (const auto &l : known)
            list += (list.empty() ? "" : ", ") + l;
        Error e = Error::unsupported(name, "layer " + text + " is not supported (supported: " + list + ")");
        e.layer = name;
        e.key = "class_name";
        return e;
    }
    return text;
}

// An InputLayer's per-sample shape (batch_shape without its first entry).
Result<json> inputShape(const json &layer, const std::string &name)
{
    const json *config = member(layer, "config");
    const json *shape = config ? member(*config, "batch_shape") : nullptr;
    if (!shape && config)
        shape = member(*config, "batch_input_shape"); // Keras 2's name
    if (!shape || !shape->is_array() || shape->empty())
        return configError(name, "batch_shape", "an InputLayer needs its batch_shape");
    json out = json::array();
    for (std::size_t i = 1; i < shape->size(); ++i)
        out.push_back((*shape)[i]);
    // Any dtype is taken: every feature reaches the model as float32 in Sluice (ids too).
    if (config) {
        for (const char *key : {"sparse", "ragged"})
            if (flag(*config, key, false))
                return configError(name, key, std::string("sparse and ragged inputs are not supported (") + key + " must be false)");
    }
    return out;
}

// A loss Keras saved with compile(), as Sluice names it, or nothing.
std::optional<std::pair<std::string, bool>> lossOf(const json &loss)
{
    static const std::map<std::string, std::string> classes{{"MeanSquaredError", "mse"},
                                                            {"MeanAbsoluteError", "mae"},
                                                            {"Huber", "huber"},
                                                            {"BinaryCrossentropy", "binary_crossentropy"},
                                                            {"CategoricalCrossentropy", "categorical_crossentropy"},
                                                            {"SparseCategoricalCrossentropy", "sparse_categorical_crossentropy"}};
    std::string name;
    bool fromLogits = false;
    if (loss.is_string()) {
        name = loss.get<std::string>();
    } else if (const json *cls = member(loss, "class_name"); cls && cls->is_string() && classes.count(cls->get<std::string>())) {
        name = classes.at(cls->get<std::string>());
        const json *config = member(loss, "config");
        fromLogits = config && flag(*config, "from_logits", false);
    } else {
        return std::nullopt;
    }
    const auto &known = kerasSupportedLosses();
    if (std::find(known.begin(), known.end(), name) == known.end())
        return std::nullopt;
    return std::make_pair(name, fromLogits);
}

// [["name", 0, 0], ...], or a single ["name", 0, 0] (Keras writes that for one tensor).
Result<std::vector<std::string>> tensorList(const json &list, const char *key)
{
    if (!list.is_array() || list.empty())
        return configError("", key, std::string("expected a list of [layer, node, tensor], got ") + shortText(list));
    const bool single = list[0].is_string();
    std::vector<std::string> names;
    for (const json &t : single ? json::array({list}) : list) {
        if (!t.is_array() || t.empty() || !t[0].is_string())
            return configError("", key, std::string("expected [layer, node, tensor], got ") + shortText(t));
        if (t.size() >= 3 && (t[1] != 0 || t[2] != 0))
            return configError(t[0].get<std::string>(), key, "a model input or output from a shared layer or a layer with several outputs is not supported");
        names.push_back(t[0].get<std::string>());
    }
    return names;
}

// The layers a functional layer's call took, from its one inbound node.
Result<std::vector<std::string>> inboundLayers(const json &layer, const std::string &name)
{
    const json *nodes = member(layer, "inbound_nodes");
    if (!nodes || !nodes->is_array() || nodes->empty())
        return configError(name, "inbound_nodes", "the layer is not connected (no inbound node)");
    if (nodes->size() > 1)
        return configError(name, "inbound_nodes", "a layer called more than once (a shared layer) is not supported");
    const json &node = (*nodes)[0];
    const json *args = member(node, "args");
    if (!args)
        return configError(name, "inbound_nodes", "not a Keras 3 inbound node (no \"args\"): save the model with Keras 3");
    if (const json *kwargs = member(node, "kwargs"); kwargs && kwargs->is_object())
        for (const auto &[key, value] : kwargs->items())
            if (!value.is_null() && !(key == "training" && value.is_boolean()))
                return configError(name, "inbound_nodes", "a layer called with keyword argument '" + key + "' is not supported");
    std::vector<std::string> inputs;
    Status problem = Status::success();
    std::function<void(const json &)> walk = [&](const json &arg) {
        if (arg.is_array()) {
            for (const json &a : arg)
                walk(a);
            return;
        }
        const json *config = member(arg, "config");
        const json *history = config ? member(*config, "keras_history") : nullptr;
        if (!history) {
            problem = configError(name, "inbound_nodes", "a call argument that is not a tensor: " + shortText(arg));
            return;
        }
        if (!history->is_array() || history->size() < 3 || !(*history)[0].is_string()) {
            problem = configError(name, "inbound_nodes", "a tensor without its keras_history: " + shortText(arg));
            return;
        }
        if ((*history)[1] != 0 || (*history)[2] != 0) {
            problem = configError(name, "inbound_nodes", "an input from a shared layer or a layer with several outputs is not supported");
            return;
        }
        inputs.push_back((*history)[0].get<std::string>());
    };
    walk(*args);
    if (!problem.ok())
        return problem.error();
    return inputs;
}

// The Sluice layer for a Keras one: Keras's own config, which the layer reader takes as it is.
json sluiceLayer(const std::string &cls, const std::string &name, const json &layer)
{
    json out = {{"class_name", cls}, {"name", name}};
    if (const json *config = member(layer, "config"))
        out["config"] = *config;
    return out;
}

void addOutputs(KerasModelConfig &result, const std::vector<std::string> &outputs, const json &document)
{
    const json *compile = member(document, "compile_config");
    const json *loss = compile ? member(*compile, "loss") : nullptr;
    json outputsJson = json::array();
    bool assumed = false;
    for (std::size_t o = 0; o < outputs.size(); ++o) {
        std::optional<std::pair<std::string, bool>> found;
        if (loss && (loss->is_string() || member(*loss, "class_name")))
            found = lossOf(*loss);
        else if (loss && loss->is_array() && o < loss->size())
            found = lossOf((*loss)[o]);
        else if (loss && loss->is_object() && loss->contains(outputs[o]))
            found = lossOf((*loss)[outputs[o]]);
        json out = {{"name", outputs[o]}, {"layer", outputs[o]}, {"target", outputs[o]}, {"loss", found ? found->first : "mse"}};
        if (found && found->second)
            out["from_logits"] = true;
        assumed = assumed || !found;
        outputsJson.push_back(out);
    }
    if (assumed)
        result.notes.push_back(std::string(loss ? "the saved loss is not one Sluice has" : "the model was saved without a compiled loss") +
                               ": mse assumed where none was found; set \"loss\" on the model's outputs before training");
    result.model["outputs"] = outputsJson;
}

Result<KerasModelConfig> sequentialConfig(const json &config, const json &document)
{
    const json *layers = member(config, "layers");
    if (!layers || !layers->is_array() || layers->empty())
        return configError("", "layers", "a Sequential model without layers");
    KerasModelConfig result;
    std::size_t first = 0;
    std::string inputName = "input";
    json shape;
    if (const json *cls = member((*layers)[0], "class_name"); cls && *cls == "InputLayer") {
        auto name = layerName((*layers)[0], 0);
        if (!name)
            return name.error();
        auto s = inputShape((*layers)[0], *name);
        if (!s)
            return s.error();
        inputName = *name;
        shape = *s;
        first = 1;
    } else {
        const json *build = member(config, "build_input_shape");
        if (!build)
            if (const json *bc = member(document, "build_config"))
                build = member(*bc, "input_shape");
        if (!build || !build->is_array() || build->empty())
            return configError("", "build_input_shape", "a Sequential model without an InputLayer or a build_input_shape: its input shape is unknown");
        shape = json(std::vector<json>(build->begin() + 1, build->end()));
    }
    result.model["inputs"] = json::array({{{"name", inputName}, {"feature", inputName}}});
    result.inputShapes.push_back(shape);
    json sluiceLayers = json::array();
    WeightPlaces places;
    std::string last;
    for (std::size_t i = first; i < layers->size(); ++i) {
        const json &layer = (*layers)[i];
        auto name = layerName(layer, i);
        if (!name)
            return name.error();
        auto cls = className(layer, *name);
        if (!cls)
            return cls.error();
        if (*cls == "InputLayer")
            return configError(*name, "class_name", "an InputLayer inside a Sequential model, after its first layer");
        sluiceLayers.push_back(sluiceLayer(*cls, *name, layer));
        const std::string place = places.next(*cls);
        const json layerConfig = member(layer, "config") ? layer["config"] : json::object();
        if (auto names = weightNames(*cls, layerConfig); !names.empty())
            result.weightGroups.push_back({*name, place + varsPath(*cls), names});
        last = *name;
    }
    result.model["layers"] = sluiceLayers;
    addOutputs(result, {last}, document);
    return result;
}

Result<KerasModelConfig> functionalConfig(const json &config, const json &document)
{
    const json *layers = member(config, "layers");
    if (!layers || !layers->is_array() || layers->empty())
        return configError("", "layers", "a functional model without layers");
    const json *inputLayers = member(config, "input_layers");
    const json *outputLayers = member(config, "output_layers");
    if (!inputLayers || !outputLayers)
        return configError("", inputLayers ? "output_layers" : "input_layers", "a functional model's config needs input_layers and output_layers");
    auto inputs = tensorList(*inputLayers, "input_layers");
    if (!inputs)
        return inputs.error();
    auto outputs = tensorList(*outputLayers, "output_layers");
    if (!outputs)
        return outputs.error();

    KerasModelConfig result;
    std::map<std::string, json> shapes;
    json sluiceLayers = json::array();
    WeightPlaces places; // a functional model's layers include its InputLayers, which take places too
    std::vector<std::string> seen;
    for (std::size_t i = 0; i < layers->size(); ++i) {
        const json &layer = (*layers)[i];
        auto name = layerName(layer, i);
        if (!name)
            return name.error();
        if (std::find(seen.begin(), seen.end(), *name) != seen.end())
            return configError(*name, "name", "two layers have this name");
        seen.push_back(*name);
        auto cls = className(layer, *name);
        if (!cls)
            return cls.error();
        const std::string place = places.next(*cls);
        if (*cls == "InputLayer") {
            auto s = inputShape(layer, *name);
            if (!s)
                return s.error();
            shapes[*name] = *s;
            continue;
        }
        auto from = inboundLayers(layer, *name);
        if (!from)
            return from.error();
        for (const auto &f : *from)
            if (std::find(seen.begin(), seen.end(), f) == seen.end())
                return configError(*name, "inbound_nodes", "takes '" + f + "', which is not a layer before it");
        json l = sluiceLayer(*cls, *name, layer);
        l["inputs"] = *from;
        sluiceLayers.push_back(l);
        const json cfg = member(layer, "config") ? layer["config"] : json::object();
        if (auto names = weightNames(*cls, cfg); !names.empty())
            result.weightGroups.push_back({*name, place + varsPath(*cls), names});
    }
    json inputsJson = json::array();
    for (const auto &in : *inputs) {
        if (!shapes.count(in))
            return configError(in, "input_layers", "a model input that is not an InputLayer of the model");
        inputsJson.push_back({{"name", in}, {"feature", in}});
        result.inputShapes.push_back(shapes[in]);
    }
    for (const auto &out : *outputs)
        if (std::find(seen.begin(), seen.end(), out) == seen.end() || shapes.count(out))
            return configError(out, "output_layers", "a model output that is not one of the model's layers");
    result.model["inputs"] = inputsJson;
    result.model["layers"] = sluiceLayers;
    addOutputs(result, *outputs, document);
    return result;
}

} // namespace

Result<KerasModelConfig> kerasModelConfig(const json &document)
{
    if (!document.is_object())
        return configError("", "class_name", "a Keras model config is a JSON object, got " + shortText(document));
    const json *cls = member(document, "class_name");
    const json *config = member(document, "config");
    if (!cls || !cls->is_string() || !config || !config->is_object())
        return configError("", "class_name", "not a Keras model config (it needs \"class_name\" and a \"config\" object)");
    const std::string kind = cls->get<std::string>();
    if (kind == "Sequential")
        return sequentialConfig(*config, document);
    if (kind == "Functional" || kind == "Model")
        return functionalConfig(*config, document);
    return configError("", "class_name", "model class " + kind + " is not supported (Sequential and functional models are; a subclassed model has no config to read)");
}

} // namespace sluice::train
