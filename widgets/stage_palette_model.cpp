#include "stage_palette_model.h"

#include "pipeline/engine/op_registry.h"

#include <QMimeData>

#include <algorithm>

namespace sluice::widgets {
namespace {

// Internal ids: 0 on a group, 1 + the group's row on a stage.
constexpr quintptr groupId = 0;

QString fromStd(const std::string &s)
{
    return QString::fromStdString(s);
}

QString groupTitle(const QString &key)
{
    return key.isEmpty() ? QString() : key.left(1).toUpper() + key.mid(1);
}

} // namespace

StagePaletteModel::StagePaletteModel(QObject *parent)
    : StagePaletteModel(pipeline::allOps(), parent)
{
}

StagePaletteModel::StagePaletteModel(const std::vector<pipeline::OpInfo> &ops, QObject *parent)
    : QAbstractItemModel(parent)
{
    // Groups in the order the registry first names them (sources, transformations, performance),
    // ops in registry order within each: the order of `sluice ops` and docs/pipeline-ops.md.
    for (const auto &op : ops) {
        const QString key = fromStd(op.group);
        auto group = std::find_if(m_groups.begin(), m_groups.end(), [&](const Group &g) { return g.key == key; });
        if (group == m_groups.end()) {
            m_groups.push_back({key, groupTitle(key), {}});
            group = std::prev(m_groups.end());
        }
        group->stages.push_back({fromStd(op.name), fromStd(op.summary), toolTip(op)});
    }
}

QString StagePaletteModel::toolTip(const pipeline::OpInfo &op)
{
    QString html = QStringLiteral("<p><b>%1</b></p><p>%2</p>")
                       .arg(fromStd(op.name).toHtmlEscaped(), fromStd(op.summary).toHtmlEscaped());
    if (op.params.empty())
        return html + QStringLiteral("<p><i>No parameters.</i></p>");
    html += QStringLiteral("<table cellspacing=\"0\" cellpadding=\"2\">"
                           "<tr><th align=\"left\">parameter</th><th align=\"left\">type</th>"
                           "<th align=\"left\">default</th><th align=\"left\">meaning</th></tr>");
    for (const auto &p : op.params) {
        // No default means required only when the op says so; otherwise leaving it out means
        // what the parameter's doc says (a seed drawn from the pipeline's, a sequential map…).
        const QString def = p.required               ? QStringLiteral("<i>required</i>")
                            : p.defaultValue.empty() ? QStringLiteral("<i>optional</i>")
                                                     : QStringLiteral("<code>%1</code>").arg(fromStd(p.defaultValue).toHtmlEscaped());
        html += QStringLiteral("<tr><td><code>%1</code></td><td>%2</td><td>%3</td><td>%4</td></tr>")
                    .arg(fromStd(p.name).toHtmlEscaped(), fromStd(p.type).toHtmlEscaped(), def, fromStd(p.doc).toHtmlEscaped());
    }
    return html + QStringLiteral("</table>");
}

const StagePaletteModel::Group *StagePaletteModel::groupOf(const QModelIndex &index) const
{
    if (!index.isValid() || index.model() != this)
        return nullptr;
    const auto row = index.internalId() == groupId ? static_cast<std::size_t>(index.row()) : index.internalId() - 1;
    return row < m_groups.size() ? &m_groups[row] : nullptr;
}

const StagePaletteModel::Stage *StagePaletteModel::stageOf(const QModelIndex &index) const
{
    if (!index.isValid() || index.internalId() == groupId)
        return nullptr;
    const Group *group = groupOf(index);
    if (!group || index.row() < 0 || static_cast<std::size_t>(index.row()) >= group->stages.size())
        return nullptr;
    return &group->stages[static_cast<std::size_t>(index.row())];
}

QModelIndex StagePaletteModel::index(int row, int column, const QModelIndex &parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, groupId);
    return createIndex(row, column, static_cast<quintptr>(parent.row()) + 1);
}

QModelIndex StagePaletteModel::parent(const QModelIndex &child) const
{
    if (!child.isValid() || child.internalId() == groupId)
        return {};
    return createIndex(static_cast<int>(child.internalId() - 1), 0, groupId);
}

int StagePaletteModel::rowCount(const QModelIndex &parent) const
{
    if (!parent.isValid())
        return static_cast<int>(m_groups.size());
    if (parent.column() != 0 || parent.internalId() != groupId)
        return 0; // stages are leaves
    const Group *group = groupOf(parent);
    return group ? static_cast<int>(group->stages.size()) : 0;
}

int StagePaletteModel::columnCount(const QModelIndex &) const
{
    return 1;
}

QVariant StagePaletteModel::data(const QModelIndex &index, int role) const
{
    const Group *group = groupOf(index);
    if (!group)
        return {};
    if (const Stage *stage = stageOf(index)) {
        switch (role) {
        case Qt::DisplayRole:
        case OpNameRole:
            return stage->name;
        case Qt::ToolTipRole:
            return stage->toolTip;
        case GroupRole:
            return group->key;
        case SummaryRole:
            return stage->summary;
        case IsGroupRole:
            return false;
        default:
            return {};
        }
    }
    switch (role) {
    case Qt::DisplayRole:
        return group->title;
    case Qt::ToolTipRole:
        return tr("%1 (%n stage(s))", nullptr, static_cast<int>(group->stages.size())).arg(group->title);
    case GroupRole:
        return group->key;
    case IsGroupRole:
        return true;
    case OpNameRole:
    case SummaryRole:
        return QString();
    default:
        return {};
    }
}

QVariant StagePaletteModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (section == 0 && orientation == Qt::Horizontal && role == Qt::DisplayRole)
        return tr("Stage");
    return {};
}

Qt::ItemFlags StagePaletteModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    if (stageOf(index))
        return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled | Qt::ItemNeverHasChildren;
    return Qt::ItemIsEnabled; // a group: a heading, neither dragged nor selected
}

QHash<int, QByteArray> StagePaletteModel::roleNames() const
{
    auto names = QAbstractItemModel::roleNames();
    names.insert(OpNameRole, "opName");
    names.insert(GroupRole, "group");
    names.insert(SummaryRole, "summary");
    names.insert(IsGroupRole, "isGroup");
    return names;
}

QStringList StagePaletteModel::mimeTypes() const
{
    return {QString::fromLatin1(mimeType)};
}

QMimeData *StagePaletteModel::mimeData(const QModelIndexList &indexes) const
{
    QStringList names;
    for (const QModelIndex &index : indexes)
        if (const Stage *stage = stageOf(index); stage && !names.contains(stage->name))
            names.push_back(stage->name);
    if (names.isEmpty())
        return nullptr; // only groups: nothing to drag
    auto *data = new QMimeData;
    data->setData(QString::fromLatin1(mimeType), names.join(QLatin1Char('\n')).toUtf8());
    return data;
}

Qt::DropActions StagePaletteModel::supportedDragActions() const
{
    return Qt::CopyAction;
}

QStringList StagePaletteModel::stageNames(const QMimeData *data)
{
    if (!data || !data->hasFormat(QString::fromLatin1(mimeType)))
        return {};
    return QString::fromUtf8(data->data(QString::fromLatin1(mimeType))).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

} // namespace sluice::widgets
