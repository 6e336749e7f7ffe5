#include "train/interchange/keras_export.h"

#include "io/formats/hdf5_file.h"
#include "train/interchange/keras_import.h"
#include "train/layers/layer_config.h"
#include "train/model/model.h"

#include <algorithm>
#include <functional>
#include <map>

namespace sluice::train {
namespace {

using nlohmann::json;

// Sluice's own layer options: how it trains, not what the layer computes; Keras has no such key.
const char *const kSluiceOnly[] = {"sparse_updates"};

Result<json> kerasLayerConfig(const std::string &cls, const std::string &name, const json &entry)
{
    json raw = entry;
    for (const char *graphKey : {"class_name", "name", "inputs"})
        raw.erase(graphKey);
    auto params = detail::flattenLayerConfig(cls, name, raw);
    if (!params)
        return params.error();
    json config = *params;
    for (const char *key : kSluiceOnly)
        config.erase(key);
    if (cls == "TimeDistributed" && config.contains("layer") && config["layer"].is_object()) {
        json inner = config["layer"];
        const std::string innerClass = inner.value("class_name", "Dense");
        inner.erase("class_name");
        auto innerParams = detail::flattenLayerConfig(innerClass, name, inner);
        if (!innerParams)
            return innerParams.error();
        config["layer"] = {{"module", "keras.layers"}, {"class_name", innerClass}, {"config", *innerParams}, {"registered_name", nullptr}};
    }
    config["name"] = name;
    return config;
}

json tensorOf(const ModelNode &from)
{
    json shape = json::array({nullptr});
    for (auto d : from.shape)
        shape.push_back(d);
    return {{"class_name", "__keras_tensor__"}, {"config", {{"shape", shape}, {"dtype", "float32"}, {"keras_history", {from.name, 0, 0}}}}};
}

// Where Keras keeps a layer's variables, relative to its place.
std::string varsOf(const std::string &cls)
{
    if (cls == "GRU" || cls == "LSTM")
        return "/cell/vars";
    if (cls == "TimeDistributed")
        return "/layer/vars";
    return "/vars";
}

// The order in which Keras lists (and saves) a functional model's layers once it has built the
// model from its config: keras.src.ops.function.map_graph sorts them by depth, the longest path
// to an output (inputs first), then by the order a depth-first walk from the outputs first
// reaches them. Weight places are numbered in this order, so the config is written in it too.
// Layers that reach no output would be dropped by Keras: an error names the first.
Result<std::vector<std::size_t>> kerasOrder(const Model &model)
{
    const auto &nodes = model.nodes();
    const std::size_t n = nodes.size();
    std::vector<long> index(n, -1);
    std::vector<char> finished(n, 0);
    std::vector<std::size_t> postOrder;
    long next = 0;
    std::function<void(std::size_t)> visit = [&](std::size_t i) {
        if (finished[i])
            return;
        if (index[i] < 0)
            index[i] = next++;
        for (int in : nodes[i].inputs)
            visit(std::size_t(in));
        finished[i] = 1;
        postOrder.push_back(i);
    };
    for (const auto &out : model.outputs())
        visit(std::size_t(out.node));
    std::vector<long> depth(n, 0);
    for (auto it = postOrder.rbegin(); it != postOrder.rend(); ++it)
        for (int in : nodes[*it].inputs)
            depth[std::size_t(in)] = std::max(depth[std::size_t(in)], depth[*it] + 1);
    for (std::size_t i = 0; i < n; ++i)
        if (!finished[i] && i >= model.inputs().size())
            return Error::unsupported(nodes[i].name, "the layer reaches no model output: Keras would drop it (remove it before exporting)");
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (depth[a] != depth[b])
            return depth[a] > depth[b];
        return index[a] < index[b]; // an unused input (-1) first, as Keras puts it
    });
    return order;
}

} // namespace

