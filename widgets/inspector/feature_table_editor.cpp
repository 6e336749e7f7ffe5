#include "inspector/feature_table_editor.h"

#include "inspector/json_dialog.h"
#include "inspector/text_editors.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonObject>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace sluice::widgets {

namespace {

enum Column { NameColumn, FilesColumn };

// A cell's text as the project holds it: one path or pattern, or a list for "a; b".
QJsonValue filesValue(const QString &text)
{
    QStringList parts;
    for (const QString &part : text.split(QLatin1Char(';')))
        if (!part.trimmed().isEmpty())
            parts << part.trimmed();
    if (parts.size() == 1)
        return parts.first();
    return QJsonArray::fromStringList(parts);
}

QString filesText(const QJsonValue &value)
{
    if (value.isArray()) {
        QStringList parts;
        for (const QJsonValue &v : value.toArray())
            parts << v.toString();
        return parts.join(QStringLiteral("; "));
    }
    return value.toString();
}

} // namespace

FeatureTableEditor::FeatureTableEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent)
    : ParamEditor(spec, parent), m_folder(context.projectFolder)
{
    m_table = new QTableWidget(0, 2, this);
    m_table->setObjectName(QStringLiteral("featureTable"));
    m_table->setHorizontalHeaderLabels({tr("Feature"), tr("File, glob or list (a; b)")});
    m_table->horizontalHeader()->setSectionResizeMode(NameColumn, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setMinimumHeight(110);
    connect(m_table, &QTableWidget::itemChanged, this, [this] {
        if (!m_filling)
            commitTable();
    });

    auto button = [this](const QString &name, const QString &text, const QString &tip) {
        auto *b = new QToolButton(this);
        b->setObjectName(name);
        b->setText(text);
        b->setToolTip(tip);
        return b;
    };
    m_browse = button(QStringLiteral("browseFeatures"), tr("Browse…"), tr("Add .npy files: a feature each, named after its file"));
    m_remove = button(QStringLiteral("removeFeatures"), tr("Remove"), tr("Remove the selected features"));
    m_json = button(QStringLiteral("featuresJson"), tr("{ }"), tr("Edit as JSON"));
    connect(m_browse, &QToolButton::clicked, this, &FeatureTableEditor::browse);
    connect(m_remove, &QToolButton::clicked, this, &FeatureTableEditor::removeSelected);
    connect(m_json, &QToolButton::clicked, this, &FeatureTableEditor::editAsJson);

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_browse);
    buttons->addWidget(m_remove);
    buttons->addStretch(1);
    buttons->addWidget(m_json);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_table);
    layout->addLayout(buttons);
}

QWidget *FeatureTableEditor::inputWidget() const { return m_table; }

void FeatureTableEditor::showValue(const QJsonValue &value)
{
    m_filling = true;
    m_table->setRowCount(0);
    const QJsonObject features = value.toObject();
    for (auto it = features.begin(); it != features.end(); ++it) {
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        m_table->setItem(row, NameColumn, new QTableWidgetItem(it.key()));
        m_table->setItem(row, FilesColumn, new QTableWidgetItem(filesText(it.value())));
    }
    // An empty row to type a feature into.
    m_table->insertRow(m_table->rowCount());
    m_table->setItem(m_table->rowCount() - 1, NameColumn, new QTableWidgetItem);
    m_table->setItem(m_table->rowCount() - 1, FilesColumn, new QTableWidgetItem);
    m_filling = false;
}

QJsonObject FeatureTableEditor::tableValue() const
{
    QJsonObject features;
    for (int row = 0; row < m_table->rowCount(); ++row) {
        const QTableWidgetItem *name = m_table->item(row, NameColumn), *files = m_table->item(row, FilesColumn);
        if (!name || !files || name->text().trimmed().isEmpty() || files->text().trimmed().isEmpty())
            continue;
        features.insert(name->text().trimmed(), filesValue(files->text()));
    }
    return features;
}

void FeatureTableEditor::commitTable()
{
    const QJsonObject features = tableValue();
    commit(features.isEmpty() ? QJsonValue(QJsonValue::Undefined) : QJsonValue(features));
    // A row being filled (a name, no file yet) stays as typed; an empty row is kept at the end
    // for the next feature. After this event: the edited cell's editor is still closing.
    QTimer::singleShot(0, this, [this] {
        const int last = m_table->rowCount() - 1;
        const bool lastEmpty = last >= 0 && m_table->item(last, NameColumn) && m_table->item(last, NameColumn)->text().isEmpty() &&
                               m_table->item(last, FilesColumn) && m_table->item(last, FilesColumn)->text().isEmpty();
        if (lastEmpty)
            return;
        m_filling = true;
        m_table->insertRow(last + 1);
        m_table->setItem(last + 1, NameColumn, new QTableWidgetItem);
        m_table->setItem(last + 1, FilesColumn, new QTableWidgetItem);
        m_filling = false;
    });
}

void FeatureTableEditor::addFiles(const QStringList &paths)
{
    QJsonObject features = tableValue();
    for (const QString &path : paths) {
        QString name = QFileInfo(path).completeBaseName();
        for (int n = 2; features.contains(name); ++n)
            name = QStringLiteral("%1_%2").arg(QFileInfo(path).completeBaseName()).arg(n);
        features.insert(name, PathEditor::projectRelative(path, m_folder));
    }
    commit(features.isEmpty() ? QJsonValue(QJsonValue::Undefined) : QJsonValue(features));
    showValue(value());
}

void FeatureTableEditor::browse()
{
    const QStringList picked = QFileDialog::getOpenFileNames(this, tr("Add .npy Files as Features"), m_folder, tr("NumPy arrays (*.npy);;All files (*)"));
    if (!picked.isEmpty())
        addFiles(picked);
}

void FeatureTableEditor::removeSelected()
{
    QList<int> rows;
    for (const QModelIndex &index : m_table->selectionModel()->selectedRows())
        rows << index.row();
    std::sort(rows.begin(), rows.end(), std::greater<>());
    m_filling = true;
    for (int row : rows)
        m_table->removeRow(row);
    m_filling = false;
    const QJsonObject features = tableValue();
    commit(features.isEmpty() ? QJsonValue(QJsonValue::Undefined) : QJsonValue(features));
    showValue(value());
}

void FeatureTableEditor::editAsJson()
{
    JsonDialog dialog(spec(), value(), this);
    if (dialog.exec() == QDialog::Accepted) {
        commit(dialog.value());
        showValue(value());
    }
}

} // namespace sluice::widgets
