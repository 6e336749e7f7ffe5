#pragma once
// The project file (`.sluice`, JSON): what the workbench saves and `sluice run` replays.
//
//   {"format": "sluice-project", "version": 1, "name": ...,
//    "pipeline": {"nodes": [{"id", "op", "params"}...], "edges": [[from, to]...], "output": id?},
//    "model": {...}, "training": {...}, "layout": {...}}
//
// This unit owns the file's structure: reading, migrating older versions, refusing newer ones,
// structural checks (ids, edges, cycles), relative paths, and atomic saving that keeps every key
// it does not know. What each op and parameter means is checked by the pipeline builder.
//
// Threading: a Project is a plain value; one thread at a time.

#include "io/error.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace sluice {

struct PipelineNode
{
    std::string id;
    std::string op;
    nlohmann::json params = nlohmann::json::object();
    nlohmann::json extra = nlohmann::json::object(); // keys of the node this version does not know, kept on save
};

struct PipelineEdge
{
    std::string from;
    std::string to;
};

class Project
{
public:
    static constexpr int kFormatVersion = 1;

    // Reads and checks `path`; errors name the file and, inside it, the node or key at fault.
    static Result<Project> load(const std::string &path);
    // Parses a document already in memory; `folder` is where relative paths resolve, `what`
    // names it in messages (a path or "<project>").
    static Result<Project> fromJson(const nlohmann::json &document, const std::string &folder, const std::string &what = "project");
    static Result<Project> fromText(const std::string &text, const std::string &folder, const std::string &what = "project");

    // The whole document as it will be saved: known parts from the fields below, every other
    // key (top level, per node, inside "pipeline") as it was read.
    nlohmann::json toJson() const;
    // Writes atomically (temporary + rename) and remembers the path.
    Status save(const std::string &path);

    const std::string &path() const { return m_path; }     // empty until loaded or saved
    const std::string &folder() const { return m_folder; } // relative paths resolve here
    std::string resolvePath(const std::string &relativeOrAbsolute) const;
    // Expands a path or glob pattern (`data/part-*.tfrecord`) against folder(), sorted; an error
    // names the pattern when nothing matches or a plain path does not exist.
    Result<std::vector<std::string>> expandFiles(const std::string &pattern) const;

    std::string name;
    std::vector<PipelineNode> nodes;
    std::vector<PipelineEdge> edges;    // in file order: the order of a node's inputs (zip)
    std::optional<std::string> output;  // "pipeline.output": the node whose elements the pipeline yields
    nlohmann::json model;     // null when absent
    nlohmann::json training;  // null when absent
    nlohmann::json layout;    // GUI-only state, ignored headless

    const PipelineNode *findNode(const std::string &id) const;
    std::vector<std::string> inputsOf(const std::string &id) const;  // edge order
    std::vector<std::string> outputsOf(const std::string &id) const;
    // The graph's one walk: every node upstream of `id` (its inputs, their inputs, ...) or
    // downstream of it, each once, nearest first (breadth-first, edges in file order); `id`
    // itself first where `includeSelf`. Cycles end the walk, never loop it.
    std::vector<std::string> upstreamOf(const std::string &id, bool includeSelf = false) const;
    std::vector<std::string> downstreamOf(const std::string &id, bool includeSelf = false) const;
    // Node ids in an order where every node comes after its inputs (the file's order where it can).
    std::vector<std::string> topologicalOrder() const;
    // The node the pipeline yields: `output` when set, else the one node with no outgoing edge;
    // an error when there is none or several.
    Result<std::string> outputNode() const;
    // Keys this version does not know (kept on save, so a file round-trips), each said as a note:
    // a misspelt "trainig" or a node's "param" would otherwise change nothing without a word.
    // "description" is known: a free text for people.
    std::vector<std::string> unknownKeyNotes() const;

private:
    std::string m_path;
    std::string m_folder;
    nlohmann::json m_extra = nlohmann::json::object();         // unknown top-level keys
    nlohmann::json m_pipelineExtra = nlohmann::json::object(); // unknown keys inside "pipeline"
};

} // namespace sluice
