#pragma once
// Editors that pick rather than type: bools (a check box), one of a list (enums, dtypes,
// features; a combo), several of a list (features, metrics, a layer's inputs; a checkable list
// that keeps the order things were picked in, which Concatenate's inputs depend on).
//
// Threading: widgets; GUI thread only.

#include "inspector/param_editor.h"

class QCheckBox;
class QComboBox;
class QListWidget;
class QListWidgetItem;

namespace sluice::widgets {

class BoolEditor : public ParamEditor
{
    Q_OBJECT
public:
    BoolEditor(const ParamSpec &spec, QWidget *parent);
    QWidget *inputWidget() const override;
    QCheckBox *checkBox() const { return m_box; }

protected:
    void showValue(const QJsonValue &value) override;

private:
    QCheckBox *m_box;
};

class ChoiceEditor : public ParamEditor
{
    Q_OBJECT
public:
    ChoiceEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent);
    QWidget *inputWidget() const override;
    QComboBox *comboBox() const { return m_combo; }

protected:
    void showValue(const QJsonValue &value) override;

private:
    void picked(const QString &text);
    QString choiceText(const QString &choice) const; // "" shows as "(none)"
    QString choiceAt(int index) const;

    QComboBox *m_combo;
    QStringList m_choices;
    bool m_free; // a feature: any name may be typed
};

class MultiChoiceEditor : public ParamEditor
{
    Q_OBJECT
public:
    MultiChoiceEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent);
    QWidget *inputWidget() const override;
    QListWidget *list() const { return m_list; }

protected:
    void showValue(const QJsonValue &value) override;

private:
    void itemToggled(QListWidgetItem *item);
    QListWidgetItem *addItem(const QString &name, bool known);

    QListWidget *m_list;
    QStringList m_choices;
    QStringList m_picked; // in the order they were picked
};

} // namespace sluice::widgets
