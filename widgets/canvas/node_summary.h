#pragma once
// The one line a stage's card shows under its op: the parameters that tell stages of one op
// apart (batch_size for batch, the function for map, how many files a source reads).

#include "project/project.h"

#include <QString>

namespace sluice::widgets {

QString nodeSummary(const PipelineNode &node);

} // namespace sluice::widgets
