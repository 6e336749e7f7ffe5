#pragma once
// from_npy's `features` as a table a user fills without writing JSON: one row per feature, its
// name and its file (a path, a glob pattern, or several paths separated by ';'). Browse… picks
// several .npy files at once and names a feature after each file ("x.npy" → x); Remove drops the
// selected rows; the JSON editor stays one click away for experts. Every edit commits the whole
// object, as the project file holds it.
//
// Threading: a widget; GUI thread only.

#include "inspector/param_editor.h"

class QTableWidget;
class QToolButton;

namespace sluice::widgets {

class FeatureTableEditor : public ParamEditor
{
    Q_OBJECT
public:
    FeatureTableEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent);
    QWidget *inputWidget() const override;
    QTableWidget *table() const { return m_table; }
    QToolButton *browseButton() const { return m_browse; }
    QToolButton *removeButton() const { return m_remove; }
    QToolButton *jsonButton() const { return m_json; }

    // What Browse… does with the picked files: a row each, named after the file (made unique),
    // paths relative to the project folder when inside it. Public for scripts.
    void addFiles(const QStringList &paths);

    // The table's object: {name: "path" | ["a", "b"]}; rows with no name or no file are left out.
    QJsonObject tableValue() const;

protected:
    void showValue(const QJsonValue &value) override;

private:
    void browse();
    void removeSelected();
    void editAsJson();
    void commitTable();

    QTableWidget *m_table;
    QToolButton *m_browse, *m_remove, *m_json;
    QString m_folder;
    bool m_filling = false; // showValue() is writing the cells
};

} // namespace sluice::widgets
