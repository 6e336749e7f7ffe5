// Pickers. A value that is not among the choices (a feature the last build did not list, a name
// from a newer Sluice) is still shown, marked, so nothing in the file is hidden from the user.
#include "inspector/choice_editors.h"

#include "io/dtype.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLineEdit>
#include <QListWidget>

namespace sluice::widgets {
namespace {

QStringList dtypeNames()
{
    QStringList names;
    for (int t = int(DType::Bool); t <= int(DType::Float64); ++t)
        names << QString::fromLatin1(dtypeName(DType(t)).data(), qsizetype(dtypeName(DType(t)).size()));
    return names;
}

QHBoxLayout *bareLayout(QWidget *owner)
{
    auto *layout = new QHBoxLayout(owner);
    layout->setContentsMargins(0, 0, 0, 0);
    return layout;
}

} // namespace

BoolEditor::BoolEditor(const ParamSpec &spec, QWidget *parent) : ParamEditor(spec, parent), m_box(new QCheckBox(this))
{
    bareLayout(this)->addWidget(m_box);
    connect(m_box, &QCheckBox::toggled, this, [this](bool on) { commit(QJsonValue(on)); });
}

QWidget *BoolEditor::inputWidget() const
{
    return m_box;
}

void BoolEditor::showValue(const QJsonValue &value)
{
    const QSignalBlocker block(m_box);
    const bool on = value.isBool() ? value.toBool() : spec().defaultValue == QLatin1String("true");
    m_box->setChecked(on);
    m_box->setText(value.isUndefined() ? tr("%1 (default)").arg(on ? tr("true") : tr("false")) : (on ? tr("true") : tr("false")));
}

ChoiceEditor::ChoiceEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent)
    : ParamEditor(spec, parent), m_combo(new QComboBox(this)), m_free(spec.type == QLatin1String("feature"))
{
    bareLayout(this)->addWidget(m_combo, 1);
    m_combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_combo->setMinimumContentsLength(10);
    if (spec.type == QLatin1String("dtype"))
        m_choices = dtypeNames();
    else if (m_free)
        m_choices = context.features;
    else
        m_choices = choicesOf(spec.type);
    if (m_free) {
        m_combo->setEditable(true);
        m_combo->setInsertPolicy(QComboBox::NoInsert);
        connect(m_combo->lineEdit(), &QLineEdit::editingFinished, this, [this] { picked(m_combo->currentText().trimmed()); });
    }
    connect(m_combo, &QComboBox::activated, this, [this](int index) { picked(choiceAt(index)); });
}

QWidget *ChoiceEditor::inputWidget() const
{
    return m_combo;
}

QString ChoiceEditor::choiceText(const QString &choice) const
{
    return choice.isEmpty() ? tr("(none)") : choice;
}

QString ChoiceEditor::choiceAt(int index) const
{
    return index < 0 ? QString() : m_combo->itemData(index).toString();
}

void ChoiceEditor::showValue(const QJsonValue &value)
{
    const QSignalBlocker block(m_combo);
    m_combo->clear();
    for (const QString &c : m_choices)
        m_combo->addItem(choiceText(c), c);
    const QString shown = value.isString() ? value.toString() : value.isUndefined() ? spec().defaultValue : displayText(value);
    int index = m_combo->findData(shown);
    if (index < 0 && (!value.isUndefined() || !shown.isEmpty())) {
        // An editable combo copies a picked item's text into its line, which is then committed:
        // there the item's text must be the bare name.
        m_combo->addItem(m_free ? shown : tr("%1 (not known here)").arg(shown), shown);
        index = m_combo->count() - 1;
        m_combo->setItemData(index, tr("Not among the choices known here; kept as the project has it."), Qt::ToolTipRole);
    }
    m_combo->setCurrentIndex(index);
    if (m_free)
        m_combo->setEditText(value.isString() ? value.toString() : QString());
    m_combo->setPlaceholderText(placeholderFor(spec()));
    if (m_free && m_combo->lineEdit())
        m_combo->lineEdit()->setPlaceholderText(tr("a feature"));
}

void ChoiceEditor::picked(const QString &text)
{
    // Re-picking the default of an unset parameter changes nothing.
    if (value().isUndefined() && !spec().defaultValue.isEmpty() && text == spec().defaultValue)
        return;
    if (m_free && text.isEmpty()) {
        commit(QJsonValue::Undefined);
        return;
    }
    commit(QJsonValue(text));
}

MultiChoiceEditor::MultiChoiceEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent)
    : ParamEditor(spec, parent), m_list(new QListWidget(this)),
      m_choices(spec.type == QLatin1String("feature|list") ? context.features : choicesOf(spec.type))
{
    bareLayout(this)->addWidget(m_list, 1);
    m_list->setSelectionMode(QAbstractItemView::NoSelection);
    connect(m_list, &QListWidget::itemChanged, this, &MultiChoiceEditor::itemToggled);
}

QWidget *MultiChoiceEditor::inputWidget() const
{
    return m_list;
}

QListWidgetItem *MultiChoiceEditor::addItem(const QString &name, bool known)
{
    auto *item = new QListWidgetItem(known ? name : tr("%1 (not known here)").arg(name), m_list);
    item->setData(Qt::UserRole, name);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
    item->setCheckState(m_picked.contains(name) ? Qt::Checked : Qt::Unchecked);
    item->setToolTip(toolTip());
    return item;
}

void MultiChoiceEditor::showValue(const QJsonValue &value)
{
    const QSignalBlocker block(m_list);
    m_picked.clear();
    if (value.isString())
        m_picked << value.toString();
    for (const QJsonValue &v : value.toArray())
        m_picked << v.toString();
    m_list->clear();
    for (const QString &c : m_choices)
        addItem(c, true);
    for (const QString &p : m_picked)
        if (!m_choices.contains(p))
            addItem(p, false);
    // Tall enough for a few rows, not for a long list: it scrolls.
    const int rows = std::clamp(int(m_list->count()), 1, 5);
    m_list->setFixedHeight(rows * m_list->sizeHintForRow(0) + 2 * m_list->frameWidth() + 2);
}

void MultiChoiceEditor::itemToggled(QListWidgetItem *item)
{
    const QString name = item->data(Qt::UserRole).toString();
    m_picked.removeAll(name);
    if (item->checkState() == Qt::Checked)
        m_picked << name;
    if (m_picked.isEmpty()) {
        commit(QJsonValue::Undefined);
        return;
    }
    commit(QJsonArray::fromStringList(m_picked));
}

} // namespace sluice::widgets
