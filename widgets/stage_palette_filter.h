#pragma once
// The palette's search box behind a proxy: a stage stays when the text occurs, ignoring case, in
// its name, its documentation or its group's title; a group stays while any of its stages does
// (recursive filtering), so "shuf" leaves shuffle and global_shuffle under Transformations.
// While searching, the best matches come first (KNIME's node repository does the same): the
// stage named exactly so, then names that begin with the text, names that contain it, and last
// stages found through their documentation or group; groups follow their best stage.
//
// Threading: GUI thread only, like the model it filters.

#include <QSortFilterProxyModel>

namespace sluice::widgets {

class StagePaletteFilter : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    explicit StagePaletteFilter(QObject *parent = nullptr);

    // The search box's text, taken literally (no wildcards or regular expressions).
    void setSearchText(const QString &text);
    QString searchText() const;
    // The stage Enter in the search box adds: the best match, the first of equals; invalid when
    // nothing matches.
    QModelIndex bestMatch() const;
    // 0 exact name, 1 prefix, 2 name contains the text, 3 anything else (no text: all 3).
    int matchRank(const QModelIndex &sourceIndex) const;

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;

private:
    QString m_searchText;
};

} // namespace sluice::widgets
