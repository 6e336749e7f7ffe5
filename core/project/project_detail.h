#pragma once
// Pieces of the project-file unit shared between its source files; not a public interface.

#include "io/error.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace sluice {

class Project;

namespace project_detail {

// Rewrites `document` (format version `version`, older than the current one) in place into the
// current version's shape. Errors name `what` and the key at fault.
Status migrate(nlohmann::json &document, int version, const std::string &what);

// Indices of the nodes in Kahn's order, ready nodes leaving in file order. Nodes on a cycle
// never become ready and are missing from the result.
std::vector<std::size_t> kahnOrder(const Project &project);

// The ids on one cycle, in edge direction and starting at the earliest node in file order;
// empty when the graph has none.
std::vector<std::string> findCycle(const Project &project);

} // namespace project_detail
} // namespace sluice
