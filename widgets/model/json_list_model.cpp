// The JSON list model. Rows are the array's objects; a non-object entry (a hand-edited file) is
// shown as its JSON text rather than hidden.
#include "model/json_list_model.h"

#include <QBrush>
#include <QColor>
#include <QJsonDocument>

namespace sluice::widgets {

JsonListModel::JsonListModel(QObject *parent) : QAbstractListModel(parent) {}

void JsonListModel::setLabeler(Labeler label, Labeler toolTip)
{
    m_label = std::move(label);
    m_toolTip = std::move(toolTip);
    if (!m_items.isEmpty())
        Q_EMIT dataChanged(index(0), index(int(m_items.size()) - 1));
}

void JsonListModel::setItems(const QJsonArray &items)
{
    if (items.size() != m_items.size()) {
        beginResetModel();
        m_items = items;
        endResetModel();
        return;
    }
    // Labels may depend on other rows (a layer's inputs default to the one before), so every row
    // is refreshed.
    m_items = items;
    if (!m_items.isEmpty())
        Q_EMIT dataChanged(index(0), index(int(m_items.size()) - 1));
}

QJsonObject JsonListModel::item(int row) const
{
    return row >= 0 && row < m_items.size() ? m_items.at(row).toObject() : QJsonObject();
}

void JsonListModel::insertItem(int row, const QJsonObject &item)
{
    row = std::clamp(row, 0, int(m_items.size()));
    beginInsertRows({}, row, row);
    m_items.insert(row, item);
    endInsertRows();
}

void JsonListModel::removeItem(int row)
{
    if (row < 0 || row >= m_items.size())
        return;
    beginRemoveRows({}, row, row);
    m_items.removeAt(row);
    endRemoveRows();
}

void JsonListModel::replaceItem(int row, const QJsonObject &item)
{
    if (row < 0 || row >= m_items.size())
        return;
    m_items.replace(row, item);
    Q_EMIT dataChanged(index(0), index(int(m_items.size()) - 1));
}

void JsonListModel::setErrorRow(int row, const QString &message)
{
    const int before = m_errorRow;
    m_errorRow = row;
    m_errorMessage = message;
    for (int r : {before, row})
        if (r >= 0 && r < m_items.size())
            Q_EMIT dataChanged(index(r), index(r), {Qt::ForegroundRole, Qt::ToolTipRole});
}

int JsonListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_items.size());
}

QVariant JsonListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonValue value = m_items.at(index.row());
    const QJsonObject object = value.toObject();
    switch (role) {
    case Qt::DisplayRole:
        if (!value.isObject())
            return QString::fromUtf8(QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact)).mid(1).chopped(1); // no [ ]
        return m_label ? m_label(object, index.row()) : object.value(QStringLiteral("name")).toString();
    case Qt::ToolTipRole:
        if (index.row() == m_errorRow)
            return m_errorMessage;
        return m_toolTip ? m_toolTip(object, index.row()) : QVariant();
    case Qt::ForegroundRole:
        return index.row() == m_errorRow ? QVariant(QBrush(QColor(0xd9, 0x36, 0x3e))) : QVariant();
    case ItemRole:
        return object;
    default:
        return {};
    }
}

Qt::ItemFlags JsonListModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
}

bool JsonListModel::moveRows(const QModelIndex &sourceParent, int sourceRow, int count, const QModelIndex &destinationParent,
                             int destinationChild)
{
    const int n = int(m_items.size());
    if (sourceParent.isValid() || destinationParent.isValid() || count < 1 || sourceRow < 0 || sourceRow + count > n ||
        destinationChild < 0 || destinationChild > n || (destinationChild >= sourceRow && destinationChild <= sourceRow + count))
        return false;
    if (!beginMoveRows({}, sourceRow, sourceRow + count - 1, {}, destinationChild))
        return false;
    QJsonArray moved;
    for (int i = 0; i < count; ++i)
        moved.append(m_items.takeAt(sourceRow));
    const int insertAt = destinationChild > sourceRow ? destinationChild - count : destinationChild;
    for (int i = 0; i < count; ++i)
        m_items.insert(insertAt + i, moved.at(i));
    endMoveRows();
    return true;
}

} // namespace sluice::widgets
