// The list + form editor. The selection survives a re-set (same row), so editing a layer's
// parameter and getting the model back keeps that layer open.
#include "model/object_list_editor.h"

#include "inspector/param_form.h"
#include "model/json_list_model.h"

#include <QHBoxLayout>
#include <QListView>
#include <QMenu>
#include <QToolButton>
#include <QVBoxLayout>

namespace sluice::widgets {

ObjectListEditor::ObjectListEditor(Behaviour behaviour, QWidget *parent)
    : QWidget(parent), m_behaviour(std::move(behaviour)), m_model(new JsonListModel(this)), m_view(new QListView),
      m_form(new ParamForm), m_add(new QToolButton), m_remove(new QToolButton), m_up(new QToolButton), m_down(new QToolButton)
{
    m_model->setLabeler(
        [this](const QJsonObject &item, int row) {
            return m_behaviour.label ? m_behaviour.label(item, row, m_model->items()) : item.value(QStringLiteral("name")).toString();
        },
        [this](const QJsonObject &item, int row) {
            return m_behaviour.toolTip ? m_behaviour.toolTip(item, row, m_model->items()) : QString();
        });
    m_view->setModel(m_model);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);

    const QString noun = m_behaviour.noun;
    m_add->setText(QStringLiteral("+"));
    m_add->setToolTip(tr("Add a %1").arg(noun));
    m_remove->setText(QStringLiteral("\u2212"));
    m_remove->setToolTip(tr("Remove the selected %1").arg(noun));
    m_up->setText(QStringLiteral("\u2191"));
    m_up->setToolTip(tr("Move the selected %1 up").arg(noun));
    m_down->setText(QStringLiteral("\u2193"));
    m_down->setToolTip(tr("Move the selected %1 down").arg(noun));
    if (!m_behaviour.addChoices.isEmpty()) {
        auto *menu = new QMenu(m_add);
        for (const QString &choice : m_behaviour.addChoices)
            menu->addAction(choice, this, [this, choice] { addItem(choice); });
        m_add->setMenu(menu);
        m_add->setPopupMode(QToolButton::InstantPopup);
    } else {
        connect(m_add, &QToolButton::clicked, this, [this] { addItem(); });
    }
    connect(m_remove, &QToolButton::clicked, this, &ObjectListEditor::removeCurrent);
    connect(m_up, &QToolButton::clicked, this, [this] { moveCurrent(-1); });
    connect(m_down, &QToolButton::clicked, this, [this] { moveCurrent(+1); });

    auto *buttons = new QHBoxLayout;
    for (QToolButton *b : {m_add, m_remove, m_up, m_down})
        buttons->addWidget(b);
    buttons->addStretch(1);
    auto *left = new QVBoxLayout;
    left->addWidget(m_view, 1);
    left->addLayout(buttons);
    auto *layout = new QHBoxLayout(this);
    layout->addLayout(left, 2);
    layout->addWidget(m_form, 3, Qt::AlignTop);

    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this] {
        showCurrent();
        updateButtons();
    });
    connect(m_form, &ParamForm::edited, this, &ObjectListEditor::edited);
    updateButtons();
}

const QJsonArray &ObjectListEditor::items() const
{
    return m_model->items();
}

void ObjectListEditor::setItems(const QJsonArray &items)
{
    const int row = currentRow();
    m_model->setItems(items);
    setCurrentRow(std::min(row < 0 ? 0 : row, int(items.size()) - 1));
    showCurrent();
    updateButtons();
}

void ObjectListEditor::setContext(const ParamContext &context)
{
    m_context = context;
    showCurrent();
}

void ObjectListEditor::setErrors(int row, const QMap<QString, QString> &errorsByParam)
{
    m_errorRow = row;
    m_errors = errorsByParam;
    m_model->setErrorRow(errorsByParam.isEmpty() ? -1 : row, errorsByParam.isEmpty() ? QString() : errorsByParam.first());
    m_form->setErrors(row == currentRow() ? m_errors : QMap<QString, QString>());
}

int ObjectListEditor::currentRow() const
{
    const QModelIndex current = m_view->currentIndex();
    return current.isValid() ? current.row() : -1;
}

void ObjectListEditor::setCurrentRow(int row)
{
    if (row < 0 || row >= m_model->rowCount())
        m_view->setCurrentIndex({});
    else
        m_view->setCurrentIndex(m_model->index(row));
}

void ObjectListEditor::showCurrent()
{
    const int row = currentRow();
    if (row < 0) {
        m_form->setSpecs({}, m_context);
        return;
    }
    const QJsonObject item = m_model->item(row);
    m_form->setSpecs(m_behaviour.specs ? m_behaviour.specs(item, row, m_model->items()) : QList<ParamSpec>(), m_context);
    m_form->setValues(m_behaviour.values ? m_behaviour.values(item) : item);
    m_form->setErrors(row == m_errorRow ? m_errors : QMap<QString, QString>());
}

void ObjectListEditor::edited(const QString &key, const QJsonValue &value)
{
    const int row = currentRow();
    if (row < 0)
        return;
    QJsonObject item = m_model->item(row);
    if (m_behaviour.apply) {
        m_behaviour.apply(item, key, value);
    } else if (value.isUndefined()) {
        item.remove(key);
    } else {
        item.insert(key, value);
    }
    m_model->replaceItem(row, item);
    showCurrent(); // another class or loss changes the form
    Q_EMIT itemsEdited(m_model->items());
}

void ObjectListEditor::addItem(const QString &choice)
{
    const QJsonObject item = m_behaviour.make ? m_behaviour.make(choice, m_model->items()) : QJsonObject();
    const int row = currentRow() < 0 ? m_model->rowCount() : currentRow() + 1; // after the selected one
    m_model->insertItem(row, item);
    setCurrentRow(row);
    Q_EMIT itemsEdited(m_model->items());
}

void ObjectListEditor::removeCurrent()
{
    const int row = currentRow();
    if (row < 0)
        return;
    m_model->removeItem(row);
    setCurrentRow(std::min(row, m_model->rowCount() - 1));
    Q_EMIT itemsEdited(m_model->items());
}

void ObjectListEditor::moveCurrent(int delta)
{
    const int row = currentRow();
    const int target = row + delta;
    if (row < 0 || target < 0 || target >= m_model->rowCount())
        return;
    // moveRows' destination is the row before which the item lands.
    if (!m_model->moveRow({}, row, {}, delta > 0 ? target + 1 : target))
        return;
    setCurrentRow(target);
    Q_EMIT itemsEdited(m_model->items());
}

void ObjectListEditor::updateButtons()
{
    const int row = currentRow();
    m_remove->setEnabled(row >= 0);
    m_up->setEnabled(row > 0);
    m_down->setEnabled(row >= 0 && row + 1 < m_model->rowCount());
}

} // namespace sluice::widgets
