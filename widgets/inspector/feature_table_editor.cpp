#include "inspector/feature_table_editor.h"

#include "inspector/text_editors.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QJsonArray>

namespace sluice::widgets {

FeatureTableEditor::FeatureTableEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent)
    : KeyedTableEditor(spec, {tr("Feature"), tr("File, glob or list (a; b)")},
                       Names{QStringLiteral("featureTable"), QStringLiteral("browseFeatures"), QStringLiteral("removeFeatures"),
                             QStringLiteral("featuresJson"), tr("Browse…"), tr("Add .npy files: a feature each, named after its file")},
                       parent),
      m_folder(context.projectFolder)
{
}

void FeatureTableEditor::fillRow(int row, const QJsonValue &value)
{
    QStringList parts;
    for (const QJsonValue &v : value.toArray())
        parts << v.toString();
    setCellText(row, 1, value.isArray() ? parts.join(QStringLiteral("; ")) : value.toString());
}

// A cell's text as the project holds it: one path or pattern, or a list for "a; b".
std::optional<QJsonValue> FeatureTableEditor::rowValue(int row) const
{
    QStringList parts;
    for (const QString &part : cellText(row, 1).split(QLatin1Char(';')))
        if (!part.trimmed().isEmpty())
            parts << part.trimmed();
    if (parts.isEmpty())
        return std::nullopt;
    if (parts.size() == 1)
        return QJsonValue(parts.first());
    return QJsonArray::fromStringList(parts);
}

void FeatureTableEditor::addFiles(const QStringList &paths)
{
    QJsonObject features = tableValue();
    for (const QString &path : paths) {
        QString name = QFileInfo(path).completeBaseName();
        for (int n = 2; features.contains(name); ++n)
            name = QStringLiteral("%1_%2").arg(QFileInfo(path).completeBaseName()).arg(n);
        features.insert(name, PathEditor::projectRelative(path, m_folder));
    }
    setTableValue(features);
}

void FeatureTableEditor::fill()
{
    const QStringList picked = QFileDialog::getOpenFileNames(this, tr("Add .npy Files as Features"), m_folder, tr("NumPy arrays (*.npy);;All files (*)"));
    if (!picked.isEmpty())
        addFiles(picked);
}

} // namespace sluice::widgets
