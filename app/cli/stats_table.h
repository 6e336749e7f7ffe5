#pragma once
// The per-stage table `sluice run --profile` prints at the end, and the one-line progress
// summary shown while it runs.

#include "io/text_format.h"
#include "pipeline/profile/pipeline_stats.h"

#include <string>

namespace sluice::cli {

std::string statsTable(const pipeline::PipelineSnapshot &snapshot);
std::string statsLine(const pipeline::PipelineSnapshot &snapshot, int pass);
// A count as the table shows it: 950, 14.8k, 2.95M, 1.20G.
using sluice::countText; // io/text_format.h: shared with the workbench's Profile dock

} // namespace sluice::cli
