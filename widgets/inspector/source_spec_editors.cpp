#include "inspector/source_spec_editors.h"

#include "document/source_specs.h"
#include "inspector/background_inspect.h"
#include "inspector/param_value.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QListWidget>
#include <QRegularExpression>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace sluice::widgets {

namespace {

enum TfRecordColumn { DtypeColumn = 1, ShapeColumn, DefaultColumn };

// "" → [], "3" → [3], "2, 3" or "[2, 3]" → [2, 3]; nothing for anything else.
std::optional<QJsonArray> parseShape(const QString &text)
{
    QString inner = text.trimmed();
    if (inner.startsWith(QLatin1Char('[')) || inner.startsWith(QLatin1Char('(')))
        inner = inner.mid(1);
    if (inner.endsWith(QLatin1Char(']')) || inner.endsWith(QLatin1Char(')')))
        inner.chop(1);
    QJsonArray dims;
    for (const QString &part : inner.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int dim = part.toInt(&ok);
        if (!ok || dim < 1)
            return std::nullopt;
        dims.append(dim);
    }
    return dims;
}

QString shapeText(const QJsonValue &shape)
{
    QStringList dims;
    for (const QJsonValue &d : shape.toArray())
        dims << QString::number(d.toInteger());
    return dims.join(QStringLiteral(", "));
}

// A default value as typed: JSON when it reads as JSON (numbers, lists, quoted strings), else
// the bare text as a string (a string feature's default).
QJsonValue parseDefault(const QString &text)
{
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray("[") + text.toUtf8() + "]");
    if (doc.isArray() && doc.array().size() == 1)
        return doc.array().at(0);
    return text;
}

} // namespace

// --- SourceSpecTable -------------------------------------------------------------------------

SourceSpecTable::SourceSpecTable(const ParamSpec &spec, const ParamContext &context, const QString &pathParam, const QStringList &headers,
                                 const Names &names, QWidget *parent)
    : KeyedTableEditor(spec, headers, names, parent), m_folder(context.projectFolder), m_pathParam(pathParam)
{
}

void SourceSpecTable::setNodeValues(const QJsonObject &values) { m_paths = values.value(m_pathParam); }

QString SourceSpecTable::sourceFile() const { return firstSourceFile(m_paths, m_folder); }

void SourceSpecTable::fill()
{
    const QString file = sourceFile();
    if (file.isEmpty()) {
        setProblem(tr("Nothing to read: \"%1\" names no existing file yet").arg(m_pathParam));
        return;
    }
    const QString text = fillButton()->text();
    fillButton()->setEnabled(false);
    fillButton()->setText(tr("Reading…"));
    inspectInBackground(this, file, [this, text](const nlohmann::json &report, const QString &error) {
        fillButton()->setEnabled(true);
        fillButton()->setText(text);
        if (!error.isEmpty()) {
            setProblem(error);
            return;
        }
        QStringList problems;
        const QJsonObject object = objectFromReport(report, tableValue(), problems);
        setTableValue(object);
        setProblem(problems.join(QLatin1Char('\n')));
    });
}

// --- TfRecordSpecEditor ----------------------------------------------------------------------

TfRecordSpecEditor::TfRecordSpecEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent)
    : SourceSpecTable(spec, context, QStringLiteral("filenames"), {tr("Feature"), tr("dtype"), tr("Shape"), tr("Default")},
                      Names{QStringLiteral("tfrecordSpecTable"), QStringLiteral("readTfRecordSpec"), QStringLiteral("removeFeatures"),
                            QStringLiteral("featuresJson"), tr("Read from File"),
                            tr("Read the features, their dtypes and shapes from the first TFRecord file")},
                      parent)
{
}

void TfRecordSpecEditor::fillRow(int row, const QJsonValue &value)
{
    const QJsonObject entry = value.toObject();
    setCellChoice(row, DtypeColumn, {QStringLiteral("float32"), QStringLiteral("int64"), QStringLiteral("string")},
                  entry.value(QStringLiteral("dtype")).toString());
    setCellText(row, ShapeColumn, shapeText(entry.value(QStringLiteral("shape"))));
    setCellText(row, DefaultColumn, entry.contains(QStringLiteral("default_value")) ? displayText(entry.value(QStringLiteral("default_value"))) : QString());
}

std::optional<QJsonValue> TfRecordSpecEditor::rowValue(int row) const
{
    const std::optional<QJsonArray> shape = parseShape(cellText(row, ShapeColumn));
    if (!shape)
        return std::nullopt;
    QJsonObject entry{{QStringLiteral("dtype"), cellChoice(row, DtypeColumn)}, {QStringLiteral("shape"), *shape}};
    if (const QString text = cellText(row, DefaultColumn); !text.isEmpty())
        entry[QStringLiteral("default_value")] = parseDefault(text);
    return entry;
}

QString TfRecordSpecEditor::rowProblem(int row) const
{
    if (parseShape(cellText(row, ShapeColumn)))
        return {};
    return tr("%1: the shape \"%2\" is not a list of sizes (\"3\", \"2, 3\", or empty for one value)").arg(cellText(row, 0), cellText(row, ShapeColumn));
}

