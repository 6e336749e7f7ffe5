#pragma once
// The shape every source's "name → something" parameter shares in the inspector: a table with
// one row per key (a feature, a column), the value's parts in the other columns, an empty row at
// the end to type the next key into, Remove for the selected rows, a fill button the subclass
// names (Browse…, Read from File), and the JSON editor one click away for experts. Every edit
// commits the whole object, as the project file holds it. Subclasses say how one row shows and
// reads a value; combo boxes in cells commit as items do.
//
// Threading: a widget; GUI thread only.

#include "inspector/param_editor.h"

#include <QJsonObject>

#include <optional>

class QComboBox;
class QTableWidget;
class QToolButton;

namespace sluice::widgets {

class KeyedTableEditor : public ParamEditor
{
    Q_OBJECT
public:
    QWidget *inputWidget() const override;
    QTableWidget *table() const { return m_table; }
    QToolButton *fillButton() const { return m_fill; }
    QToolButton *removeButton() const { return m_remove; }
    QToolButton *jsonButton() const { return m_json; }

    // The table's object: {key: row value}; rows without a key or with an incomplete value are
    // left out.
    QJsonObject tableValue() const;

protected:
    struct Names
    {
        QString table, fill, remove, json; // object names (tests and scripts find them by these)
        QString fillText, fillTip;
    };
    KeyedTableEditor(const ParamSpec &spec, const QStringList &headers, const Names &names, QWidget *parent);

    // Writes row `row`'s value cells (columns 1…) for `value` (Undefined: the empty row).
    virtual void fillRow(int row, const QJsonValue &value) = 0;
    // Row `row`'s value, or nothing while it is incomplete.
    virtual std::optional<QJsonValue> rowValue(int row) const = 0;
    // What is wrong with row `row` as typed (empty: nothing); while a row says so, nothing is
    // committed, so a typo never drops a key from the project.
    virtual QString rowProblem(int row) const { Q_UNUSED(row); return {}; }
    // The parameter's value as the table's object, and back (a subclass may accept a list too).
    virtual QJsonObject toObject(const QJsonValue &value) const { return value.toObject(); }
    virtual QJsonValue fromObject(const QJsonObject &object) const { return object; }
    // What the fill button does.
    virtual void fill() = 0;

    // Commits `object` (empty: the parameter removed) and shows what the value became.
    void setTableValue(const QJsonObject &object);
    // Cells for subclasses: text and a combo box that commits when changed.
    QString cellText(int row, int column) const;
    void setCellText(int row, int column, const QString &text);
    QComboBox *setCellChoice(int row, int column, const QStringList &choices, const QString &current);
    QString cellChoice(int row, int column) const;

    void showValue(const QJsonValue &value) override;

private:
    void appendRow(const QString &key, const QJsonValue &value);
    bool rowIsBlank(int row) const;
    void removeSelected();
    void editAsJson();
    void commitTable();

    QTableWidget *m_table;
    QToolButton *m_fill, *m_remove, *m_json;
    bool m_filling = false; // showValue() is writing the cells
};

} // namespace sluice::widgets
