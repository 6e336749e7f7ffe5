#pragma once
// A form of parameter editors, one row each: label (doc as tooltip), editor, "reset to
// default", and under it a message — the live check's, else the builder's error for that
// parameter. Used by the inspector for a node and by the model panel for layers, outputs and
// the training object: whatever holds its parameters in one JSON object.
//
// Threading: a widget; GUI thread only.

#include "inspector/param_spec.h"

#include <QJsonObject>
#include <QMap>
#include <QWidget>

#include <vector>

class QGridLayout;
class QLabel;
class QToolButton;

namespace sluice::widgets {

class ParamEditor;

class ParamForm : public QWidget
{
    Q_OBJECT
public:
    explicit ParamForm(QWidget *parent = nullptr);

    // Rebuilds the rows only when the specs or the context differ from the current ones, so a
    // re-set after each edit keeps focus and the cursor where they are.
    void setSpecs(const QList<ParamSpec> &specs, const ParamContext &context);
    // The object holding the parameters; keys without a spec are ignored here.
    void setValues(const QJsonObject &values);
    // Messages by parameter name (from the pipeline builder or the model's checks).
    void setErrors(const QMap<QString, QString> &errorsByParam);

    ParamEditor *editor(const QString &name) const;
    QLabel *messageLabel(const QString &name) const;
    QToolButton *resetButton(const QString &name) const;
    QStringList visibleParams() const;
    const QList<ParamSpec> &specs() const { return m_specs; }

Q_SIGNALS:
    void edited(const QString &name, const QJsonValue &value); // Undefined: remove → default

private:
    struct Row
    {
        ParamSpec spec;
        QLabel *label = nullptr;
        ParamEditor *editor = nullptr;
        QToolButton *reset = nullptr;
        QLabel *message = nullptr;
    };
    void rebuild();
    void refreshRow(Row &row);
    void refreshVisibility();
    const Row *row(const QString &name) const;

    QGridLayout *m_grid;
    QList<ParamSpec> m_specs;
    ParamContext m_context;
    std::vector<Row> m_rows;
    QJsonObject m_values;
    QMap<QString, QString> m_errors;
};

} // namespace sluice::widgets
