#pragma once
// The stage palette's model: every pipeline op from core's op registry, grouped as `sluice ops`
// groups them (by OpInfo::group, in registry order), with tooltips built from the ops' own
// documentation and drag data the canvas accepts. Nothing here is written by hand per op: a new
// op registered in core appears in the palette with its tooltip.
//
// Threading: a Qt item model; create and use it in the GUI thread only. The registry it reads is
// immutable after its first use.

#include <QAbstractItemModel>
#include <QString>
#include <QStringList>

#include <vector>

class QMimeData;

namespace sluice::pipeline {
struct OpInfo;
}

namespace sluice::widgets {

class StagePaletteModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Role {
        OpNameRole = Qt::UserRole + 1, // QString: the op's registry name ("shuffle"); empty on a group
        GroupRole,                     // QString: the registry group ("sources"), on groups and ops
        SummaryRole,                   // QString: the op's one-paragraph documentation, plain text
        IsGroupRole,                   // bool
    };

    static constexpr const char *mimeType = "application/x-sluice-stage";

    explicit StagePaletteModel(QObject *parent = nullptr); // every op in pipeline::allOps()
    StagePaletteModel(const std::vector<pipeline::OpInfo> &ops, QObject *parent = nullptr);

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QHash<int, QByteArray> roleNames() const override;

    QStringList mimeTypes() const override;
    QMimeData *mimeData(const QModelIndexList &indexes) const override;
    Qt::DropActions supportedDragActions() const override;

    // The op names a palette drag carries (one per line in the "application/x-sluice-stage"
    // payload); empty when the data is not a palette drag. The canvas's drop side uses this.
    static QStringList stageNames(const QMimeData *data);

    // The rich-text tooltip of one op: its documentation and a table of its parameters.
    static QString toolTip(const pipeline::OpInfo &op);

private:
    struct Stage
    {
        QString name;
        QString summary;
        QString toolTip;
    };
    struct Group
    {
        QString key;   // "sources"
        QString title; // "Sources"
        std::vector<Stage> stages;
    };

    const Group *groupOf(const QModelIndex &index) const;
    const Stage *stageOf(const QModelIndex &index) const;

    std::vector<Group> m_groups;
};

} // namespace sluice::widgets
