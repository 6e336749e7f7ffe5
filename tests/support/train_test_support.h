#pragma once
// Helpers for the training tests: small regression / classification datasets written as .npy,
// projects from short JSON literals (pipeline, model, training), and runs of the Trainer that
// collect their events and final weights.

#include "project/project.h"
#include "train/loop/trainer.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace sluice::test {

// Writes into `folder`: x.npy (rows, 6) float32, meta.npy (rows, 3) float32, y.npy (rows, 2)
// float32 (a smooth function of x and meta), score.npy (rows, 1) float32, label.npy (rows,)
// int64 in {0, 1, 2} (imbalanced: mostly 0), w.npy (rows,) float32 sample weights,
// seq.npy (rows, 5, 3) float32 sequences.
void writeTrainingData(const std::string &folder, int rows);

// A project document: from_npy over the files above, optional extra pipeline nodes inserted
// before the batch (e.g. a global_shuffle), batch(batchSize), then `model` and `training`.
nlohmann::json trainingProject(const nlohmann::json &model, const nlohmann::json &training, int batchSize,
                               const std::vector<nlohmann::json> &beforeBatch = {});

// Two-input / two-output regression model (Dense, Concatenate, LayerNormalization, Dropout).
nlohmann::json multiInputModel(double dropout = 0.0);
// A small Sequential MLP on x → y.
nlohmann::json mlpModel();

struct TrainingRun
{
    train::RunOutcome outcome;
    std::vector<float> weights;
    std::vector<nlohmann::json> events;
    std::string error; // create() or run() error
    std::vector<nlohmann::json> eventsOf(const std::string &type) const;
};

// Builds and runs a Trainer on `document` (paths relative to `folder`).
TrainingRun runTraining(const nlohmann::json &document, const std::string &folder, train::TrainerOptions options = {},
                        const std::function<void(train::Trainer &, const nlohmann::json &)> &onEvent = {});

// All notices of a run, one a line.
std::string noticesOf(const TrainingRun &run);

// Rewrites the training state of the checkpoint at `path` with the keys of `keys` (a JSON
// object's members, without braces: R"("step": -4)") put over its own: a damaged checkpoint.
bool rewriteCheckpointState(const std::string &path, const std::string &keys);

// max |a - b| / max |b| over the elements: the largest difference relative to the array's
// scale (float sums in another order differ by ~1e-7 of that scale, element by element).
double maxRelativeDifference(const std::vector<float> &a, const std::vector<float> &b);

} // namespace sluice::test
