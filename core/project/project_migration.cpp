// Bringing older project files up to the current format version, in memory only: the file on
// disk is rewritten (in the current version) the next time the project is saved.
#include "project/project.h"
#include "project/project_detail.h"

namespace sluice::project_detail {
namespace {

using json = nlohmann::json;

Status corrupt(const std::string &what, const std::string &where, const std::string &why)
{
    return Error::corrupt(what, where + ": " + why);
}

// Version 0: the files written before the first release, which had no "version" key. Their
// "pipeline" held "stages" where version 1 has "nodes", a stage named its op "type" where a
// node has "op", and an edge was an object {"from": a, "to": b} where it is now [a, b].
// Everything else (format, name, params, model, training, layout) was already as in version 1.
//
// The rewrite is tolerant: a file that is already in version 1's shape but lacks "version"
// (hand-written, say) passes through unchanged. Messages about nodes then say "pipeline.nodes[i]",
// the name the key has after migration; the index is the same as in "stages".
Status migrateFrom0(json &document, const std::string &what)
{
    const auto pipeline = document.find("pipeline");
    if (pipeline == document.end() || !pipeline->is_object())
        return Status::success(); // nothing to rewrite; the version-1 checks report a bad type

    if (const auto stages = pipeline->find("stages"); stages != pipeline->end()) {
        if (pipeline->contains("nodes"))
            return corrupt(what, "pipeline", "has both \"stages\" (version 0) and \"nodes\" (version 1)");
        json nodes = std::move(*stages);
        pipeline->erase(stages);
        if (nodes.is_array()) {
            for (json &stage : nodes) {
                if (!stage.is_object() || stage.contains("op"))
                    continue;
                if (const auto type = stage.find("type"); type != stage.end()) {
                    json op = std::move(*type);
                    stage.erase(type);
                    stage["op"] = std::move(op);
                }
            }
        }
        (*pipeline)["nodes"] = std::move(nodes);
    }

    if (const auto edges = pipeline->find("edges"); edges != pipeline->end() && edges->is_array()) {
        for (std::size_t i = 0; i < edges->size(); ++i) {
            json &edge = (*edges)[i];
            if (!edge.is_object())
                continue;
            const auto from = edge.find("from");
            const auto to = edge.find("to");
            // Anything else in the object would be lost by the rewrite, so it is an error rather than silence.
            if (from == edge.end() || to == edge.end() || edge.size() != 2)
                return corrupt(what, "pipeline.edges[" + std::to_string(i) + "]", "a version-0 edge must be {\"from\": id, \"to\": id}");
            edge = json::array({std::move(*from), std::move(*to)});
        }
    }
    return Status::success();
}

} // namespace

Status migrate(json &document, int version, const std::string &what)
{
    if (version == 0) {
        if (Status s = migrateFrom0(document, what); !s)
            return s;
        version = 1;
    }
    // Each later format version adds a step here: `if (version == N) { ...; version = N + 1; }`.
    document["version"] = version;
    return Status::success();
}

} // namespace sluice::project_detail
