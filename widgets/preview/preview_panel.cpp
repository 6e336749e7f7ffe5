#include "preview/preview_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace sluice::widgets {

PreviewPanel::PreviewPanel(QWidget *parent) : QWidget(parent)
{
    m_headline = new QLabel(tr("Select a stage and choose Run ▸ Preview Stage (F6) to see what it emits."), this);
    m_headline->setWordWrap(true);
    m_headline->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_table = new QTableWidget(this);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->horizontalHeader()->setStretchLastSection(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_headline);
    layout->addWidget(m_table, 1);
}

QString PreviewPanel::headline() const { return m_headline->text(); }

void PreviewPanel::showWaiting(const QString &node)
{
    m_headline->setText(tr("Taking the first elements of %1…").arg(node));
}

void PreviewPanel::showError(const QString &message)
{
    m_headline->setText(tr("<span style='color:#d22'>Preview failed: %1</span>").arg(message.toHtmlEscaped()));
    m_table->clear();
    m_table->setRowCount(0);
    m_table->setColumnCount(0);
}

void PreviewPanel::showPreview(const pipeline::StagePreview &preview)
{
    m_headline->setText(tr("<b>%1</b> emits %2%3")
                            .arg(QString::fromStdString(preview.node).toHtmlEscaped(), QString::fromStdString(preview.emits).toHtmlEscaped(),
                                 preview.ended ? tr(" — the pipeline ended after %1 elements").arg(preview.rows.size()) : QString()));
    m_table->clear();
    m_table->setColumnCount(int(preview.features.size()));
    m_table->setRowCount(int(preview.rows.size()));
    QStringList headers;
    for (std::size_t f = 0; f < preview.features.size(); ++f)
        headers << QStringLiteral("%1 (%2)").arg(QString::fromStdString(preview.features[f]), QString::fromStdString(preview.types[f]));
    m_table->setHorizontalHeaderLabels(headers);
    for (std::size_t r = 0; r < preview.rows.size(); ++r)
        for (std::size_t f = 0; f < preview.rows[r].size() && f < preview.features.size(); ++f) {
            const pipeline::PreviewCell &cell = preview.rows[r][f];
            auto *item = new QTableWidgetItem(QStringLiteral("%1  %2").arg(QString::fromStdString(cell.shape), QString::fromStdString(cell.values)));
            item->setToolTip(QStringLiteral("shape %1\n%2").arg(QString::fromStdString(cell.shape), QString::fromStdString(cell.values)));
            m_table->setItem(int(r), int(f), item);
        }
    m_table->resizeColumnsToContents();
}

} // namespace sluice::widgets
