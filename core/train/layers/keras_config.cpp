#include "train/layers/keras_config.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace sluice::train::detail {
namespace {

using nlohmann::json;

bool endsWith(const std::string &text, const std::string &tail)
{
    return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

Error unsupported(const std::string &className, const std::string &layerName, const std::string &key, const std::string &reason)
{
    Error e = Error::unsupported(layerName, className + " parameter '" + key + "': " + reason);
    e.layer = layerName;
    e.key = key;
    return e;
}

std::string shortText(const json &value)
{
    std::string text = value.dump();
    return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

bool isFalse(const json &v) { return v.is_boolean() && !v.get<bool>(); }
bool isZero(const json &v) { return v.is_number() && v.get<double>() == 0.0; }

// Keras's initializer classes Sluice draws from, with the configuration it draws with (a
// "seed" is accepted and not kept: Sluice seeds initial weights from training.seed).
struct InitializerForm
{
    const char *className;
    const char *name;
    json defaults; // every other key of the config must equal these
};

const std::vector<InitializerForm> &initializerForms()
{
    static const std::vector<InitializerForm> forms = {
        {"GlorotUniform", "glorot_uniform", json::object()},
        {"GlorotNormal", "glorot_normal", json::object()},
        {"HeUniform", "he_uniform", json::object()},
        {"HeNormal", "he_normal", json::object()},
        {"LecunUniform", "lecun_uniform", json::object()},
        {"LecunNormal", "lecun_normal", json::object()},
        {"Orthogonal", "orthogonal", {{"gain", 1.0}}},
        {"Zeros", "zeros", json::object()},
        {"Ones", "ones", json::object()},
        {"RandomNormal", "random_normal", {{"mean", 0.0}, {"stddev", 0.05}}},
        {"RandomUniform", "random_uniform", {{"minval", -0.05}, {"maxval", 0.05}}},
    };
    return forms;
}

bool sameNumber(const json &a, const json &b)
{
    return a.is_number() && b.is_number() && std::abs(a.get<double>() - b.get<double>()) <= 1e-12 * std::max(1.0, std::abs(b.get<double>()));
}

// {"class_name": "GlorotUniform", "config": {...}} -> "glorot_uniform", or why not.
Result<std::string> initializerName(const json &value)
{
    std::string known;
    for (const auto &f : initializerForms())
        known += (known.empty() ? "" : ", ") + std::string(f.className);
    if (!value.contains("class_name") || !value["class_name"].is_string())
        return Error::invalid("", "an initializer object needs a \"class_name\" (known: " + known + ")");
    const std::string cls = value["class_name"].get<std::string>();
    const auto form = std::find_if(initializerForms().begin(), initializerForms().end(), [&](const auto &f) { return cls == f.className; });
    if (form == initializerForms().end())
        return Error::invalid("", "initializer " + cls + " is not supported (known: " + known + ")");
    const json config = value.contains("config") && value["config"].is_object() ? value["config"] : json::object();
    for (const auto &[k, v] : config.items()) {
        if (k == "seed" || ((k == "input_axes" || k == "output_axes") && v.is_null()))
            continue;
        if (!form->defaults.contains(k) || !sameNumber(v, form->defaults[k]))
            return Error::invalid("", "initializer " + cls + " with " + k + " = " + shortText(v) + " is not supported (only " +
                                          (form->defaults.empty() ? std::string("its defaults") : form->defaults.dump()) + ")");
    }
    return std::string(form->name);
}

} // namespace

Result<KerasKey> kerasKey(const std::string &className, const std::string &layerName, const std::string &key, json &value)
{
    auto refuse = [&](const std::string &reason) { return unsupported(className, layerName, key, reason + ", got " + shortText(value)); };
    // The serialization envelope of keras.saving.serialize_keras_object.
    if (key == "module" || key == "registered_name" || key == "build_config")
        return KerasKey::Drop;
    if (endsWith(key, "_regularizer")) {
        if (!value.is_null())
            return refuse("regularizers are not supported (null only; the optimizer's weight_decay is)");
        return KerasKey::Drop;
    }
    if (endsWith(key, "_constraint")) {
        if (!value.is_null())
            return refuse("constraints are not supported (null only)");
        return KerasKey::Drop;
    }
    if (endsWith(key, "_initializer") && value.is_object()) {
        auto name = initializerName(value);
        if (!name)
            return unsupported(className, layerName, key, name.error().reason);
        value = *name;
        return KerasKey::Keep;
    }
    // Keras options whose only value Sluice has is Keras's default (or that change nothing in
    // Sluice's computation, like unroll): accepted with it, refused with any other.
    struct Neutral
    {
        const char *key;
        bool (*ok)(const json &);
        const char *expected;
    };
    static const Neutral neutral[] = {
        {"quantization_config", [](const json &v) { return v.is_null(); }, "null only: quantized layers are not supported"},
        {"lora_rank", [](const json &v) { return v.is_null(); }, "null only: LoRA is not supported"},
        {"lora_alpha", [](const json &) { return true; }, ""},
        {"data_format", [](const json &v) { return v.is_null() || v == "channels_last"; },
         "only \"channels_last\" is supported (inputs [batch, ..., channels])"},
        {"return_state", isFalse, "false only"},
        {"go_backwards", isFalse, "false only"},
        {"stateful", isFalse, "false only"},
        {"unroll", [](const json &v) { return v.is_boolean(); }, "true or false"},
        {"zero_output_for_mask", [](const json &v) { return v.is_boolean(); }, "true or false"},
        {"dropout", isZero, "0 only: recurrent dropout is not supported (a Dropout layer is)"},
        {"recurrent_dropout", isZero, "0 only: recurrent dropout is not supported"},
        {"noise_shape", [](const json &v) { return v.is_null(); }, "null only"},
        {"rms_scaling", isFalse, "false only"},
        {"renorm", isFalse, "false only: batch renormalization is not supported"},
        {"renorm_clipping", [](const json &v) { return v.is_null(); }, "null only"},
        {"renorm_momentum", [](const json &v) { return v.is_number(); }, "a number (unused without renorm)"},
    };
    for (const auto &n : neutral)
        if (key == n.key) {
            if (!n.ok(value))
                return refuse(n.expected);
            return KerasKey::Drop;
        }
    // GRU and LSTM keep a seed for their dropout masks, which is 0 here.
    if (key == "seed" && (className == "GRU" || className == "LSTM"))
        return KerasKey::Drop;
    return KerasKey::Keep;
}

} // namespace sluice::train::detail