Result<KerasFiles> kerasModelFiles(const Model &model, const json &modelJson, std::span<const float> weights, const std::string &name)
{
    const auto &nodes = model.nodes();
    const std::size_t inputCount = model.inputs().size();
    const json &layersJson = modelJson.at("layers");
    if (layersJson.size() + inputCount != nodes.size())
        return Error::invalid("model", "the model section does not match the built model");

    auto built = Hdf5Builder::create("model.weights.h5");
    if (!built)
        return built.error();
    Hdf5Builder &h5 = *built;
    for (const char *group : {"layers", "vars"})
        if (auto s = h5.addGroup(group); !s.ok())
            return s.error();

    std::map<std::string, int> places; // Keras's names of the layers' places in the weights file
    auto placeOf = [&](const std::string &cls) {
        const std::string base = kerasSnakeCase(cls);
        auto [it, first] = places.try_emplace(base, 0);
        return "layers/" + (first ? base : base + "_" + std::to_string(++it->second));
    };

    auto order = kerasOrder(model);
    if (!order)
        return order.error();
    json layers = json::array(), inputLayers = json::array(), outputLayers = json::array();
    for (std::size_t i = 0; i < inputCount; ++i)
        inputLayers.push_back({nodes[i].name, 0, 0});
    for (std::size_t i : *order) {
        const ModelNode &node = nodes[i];
        if (i < inputCount) {
            json batchShape = json::array({nullptr});
            for (auto d : node.shape)
                batchShape.push_back(d);
            layers.push_back({{"module", "keras.layers"},
                              {"class_name", "InputLayer"},
                              {"config", {{"batch_shape", batchShape}, {"dtype", "float32"}, {"sparse", false}, {"name", node.name}}},
                              {"registered_name", nullptr},
                              {"name", node.name},
                              {"inbound_nodes", json::array()}});
            if (auto s = h5.addGroup(placeOf("InputLayer") + "/vars"); !s.ok())
                return s.error();
            continue;
        }
        const std::string cls = node.layer->className();
        auto config = kerasLayerConfig(cls, node.name, layersJson[i - inputCount]);
        if (!config)
            return config.error();
        json args = json::array();
        if (cls == "Concatenate") {
            json list = json::array();
            for (int in : node.inputs)
                list.push_back(tensorOf(nodes[std::size_t(in)]));
            args.push_back(list);
        } else {
            for (int in : node.inputs)
                args.push_back(tensorOf(nodes[std::size_t(in)]));
        }
        layers.push_back({{"module", "keras.layers"},
                          {"class_name", cls},
                          {"config", *config},
                          {"registered_name", nullptr},
                          {"name", node.name},
                          {"inbound_nodes", json::array({{{"args", args}, {"kwargs", json::object()}}})}});
        const std::string place = placeOf(cls);
        if (auto s = h5.addGroup(place + "/vars"); !s.ok())
            return s.error();
        const std::string vars = place + varsOf(cls);
        if (auto s = h5.addGroup(vars); !s.ok())
            return s.error();
        for (std::size_t k = 0; k < node.params.size(); ++k) {
            const ParameterEntry &p = model.parameters()[node.params[k]];
            if (auto s = h5.addFloats(vars + "/" + std::to_string(k), p.shape, weights.data() + p.offset); !s.ok())
                return s.error();
        }
    }
    for (const auto &out : model.outputs())
        outputLayers.push_back({nodes[std::size_t(out.node)].name, 0, 0});

    const json config = {{"module", "keras.src.models.functional"},
                         {"class_name", "Functional"},
                         {"config", {{"name", name}, {"trainable", true}, {"layers", layers}, {"input_layers", inputLayers}, {"output_layers", outputLayers}}},
                         {"registered_name", "Functional"},
                         {"build_config", {{"input_shape", nullptr}}}};
    auto bytes = h5.bytes();
    if (!bytes)
        return bytes.error();
    KerasFiles files;
    files.configJson = config.dump();
    // The Keras version whose archive format this follows.
    files.metadataJson = json{{"keras_version", "3.15.1"}, {"date_saved", "1980-01-01@00:00:00"}}.dump();
    files.weightsH5 = std::move(bytes).value();
    return files;
}

} // namespace sluice::train
