#pragma once
// What op builders see while a project's pipeline is turned into datasets: the node's
// parameters (read through Params, whose errors name the node and the parameter), its inputs,
// the project (for paths), and the per-file scope of an interleave's sub-pipelines.
//
// Builders report bad input by throwing BuildFailure; the pipeline builder turns it into the
// Error its callers get (errors stay values at the edges of core).

#include "io/error.h"
#include "pipeline/engine/dataset.h"
#include "project/project.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sluice::pipeline {

struct BuildFailure
{
    Error error;
};

// "AUTOTUNE" in a project file, as tf.data.AUTOTUNE (-1).
constexpr std::int64_t kAutotune = -1;

class Params
{
public:
    Params(const PipelineNode &node, std::string where);

    bool has(const std::string &name) const;
    const nlohmann::json *raw(const std::string &name); // null when absent
    std::int64_t integer(const std::string &name, std::optional<std::int64_t> fallback, std::int64_t minimum,
                         std::int64_t maximum = INT64_MAX);
    // A count that may be "AUTOTUNE" or -1 (returned as kAutotune).
    std::int64_t autotunable(const std::string &name, std::optional<std::int64_t> fallback, std::int64_t minimum = 1);
    double number(const std::string &name, std::optional<double> fallback);
    bool boolean(const std::string &name, std::optional<bool> fallback);
    std::string string(const std::string &name, std::optional<std::string> fallback);
    std::string choice(const std::string &name, std::optional<std::string> fallback, const std::vector<std::string> &choices);
    // A string or a list of strings.
    std::vector<std::string> strings(const std::string &name, std::optional<std::vector<std::string>> fallback);
    // A number or a list of numbers.
    std::vector<double> numbers(const std::string &name, std::optional<std::vector<double>> fallback);

    [[noreturn]] void fail(const std::string &param, const std::string &reason) const;
    // Fails naming any parameter the op does not know, listing those it does.
    void checkKnown(const std::vector<std::string> &known) const;
    const std::string &where() const { return m_where; }
    const PipelineNode &node() const { return m_node; }

private:
    const nlohmann::json *require(const std::string &name, bool hasFallback);
    const PipelineNode &m_node;
    std::string m_where; // `node "shuf" (shuffle)`
};

class BuildContext;

// A node's inputs, built on demand.
class Inputs
{
public:
    Inputs(BuildContext &context, std::vector<std::string> ids) : m_context(context), m_ids(std::move(ids)) {}
    std::size_t size() const { return m_ids.size(); }
    DatasetPtr at(std::size_t i) const;
    // Input i built once per file of the source at the root of its chain, each restricted to that
    // file (interleave's sub-pipelines).
    std::vector<DatasetPtr> perFile(std::size_t i) const;
    const std::string &id(std::size_t i) const { return m_ids[i]; }

private:
    BuildContext &m_context;
    std::vector<std::string> m_ids;
};

class BuildContext
{
public:
    BuildContext(const Project &project, std::string what, std::deque<StageStats> &stats, int threads);

    const Project &project() const { return m_project; }
    const std::string &what() const { return m_what; }
    int threads() const { return m_threads; }
    // Set while an interleave's per-file sub-pipeline is built: the source keeps only that file.
    std::optional<std::size_t> fileFilter() const { return m_fileFilter; }

    // The dataset of node `id` (built once per file scope), its inputs first.
    DatasetPtr build(const std::string &id);
    // The number of files of the source at the root of `id`'s chain (1 for range or zip chains).
    std::size_t fileCount(const std::string &id);
    std::vector<DatasetPtr> buildPerFile(const std::string &id);

    // What a node computes once and shares with its per-file copies: opened files, expanded
    // globs. Without it, interleave's N sub-pipelines would each open all N files.
    template <typename T, typename Make>
    std::shared_ptr<const T> buildOnce(const std::string &nodeId, const std::string &what, Make &&make)
    {
        auto &slot = m_buildOnce[nodeId + '\n' + what];
        if (!slot)
            slot = std::make_shared<const T>(make());
        return std::static_pointer_cast<const T>(slot);
    }

    // The resident-memory budget of mapped sources (PipelineOptions::residentBudgetBytes).
    std::uint64_t residentBudget() const { return m_residentBudget; }
    void setResidentBudget(std::uint64_t bytes) { m_residentBudget = bytes; }

    // The node's counters (one set per node, shared by its per-file copies).
    StageStats *statsFor(const PipelineNode &node);
    // The seed of a random op: its own `seed` parameter when set; else derived from the
    // pipeline's seed and the node id (as tf.random.set_seed does for op seeds); else random.
    std::uint64_t seedFor(const PipelineNode &node, std::optional<std::int64_t> ownSeed) const;
    void setGlobalSeed(std::optional<std::uint64_t> seed) { m_globalSeed = seed; }
    void noteFiles(const std::string &id, std::size_t files) { m_files[id] = files; }
    // What the build did that the user should hear about, once (a cache rebuilt, and why); the
    // pipeline keeps these as notes().
    void addNote(std::string note) { m_notes.push_back(std::move(note)); }
    const std::vector<std::string> &notes() const { return m_notes; }

    // A new counter of the passes an op has started (its shuffle order depends on it). The
    // pipeline keeps them all, in build order, so a checkpoint can record the position of every
    // random op and a resumed run can put them back (Pipeline::passCounters).
    std::shared_ptr<std::atomic<std::uint64_t>> newPassCounter();
    const std::vector<std::shared_ptr<std::atomic<std::uint64_t>>> &passCounters() const { return m_passCounters; }

private:
    const Project &m_project;
    std::string m_what;
    std::deque<StageStats> &m_stats;
    std::map<std::string, StageStats *> m_statsById;
    std::map<std::pair<std::string, std::int64_t>, DatasetPtr> m_built; // by (id, file filter or -1)
    std::map<std::string, std::size_t> m_files;
    std::set<std::string> m_building; // cycle guard
    std::optional<std::size_t> m_fileFilter;
    int m_threads;
    std::optional<std::uint64_t> m_globalSeed;
    std::vector<std::shared_ptr<std::atomic<std::uint64_t>>> m_passCounters;
    std::map<std::string, std::shared_ptr<const void>> m_buildOnce;
    std::uint64_t m_residentBudget = 0;
    std::vector<std::string> m_notes;
};

} // namespace sluice::pipeline
