#pragma once
// The per-stage table `sluice run --profile` prints at the end, and the one-line progress
// summary shown while it runs.

#include "pipeline/pipeline_stats.h"

#include <string>

namespace sluice::cli {

std::string statsTable(const pipeline::PipelineSnapshot &snapshot);
std::string statsLine(const pipeline::PipelineSnapshot &snapshot, int pass);

} // namespace sluice::cli
