#pragma once
// Numbers: "int", "number", "int|null", "int|AUTOTUNE" (with an AUTOTUNE toggle beside the
// field) and seeds (empty: unseeded, with a dice button).
//
// Threading: widgets; GUI thread only.

#include "inspector/param_editor.h"

#include <QAbstractSpinBox>

class QCheckBox;
class QToolButton;

namespace sluice::widgets {

// A spin box whose text is free: arrows and the wheel step within the range, and what is typed
// is checked by parseParamText (so an out-of-range or empty entry can be explained, not silently
// corrected as QSpinBox does). Each step is a commit, as QSpinBox's valueChanged is: an owner
// that records edits for undo may merge consecutive ones of one parameter (QUndoCommand::mergeWith).
class NumberField : public QAbstractSpinBox
{
    Q_OBJECT
public:
    NumberField(const ParamSpec &spec, QWidget *parent);

    QString text() const;
    void setText(const QString &text);
    void setPlaceholderText(const QString &text);
    QLineEdit *textEdit() const { return lineEdit(); } // QAbstractSpinBox keeps it protected

    void stepBy(int steps) override;
    QValidator::State validate(QString &input, int &pos) const override;
    QSize sizeHint() const override;

Q_SIGNALS:
    void stepped(); // an arrow, PageUp/Down or the wheel changed the value: a commit

protected:
    StepEnabled stepEnabled() const override;
    void wheelEvent(QWheelEvent *event) override;

private:
    double current() const; // the shown value, else the default, else 0
    ParamSpec m_spec;
    bool m_integer;
};

class NumberEditor : public ParamEditor
{
    Q_OBJECT
public:
    NumberEditor(const ParamSpec &spec, QWidget *parent);
    QWidget *inputWidget() const override;
    NumberField *field() const { return m_field; }
    QCheckBox *autotuneToggle() const { return m_autotune; }
    QToolButton *diceButton() const { return m_dice; }

protected:
    void showValue(const QJsonValue &value) override;

private:
    void check();
    void commitTyped();
    void autotuneToggled(bool on);
    void rollDice();

    NumberField *m_field = nullptr;
    QCheckBox *m_autotune = nullptr; // int|AUTOTUNE only
    QToolButton *m_dice = nullptr;   // seeds only
};

} // namespace sluice::widgets
