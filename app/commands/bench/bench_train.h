#pragma once
// The measurements behind `sluice bench train` (bench_train.cpp), kept out of the Qt translation
// unit that parses the command line: they run on a oneTBB arena, and no Qt translation unit
// sees oneTBB's headers (docs/architecture.md, decision 2).
//
// Threading: one call at a time, from the command's thread.

#include "io/error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::commands {

struct TrainBenchOptions
{
    std::vector<std::int64_t> widths{128, 256, 10}; // input, hidden..., output
    // A model of the project file's "model" form instead of the MLP (its input x, its output
    // target y): x's per-sample shape is inputShape, widths becomes {x's values, classes}.
    nlohmann::json model;
    std::vector<std::int64_t> inputShape;
    std::int64_t idRange = 0; // > 0: x holds whole-number ids uniform in [0, idRange) (Embedding models)
    double idZipf = 0;        // > 0: the ids' popularity follows a Zipf-like law of this exponent (io/synthetic/zipf_ids.h)
    std::string activation = "relu";                // of the hidden layers; the last is linear
    std::string loss = "sparse_categorical_crossentropy"; // from logits; or "mse"
    std::string optimizer = "adam";
    double learningRate = 1e-3;
    std::int64_t batch = 64;   // global batch
    std::int64_t steps = 100;  // timed steps
    std::int64_t warmup = 10;  // untimed steps first
    int replicas = 1;
    int threads = 0;           // 0: all cores
    int distinctBatches = 4;   // pre-generated batches, used in turn
    std::uint64_t seed = 1;
    std::string device = "cpu";     // "cpu", "cuda" (every GPU) or "cuda:N"
    std::string precision = "fp32"; // matrix products on a GPU: fp32, tf32, bf16 (the CPU: fp32)
    // Filled by resolveBenchDevices: the GPU of each replica ("cuda": one per GPU; "cuda:N":
    // `replicas` logical replicas on GPU N, as `sluice run --device`); empty: the CPU backend.
    std::vector<int> gpuDevices;
    // --run only. dataDir: train on DIR/x.npy and DIR/y.npy (e.g. written by `sluice gen
    // regression --feature x:W --target y:K`, larger than RAM) instead of generated files; an
    // epoch is then `steps` batches of them. cold: the larger-than-RAM mode: the files are
    // dropped from the page cache before each measurement, the pipeline is first timed alone for
    // `steps` batches, then one epoch of training, so the two can be compared.
    std::string dataDir;
    bool cold = false;
};

struct TrainBenchResult
{
    std::string mode;          // "step" (training step only) or "run" (the Trainer on a pipeline)
    std::string deviceName = "cpu"; // the engine's description: "cuda:0 (NVIDIA H100 80GB HBM3)"
    int replicas = 1;          // in all (GPUs: one per GPU, or the logical replicas on cuda:N)
    int threads = 0;
    std::int64_t parameters = 0;
    std::int64_t steps = 0;    // timed
    std::int64_t warmup = 0;   // untimed steps before them
    double seconds = 0;        // the timed steps, all of them
    double samplesPerSecond = 0;
    double stepMsMedian = 0, stepMsMean = 0;
    double forwardBackwardMs = 0; // per step, mean (mode "step")
    double reduceUpdateMs = 0;    // per step, mean: all-reduce + optimizer (mode "step")
    // GPU, mode "step": host time in the engine's run() (staging the batch through pinned memory,
    // the copy, forward, backward, and the wait for the stream, which also finishes the previous
    // step's update) and in update() (queueing the sum, clipping and optimizer kernels).
    double runCallMs = 0, updateCallMs = 0;
    double tflops = 0;            // denseWeightCount x 6 x samples/s / 1e12
    double firstLoss = 0, lastLoss = 0;
    nlohmann::json extra = nlohmann::json::object();
};

// Kernel weights of the MLP's Dense layers, sum of widths[i-1] x widths[i]: a training step
// does 6 flops per weight per sample (forward 2, backward 4), the "tflops" figure's numerator.
std::int64_t denseWeightCount(const TrainBenchOptions &options);

// Resolves options.device into options.gpuDevices. A GPU asked for on a build or machine
// without one, or an index the machine lacks, is an InvalidArgument error naming "--device"
// and the reason; "cuda" with more than one replica one naming "--replicas".
Status resolveBenchDevices(TrainBenchOptions &options);

// The model JSON of an MLP: Dense layers of widths[1..], `activation` between them.
nlohmann::json mlpModelJson(const TrainBenchOptions &options);

// Forward, backward, all-reduce over the replicas and optimizer update of the engine's Replica
// and Optimizer classes, as the Trainer runs them, over pre-generated batches. With GPUs
// (options.gpuDevices), the Trainer's GpuEngine instead: run() then update() per step, the
// batch's host-to-device copy (through pinned memory) included in the step.
Result<TrainBenchResult> benchTrainingStep(const TrainBenchOptions &options);

// The whole `sluice run` path on the same model: .npy files of batch x steps rows written to
// `folder` (or options.dataDir's), a project from_npy -> global_shuffle -> batch -> prefetch,
// the Trainer for two epochs of `steps` batches; the first is the warm-up, the second is timed
// (its epoch_end event). options.cold: the pipeline alone, then one epoch, each from a cold
// page cache (extra: pipeline_samples_per_s, of_pipeline, cached_after_eviction). With GPUs the
// project's training.devices and training.precision name them; a Trainer that fell back to the
// CPU is an error.
Result<TrainBenchResult> benchTrainingRun(const TrainBenchOptions &options, const std::string &folder);

} // namespace sluice::commands
