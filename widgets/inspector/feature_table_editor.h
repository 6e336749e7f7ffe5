#pragma once
// from_npy's `features` as a table a user fills without writing JSON: one row per feature, its
// name and its file (a path, a glob pattern, or several paths separated by ';'). Browse… picks
// several .npy files at once and names a feature after each file ("x.npy" → x). The rest (the
// empty row, Remove, the JSON editor) is KeyedTableEditor's.
//
// Threading: a widget; GUI thread only.

#include "inspector/keyed_table_editor.h"

namespace sluice::widgets {

class FeatureTableEditor : public KeyedTableEditor
{
    Q_OBJECT
public:
    FeatureTableEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent);
    QToolButton *browseButton() const { return fillButton(); }

    // What Browse… does with the picked files: a row each, named after the file (made unique),
    // paths relative to the project folder when inside it. Public for scripts.
    void addFiles(const QStringList &paths);

protected:
    void fillRow(int row, const QJsonValue &value) override;
    std::optional<QJsonValue> rowValue(int row) const override;
    void fill() override; // Browse…

private:
    QString m_folder;
};

} // namespace sluice::widgets
