#pragma once
// One parameter's editor: shows a value (or, when the parameter is not set, its default as a
// placeholder), checks what is typed, and emits `committed` only on a commit (Enter, focus out,
// a toggle, a pick) with a valid value that differs from the one shown. It never changes a
// project; the owner turns `committed` into an edit and calls setValue() with the outcome.
//
// Threading: a widget; GUI thread only.

#include "inspector/param_spec.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QWidget>

namespace sluice::widgets {

class ParamEditor : public QWidget
{
    Q_OBJECT
public:
    ParamEditor(ParamSpec spec, QWidget *parent);

    const ParamSpec &spec() const { return m_spec; }
    QJsonValue value() const { return m_value; }

    // Shows `value` (Undefined: not set, the default shows). Never emits.
    void setValue(const QJsonValue &value);
    // The live check's verdict: empty when what is typed is valid.
    QString problem() const { return m_problem; }
    // The widget that takes the typing or the click: tooltips, focus and tests go there.
    virtual QWidget *inputWidget() const = 0;
    // All parameters of the node or item, for an editor that reads another one (a source's spec
    // table reads the files its path parameter names). Never emits.
    virtual void setNodeValues(const QJsonObject &values) { Q_UNUSED(values); }

Q_SIGNALS:
    void committed(const QJsonValue &value); // Undefined: remove the parameter
    void problemChanged(const QString &message);

protected:
    virtual void showValue(const QJsonValue &value) = 0;
    // Emits `committed` when `value` differs from the shown one, and takes it as shown (so that a
    // second editingFinished, focus out after Enter, does not emit it again).
    void commit(const QJsonValue &value);
    // Red frame and a message while the input is invalid; cleared with an empty message.
    void setProblem(const QString &message);

private:
    ParamSpec m_spec;
    QJsonValue m_value = QJsonValue::Undefined;
    QString m_problem;
};

// The editor for spec.type: numbers (with AUTOTUNE toggle, seed dice), bools, enums, dtypes,
// features, paths, strings, and a JSON editor for lists, objects and any unknown type.
ParamEditor *createParamEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent);

} // namespace sluice::widgets
