#include "canvas/node_summary.h"

#include <QStringList>

namespace sluice::widgets {

namespace {

QString valueText(const nlohmann::json &value)
{
    if (value.is_string())
        return QString::fromStdString(value.get<std::string>());
    if (value.is_array())
        return QStringLiteral("%1 items").arg(value.size());
    if (value.is_object())
        return QStringLiteral("%1 entries").arg(value.size());
    return QString::fromStdString(value.dump());
}

} // namespace

QString nodeSummary(const PipelineNode &node)
{
    const nlohmann::json &p = node.params;
    if (!p.is_object())
        return {};
    // The parameters that matter most per op, in the order users read them.
    static const std::vector<std::pair<std::string, std::vector<std::string>>> keys{
        {"batch", {"batch_size"}},        {"shuffle", {"buffer_size"}},     {"prefetch", {"buffer_size"}},
        {"map", {"function", "features"}}, {"filter", {"feature", "op", "value"}}, {"shard", {"num_shards", "index"}},
        {"take", {"count"}},               {"skip", {"count"}},             {"repeat", {"count"}},
        {"interleave", {"cycle_length"}},  {"range", {"start", "stop"}},    {"from_npy", {"features"}},
        {"from_csv", {"filenames"}},       {"from_tfrecord", {"filenames"}}, {"from_npz", {"path"}},
        {"global_shuffle", {"seed"}},      {"cache", {"filename"}},         {"from_files", {"directory", "files"}},
        {"save", {"path", "format"}},      {"load", {"path"}}};
    QStringList parts;
    for (const auto &[op, names] : keys) {
        if (op != node.op)
            continue;
        for (const std::string &name : names)
            if (p.contains(name))
                parts << QStringLiteral("%1 %2").arg(QString::fromStdString(name), valueText(p[name]));
    }
    if (parts.isEmpty())
        for (const auto &[name, value] : p.items()) {
            parts << QStringLiteral("%1 %2").arg(QString::fromStdString(name), valueText(value));
            if (parts.size() == 2)
                break;
        }
    return parts.join(QStringLiteral(", "));
}

} // namespace sluice::widgets
