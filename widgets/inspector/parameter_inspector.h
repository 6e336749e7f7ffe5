#pragma once
// The parameter inspector: the selected pipeline node's parameters, one editor per parameter as
// core's op registry documents them (type, default, doc), with the pipeline builder's
// validation messages next to them. A view only: it emits edits, and the owner (the main
// window, through its undo stack) applies them and calls showNode() again with the new state.
//
// Threading: a widget; GUI thread only.

#include "pipeline/profile/pipeline_stats.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QWidget>

class QLabel;
class QStackedWidget;

namespace sluice::widgets {

class ParamForm;

class ParameterInspector : public QWidget
{
    Q_OBJECT
public:
    explicit ParameterInspector(QWidget *parent = nullptr);

    // `knownFeatures`: the features of the node's input (feature pickers); `projectFolder`: where
    // the project file lives (file pickers write paths relative to it). Showing the same node
    // again only refreshes the values, so the editor being typed in keeps its focus.
    // `moduleFolders`: where Python functions' modules are looked for (completion of their names).
    void showNode(const QString &nodeId, const QString &op, const QJsonObject &params, const QStringList &knownFeatures,
                  const QString &projectFolder, const QStringList &moduleFolders = {});
    void showNothing();
    // Messages by parameter name; the "" key is about the node as a whole. Replaces earlier ones;
    // showing another node clears them, so set them after showNode().
    void setNodeErrors(const QMap<QString, QString> &errorsByParam);
    // The Python function the node's `param` names, once resolved: its docstring under the form,
    // and its file for the editor's Open button. An empty `param` hides them.
    void setHostFunction(const QString &param, const QString &doc, const QString &file);
    // What AUTOTUNE chose for the node in the last run, and why: `stage` is the node's entry of a
    // statistics snapshot (tuned, tunedWhy); null, or nothing tuned, shows nothing.
    void setTuned(const pipeline::StageSnapshot *stage);

    QString nodeId() const { return m_nodeId; }
    ParamForm *form() const { return m_form; }           // the registry's parameters
    ParamForm *extraForm() const { return m_extraForm; } // parameters the registry does not know
    QLabel *nodeErrorLabel() const { return m_nodeError; }
    QLabel *functionDocLabel() const { return m_functionDoc; }
    QLabel *tunedLabel() const { return m_tuned; }

Q_SIGNALS:
    void parameterEdited(const QString &nodeId, const QString &param, const QJsonValue &value);

private:
    void refreshErrors();

    QStackedWidget *m_stack;
    QLabel *m_title;
    QLabel *m_summary;
    QLabel *m_nodeError;
    ParamForm *m_form;
    QLabel *m_extraTitle;
    ParamForm *m_extraForm;
    QLabel *m_functionDoc;
    QLabel *m_tuned;
    QString m_nodeId;
    QString m_op;
    QMap<QString, QString> m_errors;
};

} // namespace sluice::widgets
