#pragma once
// The palette's search box behind a proxy: a stage stays when the text occurs, ignoring case, in
// its name, its documentation or its group's title; a group stays while any of its stages does
// (recursive filtering), so "shuf" leaves shuffle and global_shuffle under Transformations.
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

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    QString m_searchText;
};

} // namespace sluice::widgets
