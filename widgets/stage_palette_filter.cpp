#include "stage_palette_filter.h"

#include "stage_palette_model.h"

#include <QRegularExpression>

#include <algorithm>

namespace sluice::widgets {

StagePaletteFilter::StagePaletteFilter(QObject *parent)
    : QSortFilterProxyModel(parent)
{
    setRecursiveFilteringEnabled(true);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
    sort(0); // by lessThan: registry order until there is a search text
}

void StagePaletteFilter::setSearchText(const QString &text)
{
    m_searchText = text.trimmed();
    setFilterFixedString(m_searchText);
    invalidate(); // the ranks changed with the text
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

int StagePaletteFilter::matchRank(const QModelIndex &sourceIndex) const
{
    const QString name = sourceIndex.data(StagePaletteModel::OpNameRole).toString();
    if (m_searchText.isEmpty() || name.isEmpty())
        return 3;
    if (name.compare(m_searchText, Qt::CaseInsensitive) == 0)
        return 0;
    if (name.startsWith(m_searchText, Qt::CaseInsensitive))
        return 1;
    return name.contains(m_searchText, Qt::CaseInsensitive) ? 2 : 3;
}

bool StagePaletteFilter::lessThan(const QModelIndex &left, const QModelIndex &right) const
{
    const auto rank = [this](const QModelIndex &index) {
        if (index.parent().isValid())
            return matchRank(index);
        int best = 3; // a group: its best stage that the filter keeps
        for (int r = 0; r < sourceModel()->rowCount(index); ++r)
            if (filterAcceptsRow(r, index))
                best = std::min(best, matchRank(sourceModel()->index(r, 0, index)));
        return best;
    };
    const int a = rank(left), b = rank(right);
    return a != b ? a < b : left.row() < right.row();
}

QModelIndex StagePaletteFilter::bestMatch() const
{
    QModelIndex best;
    int bestRank = 4;
    for (int g = 0; g < rowCount(); ++g) {
        const QModelIndex group = index(g, 0);
        for (int r = 0; r < rowCount(group); ++r) {
            const QModelIndex stage = index(r, 0, group);
            if (const int rank = matchRank(mapToSource(stage)); rank < bestRank) {
                best = stage;
                bestRank = rank;
            }
        }
    }
    return best;
}

} // namespace sluice::widgets
