#include "train/loop/training_config.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace sluice::train {

namespace {

Result<std::int64_t> integer(const nlohmann::json &t, const char *key, std::int64_t fallback, std::int64_t min)
{
    if (!t.contains(key) || t[key].is_null())
        return fallback;
    if (!t[key].is_number_integer() || t[key].get<std::int64_t>() < min)
        return trainingError(key, "must be an integer >= " + std::to_string(min) + ", got " + t[key].dump());
    return t[key].get<std::int64_t>();
}

} // namespace

Status applyReplicaCount(TrainingConfig &config, int replicas, const std::string &key)
{
    if (config.gpuDevices.empty() && config.devices.size() == 1 && config.devices[0] == "cpu") {
        config.devices.clear(); // "cpu": that many CPU replicas
        config.replicas = replicas;
        return Status::success();
    }
    if (config.gpuDevices.size() == 1 && config.gpuDevices[0] >= 0) {
        config.gpuDevices.assign(std::size_t(replicas), config.gpuDevices[0]); // logical replicas on one GPU
        config.devices.assign(std::size_t(replicas), config.devices[0]);
        config.replicas = replicas;
        return Status::success();
    }
    if (replicas == config.replicas)
        return Status::success();
    return Error::invalid(key, std::to_string(replicas) + " replicas on " + std::to_string(config.replicas) +
                                   " devices: the replicas are the devices; name one GPU (\"cuda:0\") for logical replicas on it");
}

Error trainingError(const std::string &key, const std::string &reason)
{
    Error e = Error::invalid(key.empty() ? std::string("training") : "training." + key, reason);
    e.layer = "training";
    e.key = key;
    return e;
}

Status applyDevices(TrainingConfig &config, const std::vector<std::string> &devices, const std::string &key)
{
    if (devices.empty())
        return Error::invalid(key, "names no device");
    std::vector<std::string> cpus;
    std::vector<int> gpus;
    for (const auto &name : devices) {
        const bool gpu = name.rfind("cuda", 0) == 0 || name.rfind("gpu", 0) == 0;
        const std::string prefix = name.rfind("cuda", 0) == 0 ? "cuda" : gpu ? "gpu" : "cpu";
        if (!gpu && name.rfind("cpu", 0) != 0)
            return Error::invalid(key, "unknown device '" + name + "' (known: cpu, cpu:N, cuda, cuda:N)");
        int index = -1;
        if (name.size() > prefix.size()) {
            const std::string number = name.substr(prefix.size() + 1);
            if (name[prefix.size()] != ':' || number.empty() || number.size() > 4 || number.find_first_not_of("0123456789") != std::string::npos)
                return Error::invalid(key, "unknown device '" + name + "' (known: cpu, cpu:N, cuda, cuda:N)");
            index = std::stoi(number);
        }
        if (gpu)
            gpus.push_back(index);
        else
            cpus.push_back(name);
    }
    if (!cpus.empty() && !gpus.empty())
        return Error::invalid(key, "mixes CPU and GPU devices; a run trains on one backend (all \"cpu\" or all \"cuda:N\")");
    if (gpus.size() > 1 && std::find(gpus.begin(), gpus.end(), -1) != gpus.end())
        return Error::invalid(key, "\"cuda\" already means every GPU; list \"cuda:N\" devices to choose some");
    config.devices = devices;
    config.gpuDevices = gpus;
    config.replicas = int(devices.size());
    return Status::success();
}

