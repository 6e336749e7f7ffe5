#pragma once
// The practical limit of the classic pipeline on this machine: plain threads copying shuffled
// rows out of the same file mapping into batch buffers, with nothing else (no engine, no fresh
// permutation per pass, no prefetch queue). `sluice bench pipeline` measures it in the same run
// as the pipeline, so the pipeline's figure can be stated as a share of what the copy allows.

#include "io/error.h"

#include <cstdint>
#include <string>

namespace sluice::commands {

struct GatherLimit
{
    std::uint64_t rows = 0;
    double seconds = 0;
    int threads = 0;
};

// `threads` threads take batches of `batchRows` indices in turn from one permutation of the
// file's rows (drawn before the clock, reused every pass) and memcpy those rows into their own
// buffer, for about `seconds`.
Result<GatherLimit> measureRowGatherLimit(const std::string &npyPath, std::uint64_t batchRows, int threads, double seconds);

} // namespace sluice::commands
