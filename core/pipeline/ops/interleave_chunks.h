#pragma once
// interleave over per-file sources whose rows come in chunks (from_tfrecord, parallel from_csv):
// the same rows in the same order as the element-wise interleave (block_length rows from each
// of cycle_length files in turn), but the files hand over whole chunks of decoded rows, which
// the parallel slots decode ahead on the arena, and the interleaved rows are copied into chunks
// again, so no element per row travels between threads. This is what makes a parallel
// interleave over TFRecord files scale with cores.

#include "pipeline/sources/row_chunks.h"

namespace sluice::pipeline {

struct ChunkInterleaveOptions
{
    int cycleLength = 1;
    int blockLength = 1;
    int parallelSlots = 0;   // how many open slots at most decode ahead on the arena (0: none)
    int chunksPerSlot = 4;   // chunks buffered per parallel slot
};

// `files` (each with chunkedRows()) and `rowSpec` outlive the iterator. Rows taken from the
// files are credited to `sourceStats` (their shared source node), if given.
std::unique_ptr<Iterator> interleaveChunks(const std::vector<DatasetPtr> &files, const IteratorContext &context,
                                           const ElementSpec &rowSpec, ChunkInterleaveOptions options, StageStats *sourceStats);

} // namespace sluice::pipeline
