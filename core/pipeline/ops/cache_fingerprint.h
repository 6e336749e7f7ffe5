#pragma once
// What a cache file was written from, so that a later run replays it only while that still
// holds: the elements' spec, every stage upstream of the cache (op and parameters), the seed each
// of them draws, and the identity of every file they read (path, size, modification time and a
// checksum of its first and last 64 KiB) and of every Python module they call. Kept as text lines
// in the cache file's header, so a mismatch can say what changed, not only that something did.
//
// Threading: pure functions over a build's context; the build's thread.

#include "pipeline/engine/build_context.h"

#include <string>
#include <vector>

namespace sluice::pipeline {

struct ElementSpec;

// One line per fact, "<kind> <name>\t<value>", the spec first and the rest sorted:
// "spec\t<elements>", "stage <id>\t<op> <params>", "seed <id>\t<n>",
// "file <path>\t<size> <mtime> <checksum>" (or "file <path>\tmissing").
std::vector<std::string> cacheFingerprint(BuildContext &context, const std::string &cacheNodeId, const ElementSpec &spec);

// What differs between the facts a cache was written from and the current ones, for a user:
// "source file data/x.npy changed (size 4096 → 8192)", "stage 'norm' changed its parameters",
// "stage 'shuffle' draws another seed (1 → 2)". Empty when they are the same.
std::string fingerprintDifference(const std::vector<std::string> &written, const std::vector<std::string> &now);

} // namespace sluice::pipeline
