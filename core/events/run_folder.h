#pragma once
// The run folder, named once: what `sluice run --out DIR` and the workbench write for a run, and
// what the workbench, `sluice export`/`predict --weights DIR` and --resume read back.
//   events.jsonl    every event of the run, one JSON object a line (run_events.h)
//   metrics.csv     one row per epoch, rewritten atomically after each
//   weights.npz     the final weights, by <layer>/<weight>
//   project.sluice  the project as the run ran it (overrides applied)
//   checkpoints/    ckpt-<step>.npz (train/loop/checkpoint.h)

#include <filesystem>
#include <string>

namespace sluice::runfolder {

inline constexpr const char *kEvents = "events.jsonl";
inline constexpr const char *kMetrics = "metrics.csv";
inline constexpr const char *kWeights = "weights.npz";
inline constexpr const char *kProject = "project.sluice";
inline constexpr const char *kCheckpoints = "checkpoints";

// `name` inside the run folder `dir`.
inline std::string path(const std::string &dir, const char *name) { return (std::filesystem::path(dir) / name).string(); }

// Whether `dir` holds a run already (its events or its checkpoints): a new run there would mix
// with it, so it is continued with --resume or another folder is chosen.
inline bool holdsRun(const std::string &dir)
{
    std::error_code ec;
    return std::filesystem::exists(path(dir, kEvents), ec) || std::filesystem::exists(path(dir, kCheckpoints), ec);
}

} // namespace sluice::runfolder
