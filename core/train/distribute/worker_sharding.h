#pragma once
// How each MPI worker reads its part of the data, as tf.data's AutoShardPolicy.AUTO: by file
// when a source has at least as many files as there are workers (each worker keeps files
// i % workers == index), else by element. Either way the pipeline's global batch (the batch
// stage feeding the output) is divided by the number of workers, so that the workers' batches
// together make one global batch (tf.distribute's rebatching). By element, a shard stage goes
// right before that batch: worker w takes elements w, w+W, ... of the same (same-seed) stream,
// so step k of W workers trains on exactly the rows of global batch k.
//
// The sharding is a rewrite of the project's pipeline, done before the pipeline is built. A
// `save` stage's path becomes "<path>/rank-<index, 5 digits>": each worker writes a dataset of its own.

#include "io/error.h"
#include "project/project.h"

#include <string>

namespace sluice::train {

struct ShardingPlan
{
    std::string policy; // "file" or "data" (by element)
    std::string batchNode;
    std::int64_t globalBatch = 0, workerBatch = 0;
};

// The batch stage that makes the global batch: the nearest `batch` above `outputNode`; empty
// when the pipeline does not batch (a model needs batches, as model.fit does).
std::string globalBatchNode(const Project &project, const std::string &outputNode);

// Rewrites `project` (a copy the caller owns) for worker `index` of `workers`.
Result<ShardingPlan> shardForWorker(Project &project, const std::string &outputNode, int workers, int index);

} // namespace sluice::train
