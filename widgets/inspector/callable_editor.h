#pragma once
// The editor of a parameter naming a Python function ("module:function": map's callable,
// filter's predicate, from_generator's generator): the name checked as typed, completion from
// the functions defined in the modules next to the project and on its python_path, and a button
// that opens the function's file in the user's editor (the next run reloads it when it changed).
//
// Threading: a widget; GUI thread only.

#include "inspector/text_editors.h"

class QStringListModel;

namespace sluice::widgets {

class CallableEditor : public LineEditor
{
    Q_OBJECT
public:
    CallableEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent);

    // The file that defines the function, as the Python host reports it once resolved.
    void setSourceFile(const QString &file);
    // What "Open" opens: the reported file, else the module's file found in the folders; empty
    // when neither is known.
    QString fileToOpen() const;
    QStringList completions() const; // "module:function" for each public function found
    QToolButton *openButton() const { return m_open; }

    // The public top-level functions a Python source defines (`def name(` at the line's start).
    static QStringList functionsIn(const QString &source);

protected:
    void showValue(const QJsonValue &value) override;

private:
    void refreshCompletions();
    void refreshOpenButton();

    QStringList m_folders;
    QString m_sourceFile;
    QStringListModel *m_completions;
    QToolButton *m_open;
};

} // namespace sluice::widgets
