#include "gui/compare_runs_dialog.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace sluice::gui {

namespace {
enum Column { RunColumn, StartedColumn, KindColumn, StatusColumn, LossColumn, ColumnCount };
constexpr int FolderRole = Qt::UserRole;
} // namespace

CompareRunsDialog::CompareRunsDialog(const QList<widgets::RunSummary> &runs, const QStringList &overlaid, QWidget *parent) : QDialog(parent)
{
    setObjectName(QStringLiteral("compareRuns"));
    setWindowTitle(tr("Compare With Past Runs"));
    auto *hint = new QLabel(tr("Checked runs are drawn faded behind the current run; uncheck one to take it off the charts."), this);
    hint->setWordWrap(true);
    m_list = new QTreeWidget(this);
    m_list->setObjectName(QStringLiteral("runList"));
    m_list->setColumnCount(ColumnCount);
    m_list->setHeaderLabels({tr("Run"), tr("Started"), tr("Kind"), tr("Status"), tr("Final loss")});
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setSortingEnabled(false); // newest first, as given
    for (const widgets::RunSummary &run : runs) {
        auto *item = new QTreeWidgetItem(m_list);
        item->setText(RunColumn, run.name);
        item->setText(StartedColumn, QLocale().toString(run.started, QLocale::ShortFormat));
        item->setText(KindColumn, run.kind);
        item->setText(StatusColumn, run.status);
        item->setText(LossColumn, run.finalLoss ? QLocale().toString(*run.finalLoss, 'g', 5) : QStringLiteral("—"));
        item->setTextAlignment(LossColumn, Qt::AlignRight | Qt::AlignVCenter);
        item->setData(RunColumn, FolderRole, run.folder);
        item->setToolTip(RunColumn, run.folder);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(RunColumn, overlaid.contains(run.folder) ? Qt::Checked : Qt::Unchecked);
    }
    for (int c = 0; c < ColumnCount; ++c)
        m_list->resizeColumnToContents(c);
    // A double-click toggles the run, as a click on its box does.
    connect(m_list, &QTreeWidget::itemDoubleClicked, this, [](QTreeWidgetItem *item) {
        item->setCheckState(RunColumn, item->checkState(RunColumn) == Qt::Checked ? Qt::Unchecked : Qt::Checked);
    });
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(hint);
    layout->addWidget(m_list, 1);
    layout->addWidget(buttons);
    resize(640, 360);
}

QStringList CompareRunsDialog::checkedFolders() const
{
    QStringList folders;
    for (int i = 0; i < m_list->topLevelItemCount(); ++i)
        if (const QTreeWidgetItem *item = m_list->topLevelItem(i); item->checkState(RunColumn) == Qt::Checked)
            folders << item->data(RunColumn, FolderRole).toString();
    return folders;
}

} // namespace sluice::gui
