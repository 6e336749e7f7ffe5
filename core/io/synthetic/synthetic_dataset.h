#pragma once
// Synthetic multi-input / multi-output datasets of any size, streamed to one .npy per column
// so that nothing is held in memory: the data behind `sluice gen`, the example projects and
// the benchmarks. Every value is a pure function of (seed, spec, row), so the same spec gives
// the same files whatever the number of threads, and fewer rows give a prefix of more.

#include "io/dtype.h"
#include "io/error.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sluice {

struct SyntheticColumn
{
    std::string name;
    std::vector<std::uint64_t> rowShape; // shape of one row: {256}, {28, 28}; {} for scalars
    DType dtype = DType::Float32;
};

struct SyntheticSpec
{
    enum class Task { Regression, Classification, Sensors };
    Task task = Task::Regression;
    // Features: floating columns are approximately standard normal, integer columns uniform
    // in [0, 100), bool columns fair coin flips.
    std::vector<SyntheticColumn> features;
    // Targets depend on every feature through a fixed random linear map plus noise.
    // Regression: the map's outputs, one per target element. Classification: one label per
    // row, the argmax over `classes` outputs (rowShape must be {}; dtype an integer type).
    std::vector<SyntheticColumn> targets;
    std::vector<int> classes; // classification only: the number of classes of each target
    // Classification only, 0 (off) or in (0, 1): the share of rows labelled 0 in every target,
    // the other classes sharing the rest evenly. Each class's score gets a fixed offset, fitted
    // on a pilot sample of rows so that the argmax lands on each class that often (within about
    // 1% of each share, plus sampling noise). Features are unchanged and labels stay the argmax
    // of a linear map of them, so a classifier can learn them.
    double imbalance = 0;
    // Sensors only: the share of windows that are distorted and flagged 1 in the target (a
    // burst of noise, a level shift or a stuck channel over part of the window).
    double anomalyShare = 0;
    std::uint64_t rows = 0;
    std::uint64_t seed = 0;
    double noise = 0.1; // standard deviation of the target noise (sensors: of every reading)
};

// Sensor windows: one feature `signal` of shape (timesteps, channels), float32, each channel a
// smooth sum of two sines (a fundamental and a harmonic) with the window's own random
// frequency (0.5 to 3 cycles a window) and phases, a per-channel amplitude, phase offset and
// level, plus noise; with anomalyShare > 0 an int64 target `anomaly`, 1 on distorted windows.
SyntheticSpec sensorSpec(std::uint64_t rows, std::uint64_t timesteps, std::uint64_t channels, double anomalyShare = 0);

Status validate(const SyntheticSpec &spec);
std::uint64_t totalBytes(const SyntheticSpec &spec); // of all data written, headers aside

// Writes `<folder>/<column>.npy` for every column. `progress(rowsDone)` is called from the
// calling thread after each chunk; `cancel` stops between chunks (files are then not written).
Status writeSyntheticDataset(const SyntheticSpec &spec, const std::string &folder, int threads,
                             const std::function<void(std::uint64_t rowsDone)> &progress = {},
                             const std::atomic<bool> *cancel = nullptr);

} // namespace sluice