QJsonObject TfRecordSpecEditor::objectFromReport(const nlohmann::json &report, const QJsonObject &current, QStringList &problems) const
{
    QJsonObject spec = tfRecordSpecFromReport(report, problems);
    for (auto it = spec.begin(); it != spec.end(); ++it) {
        const QJsonObject old = current.value(it.key()).toObject();
        if (old.contains(QStringLiteral("default_value"))) {
            QJsonObject entry = it.value().toObject();
            entry[QStringLiteral("default_value")] = old.value(QStringLiteral("default_value"));
            it.value() = entry;
        }
    }
    if (spec.isEmpty() && problems.isEmpty())
        problems << tr("%1 holds no records to read features from").arg(QString::fromStdString(report.value("file", std::string())));
    return spec.isEmpty() ? current : spec;
}

// --- CsvColumnsEditor ------------------------------------------------------------------------

CsvColumnsEditor::CsvColumnsEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent)
    : SourceSpecTable(spec, context, QStringLiteral("filenames"), {tr("Column"), tr("dtype")},
                      Names{QStringLiteral("csvColumnsTable"), QStringLiteral("readCsvHeader"), QStringLiteral("removeColumns"),
                            QStringLiteral("columnsJson"), tr("Read Header"), tr("Take the columns and their dtypes from the first CSV file")},
                      parent)
{
}

void CsvColumnsEditor::fillRow(int row, const QJsonValue &value)
{
    setCellChoice(row, 1, {QStringLiteral("float32"), QStringLiteral("float64"), QStringLiteral("int32"), QStringLiteral("int64"), QStringLiteral("string")},
                  value.toString());
}

std::optional<QJsonValue> CsvColumnsEditor::rowValue(int row) const { return QJsonValue(cellChoice(row, 1)); }

QJsonObject CsvColumnsEditor::toObject(const QJsonValue &value) const
{
    if (!value.isArray())
        return value.toObject();
    QJsonObject columns;
    for (const QJsonValue &name : value.toArray())
        columns[name.toString()] = QStringLiteral("float32");
    return columns;
}

QJsonObject CsvColumnsEditor::objectFromReport(const nlohmann::json &report, const QJsonObject &current, QStringList &problems) const
{
    const QJsonObject columns = csvColumnsFromReport(report);
    if (columns.isEmpty())
        problems << tr("%1 has no header row to read columns from").arg(QString::fromStdString(report.value("file", std::string())));
    return columns.isEmpty() ? current : columns;
}

// --- NpzMembersEditor ------------------------------------------------------------------------

NpzMembersEditor::NpzMembersEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent)
    : ParamEditor(spec, parent), m_list(new QListWidget(this)), m_folder(context.projectFolder)
{
    m_list->setObjectName(QStringLiteral("npzMembers"));
    m_list->setMinimumHeight(90);
    m_list->setToolTip(tr("The archive's arrays to use as features; with none checked, all are used"));
    connect(m_list, &QListWidget::itemChanged, this, [this] {
        if (!m_filling)
            commitChecks();
    });
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_list);
}

QWidget *NpzMembersEditor::inputWidget() const { return m_list; }

void NpzMembersEditor::setNodeValues(const QJsonObject &values)
{
    const QString archive = firstSourceFile(values.value(QStringLiteral("path")), m_folder);
    if (archive == m_archive)
        return;
    m_archive = archive;
    m_members.clear();
    showValue(value());
    if (archive.isEmpty())
        return;
    // The central directory only: quick, but a network drive may still be slow.
    inspectInBackground(this, archive, [this, archive](const nlohmann::json &report, const QString &error) {
        if (archive != m_archive)
            return; // the path changed meanwhile
        setProblem(error);
        m_members = npzMembersFromReport(report);
        showValue(value());
    });
}

void NpzMembersEditor::showValue(const QJsonValue &value)
{
    QStringList chosen;
    for (const QJsonValue &v : value.toArray())
        chosen << v.toString();
    if (value.isString())
        chosen << value.toString();
    QStringList names = m_members;
    for (const QString &name : chosen)
        if (!names.contains(name))
            names << name; // named in the project, not (yet) seen in the archive
    m_filling = true;
    m_list->clear();
    for (const QString &name : names) {
        auto *item = new QListWidgetItem(name, m_list);
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(chosen.isEmpty() || chosen.contains(name) ? Qt::Checked : Qt::Unchecked);
        if (!m_members.isEmpty() && !m_members.contains(name))
            item->setToolTip(tr("Not in %1").arg(m_archive));
    }
    m_filling = false;
}

void NpzMembersEditor::commitChecks()
{
    QJsonArray chosen;
    for (int i = 0; i < m_list->count(); ++i)
        if (m_list->item(i)->checkState() == Qt::Checked)
            chosen.append(m_list->item(i)->text());
    // Every array of the archive checked (or none) is the default, all of them: the parameter goes.
    const bool all = chosen.isEmpty() || (!m_members.isEmpty() && chosen.size() == m_list->count());
    commit(all ? QJsonValue(QJsonValue::Undefined) : QJsonValue(chosen));
}

} // namespace sluice::widgets
