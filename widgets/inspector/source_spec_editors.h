#pragma once
// The tables of the file sources' specs, each filled from the source's first file on request:
//   - from_tfrecord's `features`: feature → dtype, shape, default value; Read from File takes
//     them from the records (fixed-length features, as tf.train.Example stores them);
//   - from_csv's `columns`: column → dtype; Read Header takes the columns and their inferred
//     dtypes from the file;
//   - from_npz's `members`: the archive's arrays, checked to use (none checked: all), listed as
//     soon as the archive is named.
// The file is read off the GUI thread (background_inspect.h): the fill button says "Reading…"
// meanwhile, and a file that cannot be read is said in the editor's message.
//
// Threading: widgets; GUI thread only.

#include "inspector/keyed_table_editor.h"

#include <nlohmann/json.hpp>

class QListWidget;

namespace sluice::widgets {

// What a spec editor shares: the node's path parameter, resolved against the project folder.
class SourceSpecTable : public KeyedTableEditor
{
    Q_OBJECT
public:
    void setNodeValues(const QJsonObject &values) override;
    // The file a fill reads (absolute), empty while the path parameter names none.
    QString sourceFile() const;

protected:
    SourceSpecTable(const ParamSpec &spec, const ParamContext &context, const QString &pathParam, const QStringList &headers,
                    const Names &names, QWidget *parent);
    void fill() override;
    // The table's new object from the file's report; the current one is given to keep what the
    // user set that the file does not say (default values).
    virtual QJsonObject objectFromReport(const nlohmann::json &report, const QJsonObject &current, QStringList &problems) const = 0;

private:
    QString m_folder, m_pathParam;
    QJsonValue m_paths;
};

class TfRecordSpecEditor : public SourceSpecTable
{
    Q_OBJECT
public:
    TfRecordSpecEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent);

protected:
    void fillRow(int row, const QJsonValue &value) override;
    std::optional<QJsonValue> rowValue(int row) const override;
    QString rowProblem(int row) const override;
    QJsonObject objectFromReport(const nlohmann::json &report, const QJsonObject &current, QStringList &problems) const override;
};

class CsvColumnsEditor : public SourceSpecTable
{
    Q_OBJECT
public:
    CsvColumnsEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent);

protected:
    void fillRow(int row, const QJsonValue &value) override;
    std::optional<QJsonValue> rowValue(int row) const override;
    QJsonObject toObject(const QJsonValue &value) const override; // a list of names: float32 each
    QJsonObject objectFromReport(const nlohmann::json &report, const QJsonObject &current, QStringList &problems) const override;
};

class NpzMembersEditor : public ParamEditor
{
    Q_OBJECT
public:
    NpzMembersEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent);
    QWidget *inputWidget() const override;
    QListWidget *list() const { return m_list; }
    void setNodeValues(const QJsonObject &values) override;

protected:
    void showValue(const QJsonValue &value) override;

private:
    void commitChecks();

    QListWidget *m_list;
    QString m_folder, m_archive;
    QStringList m_members; // the archive's, once read
    bool m_filling = false;
};

} // namespace sluice::widgets
