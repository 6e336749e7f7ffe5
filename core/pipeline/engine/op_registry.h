#pragma once
// Every pipeline op, keyed by its tf.data name (style: factories keyed by name): what the
// palette shows, what the reference documents, and the builder that turns a project node into a
// dataset. An unknown name is an error that quotes it and lists the known ones.

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sluice {
struct PipelineNode;
}

namespace sluice::pipeline {

class BuildContext;
class Dataset;
class Inputs;
class Params;

struct ParamInfo
{
    std::string name;
    std::string type;         // "int", "int|AUTOTUNE", "number", "bool", "string", "path|glob|list", "enum:a|b", …;
                              // a source's spec: "features" (from_npy), "feature_spec" (from_tfrecord),
                              // "columns" (from_csv), "members" (from_npz), each with a table of its own
    std::string defaultValue; // as written in a project file; empty when there is none (required, or optional: see doc)
    std::string doc;          // for an optional parameter without a default, also what leaving it out means
    // Every node of the op must set it (the build fails naming it otherwise). False for a
    // parameter with a default and for one whose absence means something of its own (a seed
    // drawn from the pipeline's, a sequential map), so that "no default" never reads as
    // "required". Last, so that initialisers without it keep meaning "optional".
    bool required = false;
};

struct OpInfo
{
    using Builder = std::function<std::shared_ptr<Dataset>(BuildContext &, Params &, const Inputs &)>;

    std::string name;  // tf.data's name: "shuffle", "batch", …
    std::string group; // "sources", "transformations", "performance"
    std::string summary;
    std::vector<ParamInfo> params;
    int minInputs = 1;
    int maxInputs = 1; // -1: any number (zip)
    Builder build;
};

const std::vector<OpInfo> &allOps();
const OpInfo *findOp(const std::string &name);
std::string knownOpNames(); // "batch, cache, filter, …"

// Registration, one call per op family (each in its own file).
void registerSourceOps(std::vector<OpInfo> &ops);
void registerStreamOps(std::vector<OpInfo> &ops);
void registerBatchOps(std::vector<OpInfo> &ops);
void registerShuffleOps(std::vector<OpInfo> &ops);
void registerMapOps(std::vector<OpInfo> &ops);
void registerPerformanceOps(std::vector<OpInfo> &ops);
void registerHostOps(std::vector<OpInfo> &ops); // host_ops.cpp: from_generator
void registerCacheOp(std::vector<OpInfo> &ops);
void registerLoadSource(std::vector<OpInfo> &ops); // source_load.cpp: load, the reader of save's datasets
void registerSaveOp(std::vector<OpInfo> &ops);     // save_op.cpp

} // namespace sluice::pipeline
