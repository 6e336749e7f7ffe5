#pragma once
// How a run ended, in one place: the trainer's outcome, the run_end event, the Python result
// and the workbench (whose RunSession mirrors it as a Q_ENUM) all say it with these values and
// names.

#include <optional>
#include <string_view>

namespace sluice {

enum class RunStatus { Ok, Failed, Cancelled };

// "ok", "failed", "cancelled"; and back (nothing for another name).
const char *runStatusName(RunStatus status);
std::optional<RunStatus> runStatusFromName(std::string_view name);

} // namespace sluice