Result<TrainingConfig> parseTrainingConfig(const Project &project)
{
    TrainingConfig c;
    const nlohmann::json &t = project.training.is_null() ? nlohmann::json::object() : project.training;
    if (!t.is_object())
        return trainingError("", "must be an object");
    static const std::set<std::string> known{"epochs",        "steps_per_epoch", "seed",       "optimizer",  "global_clipnorm", "strategy",
                                             "replicas",      "devices",         "drop_remainder", "sample_weight", "class_weight",
                                             "validation",    "checkpoint",      "initial_weights", "threads", "precision"};
    for (auto it = t.begin(); it != t.end(); ++it)
        if (!known.count(it.key()))
            return trainingError(it.key(), "unknown key (known: epochs, steps_per_epoch, seed, optimizer, global_clipnorm, strategy, replicas, "
                                         "devices, precision, drop_remainder, sample_weight, class_weight, validation, checkpoint, initial_weights, threads)");
    auto epochs = integer(t, "epochs", 1, 1);
    if (!epochs)
        return epochs.error();
    c.epochs = int(*epochs);
    auto steps = integer(t, "steps_per_epoch", -1, 1);
    if (!steps)
        return steps.error();
    c.stepsPerEpoch = *steps;
    auto seed = integer(t, "seed", 0, 0);
    if (!seed)
        return seed.error();
    c.seed = std::uint64_t(*seed);
    auto threads = integer(t, "threads", 0, 0);
    if (!threads)
        return threads.error();
    c.threads = int(*threads);

    if (t.contains("optimizer")) {
        if (t["optimizer"].is_string())
            c.optimizer = {{"type", t["optimizer"]}};
        else if (t["optimizer"].is_object())
            c.optimizer = t["optimizer"];
        else
            return trainingError("optimizer", "must be a name (\"adam\") or an object {\"type\": ..., \"learning_rate\": ...}");
    }
    for (const nlohmann::json *holder : std::initializer_list<const nlohmann::json *>{&t, &c.optimizer})
        if (holder->contains("global_clipnorm") && !(*holder)["global_clipnorm"].is_null()) {
            const auto &v = (*holder)["global_clipnorm"];
            if (!v.is_number() || v.get<double>() <= 0)
                return trainingError("global_clipnorm", "must be a number > 0");
            c.globalClipnorm = v.get<double>();
        }

    if (t.contains("strategy")) {
        if (!t["strategy"].is_string() || (t["strategy"] != "mirrored" && t["strategy"] != "default"))
            return trainingError("strategy", "must be \"mirrored\" (synchronous data parallel) or \"default\" (one replica)");
        c.strategy = t["strategy"].get<std::string>();
    }
    auto replicas = integer(t, "replicas", 1, 1);
    if (!replicas)
        return replicas.error();
    c.replicas = int(*replicas);
    if (t.contains("devices")) {
        if (!t["devices"].is_array() || t["devices"].empty())
            return trainingError("devices", "must be a non-empty list such as [\"cpu:0\", \"cpu:1\"]");
        std::vector<std::string> names;
        for (const auto &d : t["devices"]) {
            if (!d.is_string())
                return trainingError("devices", "must be a list of device names");
            names.push_back(d.get<std::string>());
        }
        if (auto s = applyDevices(c, names, "training.devices"); !s.ok())
            return s.error().inLayer("training", "devices");
        if (t.contains("replicas") && !t["replicas"].is_null())
            if (auto s = applyReplicaCount(c, int(*replicas), "training.replicas"); !s.ok())
                return s.error().inLayer("training", "replicas");
    }
    if (t.contains("precision")) {
        const auto &p = t["precision"];
        if (!p.is_string() || (p != "fp32" && p != "tf32" && p != "bf16"))
            return trainingError("precision", "must be \"fp32\", \"tf32\" (tensor-core products) or \"bf16\" (mixed precision), got " + p.dump());
        c.precision = p.get<std::string>();
    }
    if (c.strategy == "default" && c.replicas != 1)
        return trainingError("strategy", "\"default\" runs one replica; use \"mirrored\" for " + std::to_string(c.replicas));
    if (t.contains("drop_remainder")) {
        if (!t["drop_remainder"].is_boolean())
            return trainingError("drop_remainder", "must be true or false");
        c.dropRemainder = t["drop_remainder"].get<bool>();
    }
    if (t.contains("sample_weight") && !t["sample_weight"].is_null()) {
        if (!t["sample_weight"].is_string())
            return trainingError("sample_weight", "must name a feature of the pipeline's output");
        c.sampleWeightFeature = t["sample_weight"].get<std::string>();
    }
    if (t.contains("class_weight") && !t["class_weight"].is_null()) {
        if (!t["class_weight"].is_object())
            return trainingError("class_weight", "must map class indices to weights, e.g. {\"0\": 1.0, \"1\": 9.0}");
        for (auto it = t["class_weight"].begin(); it != t["class_weight"].end(); ++it) {
            std::size_t used = 0;
            std::int64_t cls = 0;
            try {
                cls = std::stoll(it.key(), &used);
            } catch (...) {
                used = 0;
            }
            if (used != it.key().size() || cls < 0)
                return trainingError("class_weight", "key '" + it.key() + "' is not a class index");
            if (!it.value().is_number() || it.value().get<double>() < 0)
                return trainingError("class_weight." + it.key(), "must be a number >= 0");
            c.classWeights.emplace_back(cls, it.value().get<float>());
        }
    }
    if (t.contains("validation") && !t["validation"].is_null()) {
        const auto &v = t["validation"];
        if (!v.is_object())
            return trainingError("validation", "must be {\"node\": <pipeline node>} or {\"split\": <fraction>}");
        for (auto it = v.begin(); it != v.end(); ++it)
            if (it.key() != "node" && it.key() != "split" && it.key() != "steps")
                return trainingError("validation." + it.key(), "unknown key (known: node, split, steps)");
        if (v.contains("node") == v.contains("split"))
            return trainingError("validation", "needs exactly one of \"node\" (a second pipeline output) and \"split\"");
        if (v.contains("node")) {
            if (!v["node"].is_string() || !project.findNode(v["node"].get<std::string>()))
                return trainingError("validation.node", "must name a node of the pipeline");
            c.validationNode = v["node"].get<std::string>();
        } else {
            if (!v["split"].is_number() || v["split"].get<double>() <= 0 || v["split"].get<double>() >= 1)
                return trainingError("validation.split", "must be a fraction between 0 and 1");
            c.validationSplit = v["split"].get<double>();
        }
        auto vsteps = integer(v, "steps", -1, 1);
        if (!vsteps)
            return trainingError("validation.steps", vsteps.error().reason);
        c.validationSteps = *vsteps;
    }
    if (t.contains("checkpoint") && !t["checkpoint"].is_null()) {
        const auto &k = t["checkpoint"];
        if (!k.is_object())
            return trainingError("checkpoint", "must be {\"every_steps\": N, \"every_epoch\": true, \"keep\": 2}");
        for (auto it = k.begin(); it != k.end(); ++it)
            if (it.key() != "every_steps" && it.key() != "every_epoch" && it.key() != "keep")
                return trainingError("checkpoint." + it.key(), "unknown key (known: every_steps, every_epoch, keep)");
        auto every = integer(k, "every_steps", 0, 0);
        if (!every)
            return trainingError("checkpoint.every_steps", every.error().reason);
        c.checkpoint.everySteps = *every;
        auto keep = integer(k, "keep", 2, 1);
        if (!keep)
            return trainingError("checkpoint.keep", keep.error().reason);
        c.checkpoint.keep = int(*keep);
        if (k.contains("every_epoch")) {
            if (!k["every_epoch"].is_boolean())
                return trainingError("checkpoint.every_epoch", "must be true or false");
            c.checkpoint.everyEpoch = k["every_epoch"].get<bool>();
        }
    }
    if (t.contains("initial_weights") && !t["initial_weights"].is_null()) {
        if (!t["initial_weights"].is_string())
            return trainingError("initial_weights", "must be the path of an .npz");
        c.initialWeights = project.resolvePath(t["initial_weights"].get<std::string>());
    }
    return c;
}

