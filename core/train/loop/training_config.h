#pragma once
// The project's "training" object, checked: every problem names the key and the reason.
//   {"epochs": 5, "steps_per_epoch": null, "seed": 1,
//    "optimizer": {"type": "adam", "learning_rate": 0.001 | schedule, "global_clipnorm": 1.0},
//    "strategy": "mirrored", "replicas": 2 | "devices": ["cpu:0", "cpu:1"] | ["cuda:0", "cuda:1"] | ["cuda"],
//    "precision": "fp32" | "tf32" | "bf16", "drop_remainder": false,
//    "sample_weight": "w", "class_weight": {"0": 1.0, "1": 9.0},
//    "validation": {"node": "val_batches", "steps": null} | {"split": 0.1},
//    "checkpoint": {"every_steps": 0, "every_epoch": true, "keep": 2},
//    "initial_weights": "init.npz", "threads": 0}

#include "io/error.h"
#include "project/project.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sluice::train {

struct CheckpointPolicy
{
    std::int64_t everySteps = 0; // 0: not by steps
    bool everyEpoch = true;
    int keep = 2; // newest checkpoints kept
};

struct TrainingConfig
{
    int epochs = 1;
    std::int64_t stepsPerEpoch = -1; // -1: one whole pass of the pipeline
    std::uint64_t seed = 0;
    nlohmann::json optimizer = {{"type", "adam"}};
    double globalClipnorm = 0; // 0: no clipping
    std::string strategy = "mirrored";
    int replicas = 1;
    std::vector<std::string> devices; // "cpu:0", ...; empty: `replicas` CPU replicas
    // GPU replicas, one per entry: a device index, or -1 for "cuda" (every GPU of the machine,
    // resolved when training starts). The same index twice makes logical replicas on that GPU.
    // Empty: the CPU backend.
    std::vector<int> gpuDevices;
    // Matrix products on a GPU: "fp32", "tf32" (tensor cores, fp32 in and out), "bf16" (mixed
    // precision: bf16 products, fp32 master weights and accumulation). The CPU backend is fp32.
    std::string precision = "fp32";
    bool dropRemainder = false;
    std::optional<std::string> sampleWeightFeature;
    std::vector<std::pair<std::int64_t, float>> classWeights;
    std::optional<std::string> validationNode;
    double validationSplit = 0; // every round(1/split)-th batch held out
    std::int64_t validationSteps = -1;
    CheckpointPolicy checkpoint;
    std::optional<std::string> initialWeights; // resolved against the project folder
    int threads = 0;                           // training arena size (0: all cores)
};

Result<TrainingConfig> parseTrainingConfig(const Project &project);
// An error in the project's "training" object: "training.<key>: <reason>", with the fields the
// workbench places it by (Error::layer "training", Error::key the dotted path, "" for the object).
Error trainingError(const std::string &key, const std::string &reason);

// Reads a device list ("cpu", "cpu:N", "cuda", "cuda:N", "gpu:N"; CPU and GPU not mixed) into
// `config`: devices, replicas and gpuDevices. `key` names the setting in errors
// ("devices", "--device").
Status applyDevices(TrainingConfig &config, const std::vector<std::string> &devices, const std::string &key);
// A replica count given with the devices: "cpu" runs that many CPU replicas, one GPU ("cuda:0")
// that many logical replicas on it; with several devices the replicas are the devices, and
// another count is refused (never silently replaced). `key` names the setting in errors.
Status applyReplicaCount(TrainingConfig &config, int replicas, const std::string &key);

// Applies "--set key=value" to a project document: `key` is a dotted path into the JSON
// ("training.epochs", "training.optimizer.learning_rate"), or "nodes.<id>.<param>" for a
// pipeline node's parameter. `value` is read as JSON when it parses, else as a string.
Status applySetting(nlohmann::json &document, const std::string &assignment);

} // namespace sluice::train
