#include "pipeline/engine/op_registry.h"

#include <algorithm>

namespace sluice::pipeline {

const std::vector<OpInfo> &allOps()
{
    static const std::vector<OpInfo> ops = [] {
        std::vector<OpInfo> all;
        registerSourceOps(all);
        registerLoadSource(all);
        registerStreamOps(all);
        registerBatchOps(all);
        registerShuffleOps(all);
        registerMapOps(all);
        registerPerformanceOps(all);
        registerHostOps(all);
        registerSaveOp(all);
        return all;
    }();
    return ops;
}

const OpInfo *findOp(const std::string &name)
{
    for (const auto &op : allOps())
        if (op.name == name)
            return &op;
    return nullptr;
}

std::string knownOpNames()
{
    std::vector<std::string> names;
    for (const auto &op : allOps())
        names.push_back(op.name);
    std::sort(names.begin(), names.end());
    std::string s;
    for (const auto &n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}

} // namespace sluice::pipeline