Status applySetting(nlohmann::json &document, const std::string &assignment)
{
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        return Error::invalid("--set " + assignment, "expected key=value, e.g. training.epochs=3 or nodes.batch.batch_size=128");
    const std::string key = assignment.substr(0, eq), text = assignment.substr(eq + 1);
    nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
    if (value.is_discarded())
        value = text;
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
        const auto dot = key.find('.', start);
        parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos)
            break;
        start = dot + 1;
    }
    for (const auto &p : parts)
        if (p.empty())
            return Error::invalid("--set " + assignment, "the key has an empty part");
    nlohmann::json *target = &document;
    std::size_t i = 0;
    if (parts[0] == "nodes") {
        if (parts.size() < 3)
            return Error::invalid("--set " + assignment, "a node parameter is written nodes.<id>.<param>");
        nlohmann::json *found = nullptr;
        if (document.contains("pipeline") && document["pipeline"].contains("nodes"))
            for (auto &n : document["pipeline"]["nodes"])
                if (n.value("id", "") == parts[1])
                    found = &n;
        if (!found)
            return Error::invalid("--set " + assignment, "no pipeline node '" + parts[1] + "'");
        if (!found->contains("params"))
            (*found)["params"] = nlohmann::json::object();
        target = &(*found)["params"];
        i = 2;
    }
    for (; i + 1 < parts.size(); ++i) {
        if (!target->is_object())
            return Error::invalid("--set " + assignment, "'" + parts[i - 1] + "' is not an object");
        target = &(*target)[parts[i]];
        if (target->is_null())
            *target = nlohmann::json::object();
        // "optimizer": "adam" is shorthand for {"type": "adam"}: setting one of its keys expands it.
        if (parts[i] == "optimizer" && target->is_string())
            *target = nlohmann::json{{"type", *target}};
    }
    if (!target->is_object())
        return Error::invalid("--set " + assignment, "cannot set a key inside a non-object");
    (*target)[parts.back()] = value;
    return Status::success();
}

} // namespace sluice::train
