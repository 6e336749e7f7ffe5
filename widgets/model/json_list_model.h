#pragma once
// A list model over a JSON array of objects (model inputs, layers, outputs): one row per object,
// labelled by a function the owner gives. Rows move with beginMoveRows, so a view keeps its
// selection on reordering.
//
// Threading: a Qt item model; GUI thread only.

#include <QAbstractListModel>
#include <QJsonArray>
#include <QJsonObject>

#include <functional>

namespace sluice::widgets {

class JsonListModel : public QAbstractListModel
{
    Q_OBJECT
public:
    enum Role { ItemRole = Qt::UserRole + 1 }; // QJsonObject: the row's object

    using Labeler = std::function<QString(const QJsonObject &item, int row)>;

    explicit JsonListModel(QObject *parent = nullptr);

    void setLabeler(Labeler label, Labeler toolTip = {});
    // Same length: rows changed in place (dataChanged); else a reset.
    void setItems(const QJsonArray &items);
    const QJsonArray &items() const { return m_items; }
    QJsonObject item(int row) const;

    void insertItem(int row, const QJsonObject &item);
    void removeItem(int row);
    void replaceItem(int row, const QJsonObject &item);
    // The row a check complained about, drawn in red with the message as its tooltip; -1: none.
    void setErrorRow(int row, const QString &message);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    bool moveRows(const QModelIndex &sourceParent, int sourceRow, int count, const QModelIndex &destinationParent,
                  int destinationChild) override;

private:
    QJsonArray m_items;
    Labeler m_label;
    Labeler m_toolTip;
    int m_errorRow = -1;
    QString m_errorMessage;
};

} // namespace sluice::widgets
