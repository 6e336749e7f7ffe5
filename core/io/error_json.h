#pragma once
// An Error as the fields of a run event ("run_end" of a failed run): the message a user reads
// and, for programs, its kind and the node and parameter it concerns.
//   {"error": "node \"b\" (batch): batch_size: …", "error_kind": "invalid", "node": "b", "param": "batch_size"}

#include "io/error.h"

#include <nlohmann/json.hpp>

namespace sluice {

inline void addErrorFields(nlohmann::json &event, const Error &error)
{
    event["error"] = error.message();
    event["error_kind"] = kindName(error.kind);
    if (!error.node.empty())
        event["node"] = error.node;
    if (!error.param.empty())
        event["param"] = error.param;
}

} // namespace sluice
