// Questions about the pipeline graph of a project: neighbours, order, cycles, the output node.
#include "project/project.h"
#include "project/project_detail.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <set>
#include <unordered_map>

namespace sluice {
namespace {

// Node index by id; with duplicate ids (only possible in a Project built by code) the first wins.
std::unordered_map<std::string, std::size_t> indexById(const Project &project)
{
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < project.nodes.size(); ++i)
        index.emplace(project.nodes[i].id, i);
    return index;
}

std::string joined(const std::vector<std::string> &ids)
{
    std::string text;
    for (const auto &id : ids)
        text += (text.empty() ? "" : ", ") + id;
    return text;
}

} // namespace

namespace project_detail {

std::vector<std::size_t> kahnOrder(const Project &project)
{
    const auto index = indexById(project);
    const std::size_t n = project.nodes.size();
    std::vector<std::vector<std::size_t>> successors(n);
    std::vector<std::size_t> inDegree(n, 0);
    for (const PipelineEdge &edge : project.edges) {
        const auto from = index.find(edge.from);
        const auto to = index.find(edge.to);
        if (from == index.end() || to == index.end())
            continue; // a dangling edge (refused on load) constrains nothing
        successors[from->second].push_back(to->second);
        ++inDegree[to->second];
    }
    // Ordered by file position, so that among the nodes that are ready the earliest leaves first
    // and an already-sorted file keeps its order.
    std::set<std::size_t> ready;
    for (std::size_t i = 0; i < n; ++i) {
        if (inDegree[i] == 0)
            ready.insert(i);
    }
    std::vector<std::size_t> order;
    order.reserve(n);
    while (!ready.empty()) {
        const std::size_t i = *ready.begin();
        ready.erase(ready.begin());
        order.push_back(i);
        for (std::size_t next : successors[i]) {
            if (--inDegree[next] == 0)
                ready.insert(next);
        }
    }
    return order;
}

std::vector<std::string> findCycle(const Project &project)
{
    const std::vector<std::size_t> order = kahnOrder(project);
    if (order.size() == project.nodes.size())
        return {};
    std::vector<bool> left(project.nodes.size(), true);
    for (std::size_t i : order)
        left[i] = false;
    const auto index = indexById(project);

    // Every node Kahn's algorithm left behind still has an input from another node left behind,
    // so walking backwards along such inputs must come round to a node already visited.
    std::size_t current = std::size_t(std::find(left.begin(), left.end(), true) - left.begin());
    std::vector<std::size_t> walk;
    std::vector<std::size_t> stepOf(project.nodes.size(), SIZE_MAX);
    while (stepOf[current] == SIZE_MAX) {
        stepOf[current] = walk.size();
        walk.push_back(current);
        for (const PipelineEdge &edge : project.edges) {
            const auto from = index.find(edge.from);
            const auto to = index.find(edge.to);
            if (from != index.end() && to != index.end() && to->second == current && left[from->second]) {
                current = from->second;
                break;
            }
        }
    }
    std::vector<std::size_t> cycle(walk.begin() + std::ptrdiff_t(stepOf[current]), walk.end());
    std::reverse(cycle.begin(), cycle.end()); // the walk went against the edges
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    std::vector<std::string> ids;
    for (std::size_t i : cycle)
        ids.push_back(project.nodes[i].id);
    return ids;
}

} // namespace project_detail

const PipelineNode *Project::findNode(const std::string &id) const
{
    const auto it = std::find_if(nodes.begin(), nodes.end(), [&id](const PipelineNode &node) { return node.id == id; });
    return it == nodes.end() ? nullptr : &*it;
}

std::vector<std::string> Project::inputsOf(const std::string &id) const
{
    std::vector<std::string> inputs;
    for (const PipelineEdge &edge : edges) {
        if (edge.to == id)
            inputs.push_back(edge.from);
    }
    return inputs;
}

std::vector<std::string> Project::outputsOf(const std::string &id) const
{
    std::vector<std::string> outputs;
    for (const PipelineEdge &edge : edges) {
        if (edge.from == id)
            outputs.push_back(edge.to);
    }
    return outputs;
}

namespace {

template <typename Next>
std::vector<std::string> walk(const std::string &start, bool includeSelf, Next next)
{
    std::vector<std::string> order;
    std::set<std::string> seen{start};
    std::deque<std::string> frontier{start};
    while (!frontier.empty()) {
        const std::string id = std::move(frontier.front());
        frontier.pop_front();
        if (id != start || includeSelf)
            order.push_back(id);
        for (std::string &n : next(id))
            if (seen.insert(n).second)
                frontier.push_back(std::move(n));
    }
    return order;
}

} // namespace

std::vector<std::string> Project::upstreamOf(const std::string &id, bool includeSelf) const
{
    return walk(id, includeSelf, [this](const std::string &n) { return inputsOf(n); });
}

std::vector<std::string> Project::downstreamOf(const std::string &id, bool includeSelf) const
{
    return walk(id, includeSelf, [this](const std::string &n) { return outputsOf(n); });
}

std::vector<std::string> Project::topologicalOrder() const
{
    std::vector<std::string> ids;
    for (std::size_t i : project_detail::kahnOrder(*this))
        ids.push_back(nodes[i].id);
    return ids;
}

Result<std::string> Project::outputNode() const
{
    const std::string what = m_path.empty() ? "project" : m_path;
    if (output) {
        if (!findNode(*output))
            return Error::invalid(what, "pipeline.output: node \"" + *output + "\" does not exist");
        return *output;
    }
    if (nodes.empty())
        return Error::invalid(what, "the pipeline has no nodes");
    std::vector<std::string> ends;
    for (const PipelineNode &node : nodes) {
        if (outputsOf(node.id).empty())
            ends.push_back(node.id);
    }
    if (ends.size() == 1)
        return ends.front();
    if (ends.empty())
        return Error::invalid(what, "every node feeds another, so none ends the pipeline; set pipeline.output");
    return Error::invalid(what, "several nodes end the pipeline (" + joined(ends) + "); set pipeline.output");
}

} // namespace sluice
