#include "stage_palette_filter.h"

#include "stage_palette_model.h"

#include <QRegularExpression>

namespace sluice::widgets {

StagePaletteFilter::StagePaletteFilter(QObject *parent)
    : QSortFilterProxyModel(parent)
{
    setRecursiveFilteringEnabled(true);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
}

void StagePaletteFilter::setSearchText(const QString &text)
{
    m_searchText = text.trimmed();
    setFilterFixedString(m_searchText);
}

QString StagePaletteFilter::searchText() const
{
    return m_searchText;
}

bool StagePaletteFilter::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    const QRegularExpression re = filterRegularExpression();
    if (re.pattern().isEmpty())
        return true;
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    const QModelIndex group = sourceParent.isValid() ? sourceParent : index;
    // A group's title matching keeps all of its stages ("perf" lists the performance stages);
    // otherwise a group is kept only through a matching stage (recursive filtering).
    if (group.data(Qt::DisplayRole).toString().contains(re))
        return true;
    if (!sourceParent.isValid())
        return false;
    return index.data(StagePaletteModel::OpNameRole).toString().contains(re) ||
           index.data(StagePaletteModel::SummaryRole).toString().contains(re);
}

} // namespace sluice::widgets
