#pragma once
// Typed text: strings, JSON (lists, objects, shapes, number|list|adapt, unknown types), paths with
// a file picker, and read-only facts (an input's shape).
//
// Threading: widgets; GUI thread only.

#include "inspector/param_editor.h"

class QLabel;
class QLineEdit;
class QToolButton;

namespace sluice::widgets {

// A line of text checked as typed by parseParamText; committed on Enter or focus out.
class LineEditor : public ParamEditor
{
    Q_OBJECT
public:
    LineEditor(const ParamSpec &spec, QWidget *parent);
    QWidget *inputWidget() const override;
    QLineEdit *lineEdit() const { return m_edit; }
    QToolButton *jsonButton() const { return m_json; } // objects and lists: a multi-line editor

protected:
    void showValue(const QJsonValue &value) override;
    void commitText();
    void editAsJson();

    QLineEdit *m_edit;
    QToolButton *m_json = nullptr;
};

// A path, or for "path|glob|list" several separated by ';', with a "…" button that opens a file
// dialog and writes the picks relative to the project folder when they are inside it.
class PathEditor : public LineEditor
{
    Q_OBJECT
public:
    PathEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent);
    QToolButton *browseButton() const { return m_browse; }

    // `path` as the project file should hold it: relative when under `projectFolder`.
    static QString projectRelative(const QString &path, const QString &projectFolder);

private:
    void browse();

    QToolButton *m_browse;
    QString m_folder;
};

// Shows its spec's default as text; never commits.
class ReadOnlyEditor : public ParamEditor
{
    Q_OBJECT
public:
    ReadOnlyEditor(const ParamSpec &spec, QWidget *parent);
    QWidget *inputWidget() const override;

protected:
    void showValue(const QJsonValue &value) override;

private:
    QLabel *m_label;
};

} // namespace sluice::widgets
