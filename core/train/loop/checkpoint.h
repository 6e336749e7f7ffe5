#pragma once
// Checkpoints: one .npz per checkpoint in the run's checkpoints/ folder, written atomically
// (temporary file + rename, docs/architecture.md, decision 10), holding
//   <layer>/<param>          the weights (the same names as weights.npz)
//   optimizer/<slot>         the optimizer's state, flat
//   state                    a JSON document as uint8: step, epoch, position in the epoch,
//                            the pipeline's pass counters, the epoch's running totals
// so that --resume continues a killed run and ends with the same weights as one that was not.

#include "io/error.h"
#include "train/loop/checkpoint_state.h"
#include "train/model/model.h"
#include "train/objectives/optimizer.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sluice::train {

Status saveCheckpoint(const std::string &path, const Model &model, std::span<const float> weights, const std::vector<OptimizerSlot> &slots,
                      const CheckpointState &state);

// Reads a checkpoint into `weights` and `slots` (sized by the caller); returns its state, every
// key checked (checkpoint_state.h).
Result<CheckpointState> loadCheckpoint(const std::string &path, const Model &model, std::span<float> weights, std::vector<OptimizerSlot> &slots);

// "ckpt-<step, 10 digits>.npz" in `dir`.
std::string checkpointPath(const std::string &dir, std::int64_t step);
// Checkpoints in `dir`, newest (highest step) first.
std::vector<std::string> listCheckpoints(const std::string &dir);
// Deletes all but the newest `keep`.
void pruneCheckpoints(const std::string &dir, int keep);

// Whether a run can write its checkpoints into `dir`, checked before its first step: the folder
// is created and written to (a probe file), and its free space holds `count` checkpoints of
// `bytesEach` (a new one is written before the oldest goes). The error names the folder and
// the figures; `availableBytes` is for tests (nothing: asked of the file system).
Status checkCheckpointRoom(const std::string &dir, std::uint64_t bytesEach, int count, std::optional<std::uint64_t> availableBytes = std::nullopt);

} // namespace sluice::train
