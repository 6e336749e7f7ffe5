#include "train/distribute/worker_sharding.h"

#include <algorithm>
#include <set>

namespace sluice::train {

namespace {

// The parameter that lists a source's files, for the sources that have file lists.
const char *fileParameter(const std::string &op)
{
    if (op == "from_tfrecord" || op == "from_csv" || op == "from_parquet")
        return "filenames";
    if (op == "from_npz")
        return "path";
    return nullptr;
}

Result<std::vector<std::string>> expand(const Project &project, const nlohmann::json &value)
{
    std::vector<std::string> files;
    std::vector<nlohmann::json> patterns;
    if (value.is_array())
        patterns.assign(value.begin(), value.end());
    else
        patterns.push_back(value);
    for (const auto &p : patterns) {
        if (!p.is_string())
            return Error::invalid("files", "must be paths");
        auto more = project.expandFiles(p.get<std::string>());
        if (!more)
            return more.error();
        files.insert(files.end(), more->begin(), more->end());
    }
    return files;
}

} // namespace

std::string globalBatchNode(const Project &project, const std::string &output)
{
    for (const std::string &id : project.upstreamOf(output, true)) // nearest first
        if (const auto *node = project.findNode(id); node && node->op == "batch")
            return id;
    return {};
}

Result<ShardingPlan> shardForWorker(Project &project, const std::string &outputNode, int workers, int index)
{
    // Each worker saves what it reads into a dataset of its own, as `sluice convert` under
    // mpirun does: `load` with "<path>/rank-*" reads them all back.
    for (auto &n : project.nodes)
        if (n.op == "save" && n.params.contains("path") && n.params["path"].is_string()) {
            std::string rank = std::to_string(index);
            rank.insert(0, rank.size() < 5 ? 5 - rank.size() : 0, '0'); // rank-00003, as convert names them
            n.params["path"] = n.params["path"].get<std::string>() + "/rank-" + rank;
        }
    ShardingPlan plan;
    plan.batchNode = globalBatchNode(project, outputNode);
    if (plan.batchNode.empty())
        return Error::invalid("pipeline", "training over several workers needs a batch stage above the output node '" + outputNode + "'");
    PipelineNode *batch = nullptr;
    for (auto &n : project.nodes)
        if (n.id == plan.batchNode)
            batch = &n;
    if (!batch->params.contains("batch_size") || !batch->params["batch_size"].is_number_integer())
        return Error::invalid("node '" + plan.batchNode + "'", "batch_size must be an integer");
    plan.globalBatch = batch->params["batch_size"].get<std::int64_t>();
    if (plan.globalBatch % workers != 0)
        return Error::invalid("node '" + plan.batchNode + "' batch_size",
                              "the global batch of " + std::to_string(plan.globalBatch) + " does not divide evenly over " + std::to_string(workers) +
                                  " workers");
    plan.workerBatch = plan.globalBatch / workers;
    batch->params["batch_size"] = plan.workerBatch;

    // By file when every source with a file list has enough files.
    bool byFile = false;
    std::vector<std::pair<PipelineNode *, std::vector<std::string>>> sources;
    for (auto &n : project.nodes) {
        if (const char *param = fileParameter(n.op); param && n.params.contains(param)) {
            auto files = expand(project, n.params[param]);
            if (!files)
                return Error::invalid("node '" + n.id + "' " + param, files.error().message());
            sources.emplace_back(&n, std::move(*files));
        }
    }
    byFile = !sources.empty();
    for (const auto &[node, files] : sources)
        byFile = byFile && files.size() >= std::size_t(workers);
    for (const auto &n : project.nodes)
        if (n.op.rfind("from_", 0) == 0 && !fileParameter(n.op))
            byFile = false; // a source without a file list (from_npy, range) must be sharded by element

    if (byFile) {
        plan.policy = "file";
        for (auto &[node, files] : sources) {
            nlohmann::json mine = nlohmann::json::array();
            for (std::size_t i = std::size_t(index); i < files.size(); i += std::size_t(workers))
                mine.push_back(files[i]);
            node->params[fileParameter(node->op)] = mine;
        }
        return plan;
    }
    plan.policy = "data";
    // from_files reads and decodes a file per element: shard right after it, so that each
    // worker reads only its own share (before a shuffle: each shuffles its share, as tf.data's
    // file policy does), rather than every worker decoding every file for a shard before batch.
    const auto isFilesSource = [](const PipelineNode &n) { return n.op == "from_files"; };
    const bool onlyFileSources = std::all_of(project.nodes.begin(), project.nodes.end(), [&](const PipelineNode &n) {
        return n.op.rfind("from_", 0) != 0 && n.op != "range" ? true : isFilesSource(n);
    });
    if (onlyFileSources) {
        std::vector<std::string> sourceIds;
        for (const auto &n : project.nodes)
            if (isFilesSource(n))
                sourceIds.push_back(n.id);
        for (const auto &id : sourceIds) {
            PipelineNode shard;
            shard.id = "__worker_shard_" + id;
            shard.op = "shard";
            shard.params = {{"num_shards", workers}, {"index", index}};
            project.nodes.push_back(shard);
            for (auto &e : project.edges)
                if (e.from == id)
                    e.from = shard.id;
            project.edges.push_back({id, shard.id});
        }
        if (!sourceIds.empty())
            return plan;
    }
    std::string shardId = "__worker_shard";
    PipelineNode shard;
    shard.id = shardId;
    shard.op = "shard";
    shard.params = {{"num_shards", workers}, {"index", index}};
    project.nodes.push_back(shard);
    for (auto &e : project.edges)
        if (e.to == plan.batchNode)
            e.to = shardId;
    project.edges.push_back({shardId, plan.batchNode});
    return plan;
}

} // namespace sluice::train
