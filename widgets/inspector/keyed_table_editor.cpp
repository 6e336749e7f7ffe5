#include "inspector/keyed_table_editor.h"

#include "inspector/json_dialog.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace sluice::widgets {

KeyedTableEditor::KeyedTableEditor(const ParamSpec &spec, const QStringList &headers, const Names &names, QWidget *parent)
    : ParamEditor(spec, parent)
{
    m_table = new QTableWidget(0, int(headers.size()), this);
    m_table->setObjectName(names.table);
    m_table->setHorizontalHeaderLabels(headers);
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
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
    m_fill = button(names.fill, names.fillText, names.fillTip);
    m_remove = button(names.remove, tr("Remove"), tr("Remove the selected rows"));
    m_json = button(names.json, tr("{ }"), tr("Edit as JSON"));
    connect(m_fill, &QToolButton::clicked, this, [this] { fill(); });
    connect(m_remove, &QToolButton::clicked, this, &KeyedTableEditor::removeSelected);
    connect(m_json, &QToolButton::clicked, this, &KeyedTableEditor::editAsJson);

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_fill);
    buttons->addWidget(m_remove);
    buttons->addStretch(1);
    buttons->addWidget(m_json);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_table);
    layout->addLayout(buttons);
}

QWidget *KeyedTableEditor::inputWidget() const { return m_table; }

QString KeyedTableEditor::cellText(int row, int column) const
{
    const QTableWidgetItem *item = m_table->item(row, column);
    return item ? item->text().trimmed() : QString();
}

void KeyedTableEditor::setCellText(int row, int column, const QString &text) { m_table->setItem(row, column, new QTableWidgetItem(text)); }

QComboBox *KeyedTableEditor::setCellChoice(int row, int column, const QStringList &choices, const QString &current)
{
    auto *combo = new QComboBox;
    combo->addItems(choices);
    if (!choices.contains(current) && !current.isEmpty())
        combo->addItem(current); // shown as the project holds it; the builder says what is wrong
    combo->setCurrentText(current.isEmpty() ? choices.value(0) : current);
    connect(combo, &QComboBox::currentTextChanged, this, [this] {
        if (!m_filling)
            commitTable();
    });
    m_table->setCellWidget(row, column, combo);
    return combo;
}

QString KeyedTableEditor::cellChoice(int row, int column) const
{
    const auto *combo = qobject_cast<QComboBox *>(m_table->cellWidget(row, column));
    return combo ? combo->currentText() : QString();
}

void KeyedTableEditor::appendRow(const QString &key, const QJsonValue &value)
{
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    setCellText(row, 0, key);
    fillRow(row, value);
}

bool KeyedTableEditor::rowIsBlank(int row) const
{
    for (int column = 0; column < m_table->columnCount(); ++column)
        if (!m_table->cellWidget(row, column) && !cellText(row, column).isEmpty())
            return false;
    return true;
}

void KeyedTableEditor::showValue(const QJsonValue &value)
{
    m_filling = true;
    m_table->setRowCount(0);
    const QJsonObject object = toObject(value);
    for (auto it = object.begin(); it != object.end(); ++it)
        appendRow(it.key(), it.value());
    appendRow({}, QJsonValue::Undefined); // an empty row to type the next key into
    m_filling = false;
}

QJsonObject KeyedTableEditor::tableValue() const
{
    QJsonObject object;
    for (int row = 0; row < m_table->rowCount(); ++row) {
        const QString key = cellText(row, 0);
        if (key.isEmpty())
            continue;
        if (const std::optional<QJsonValue> v = rowValue(row))
            object.insert(key, *v);
    }
    return object;
}

void KeyedTableEditor::setTableValue(const QJsonObject &object)
{
    commit(object.isEmpty() ? QJsonValue(QJsonValue::Undefined) : fromObject(object));
    showValue(value());
}

void KeyedTableEditor::commitTable()
{
    for (int row = 0; row < m_table->rowCount(); ++row) {
        if (const QString problem = rowProblem(row); !problem.isEmpty() && !cellText(row, 0).isEmpty()) {
            setProblem(problem);
            return;
        }
    }
    setProblem({});
    const QJsonObject object = tableValue();
    commit(object.isEmpty() ? QJsonValue(QJsonValue::Undefined) : fromObject(object));
    // A row being filled (a key, no value yet) stays as typed, and a blank row is kept at the
    // end for the next key. After this event: the edited cell's editor is still closing.
    QTimer::singleShot(0, this, [this] {
        const int last = m_table->rowCount() - 1;
        if (last >= 0 && rowIsBlank(last))
            return;
        m_filling = true;
        appendRow({}, QJsonValue::Undefined);
        m_filling = false;
    });
}

void KeyedTableEditor::removeSelected()
{
    QList<int> rows;
    for (const QModelIndex &index : m_table->selectionModel()->selectedRows())
        rows << index.row();
    std::sort(rows.begin(), rows.end(), std::greater<>());
    m_filling = true;
    for (int row : rows)
        m_table->removeRow(row);
    m_filling = false;
    setTableValue(tableValue());
}

void KeyedTableEditor::editAsJson()
{
    JsonDialog dialog(spec(), value(), this);
    if (dialog.exec() == QDialog::Accepted) {
        commit(dialog.value());
        showValue(value());
    }
}

} // namespace sluice::widgets
