#include "document/graph_layout.h"

#include <algorithm>
#include <vector>

namespace sluice::widgets {

std::map<std::string, QPointF> layeredLayout(const Project &project)
{
    // Depth = longest path from a source; topologicalOrder() puts inputs first.
    std::map<std::string, int> depth;
    for (const std::string &id : project.topologicalOrder()) {
        int d = 0;
        for (const std::string &input : project.inputsOf(id))
            d = std::max(d, depth[input] + 1);
        depth[id] = d;
    }
    std::map<int, std::vector<std::string>> columns;
    for (const PipelineNode &node : project.nodes) // file order inside a column
        columns[depth[node.id]].push_back(node.id);
    std::size_t tallest = 0;
    for (const auto &[d, ids] : columns)
        tallest = std::max(tallest, ids.size());
    std::map<std::string, QPointF> positions;
    for (const auto &[d, ids] : columns) {
        const double top = (double(tallest) - double(ids.size())) * kLayoutRowHeight / 2;
        for (std::size_t row = 0; row < ids.size(); ++row)
            positions[ids[row]] = QPointF(d * kLayoutColumnWidth, top + double(row) * kLayoutRowHeight);
    }
    return positions;
}

} // namespace sluice::widgets
