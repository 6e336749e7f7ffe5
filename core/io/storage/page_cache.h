#pragma once
// Dropping a file's pages from the page cache, so that the next read comes from storage: how
// `sluice bench ... --cold` and the tests measure the storage path on files smaller than RAM
// (a file larger than RAM cannot stay cached anyway).

#include "io/error.h"

#include <string>

namespace sluice {

// Writes back the file's dirty pages, then asks the kernel to drop its clean ones
// (posix_fadvise DONTNEED). Pages that some process maps stay; on a file system that keeps
// files in memory (tmpfs) nothing is dropped. Returns the fraction of pages still cached.
Result<double> evictFromPageCache(const std::string &path);

} // namespace sluice
