#pragma once
// Synthetic multi-input / multi-output datasets of any size, streamed to one .npy per column
// so that nothing is held in memory: the data behind `sluice gen`, the example projects and
// the benchmarks. Every value is a pure function of (seed, column, row), so the same spec
// gives the same files whatever the number of threads.

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
    enum class Task { Regression, Classification };
    Task task = Task::Regression;
    // Features: floating columns are approximately standard normal, integer columns uniform
    // in [0, 100), bool columns fair coin flips.
    std::vector<SyntheticColumn> features;
    // Targets depend on every feature through a fixed random linear map plus noise.
    // Regression: the map's outputs, one per target element. Classification: one label per
    // row, the argmax over `classes` outputs (rowShape must be {}; dtype an integer type).
    std::vector<SyntheticColumn> targets;
    std::vector<int> classes; // classification only: the number of classes of each target
    std::uint64_t rows = 0;
    std::uint64_t seed = 0;
    double noise = 0.1;
};

Status validate(const SyntheticSpec &spec);
std::uint64_t totalBytes(const SyntheticSpec &spec); // of all data written, headers aside

// Writes `<folder>/<column>.npy` for every column. `progress(rowsDone)` is called from the
// calling thread after each chunk; `cancel` stops between chunks (files are then not written).
Status writeSyntheticDataset(const SyntheticSpec &spec, const std::string &folder, int threads,
                             const std::function<void(std::uint64_t rowsDone)> &progress = {},
                             const std::atomic<bool> *cancel = nullptr);

} // namespace sluice
