#include "inspector/callable_editor.h"

#include <QCompleter>
#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLayout>
#include <QLineEdit>
#include <QRegularExpression>
#include <QStringListModel>
#include <QToolButton>
#include <QUrl>

namespace sluice::widgets {

CallableEditor::CallableEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent)
    : LineEditor(spec, parent), m_folders(context.moduleFolders), m_completions(new QStringListModel(this)), m_open(new QToolButton(this))
{
    if (m_folders.isEmpty() && !context.projectFolder.isEmpty())
        m_folders << context.projectFolder;
    auto *completer = new QCompleter(m_completions, this);
    completer->setCaseSensitivity(Qt::CaseInsensitive);
    completer->setFilterMode(Qt::MatchContains); // "norm" finds "prep:normalize_pixels"
    m_edit->setCompleter(completer);
    m_open->setText(tr("Open"));
    layout()->addWidget(m_open);
    connect(m_open, &QToolButton::clicked, this, [this] {
        const QString file = fileToOpen();
        if (!file.isEmpty())
            QDesktopServices::openUrl(QUrl::fromLocalFile(file));
    });
    connect(m_edit, &QLineEdit::textChanged, this, &CallableEditor::refreshOpenButton);
    refreshCompletions();
    refreshOpenButton();
}

void CallableEditor::showValue(const QJsonValue &value)
{
    LineEditor::showValue(value);
    m_edit->setPlaceholderText(spec().required ? tr("module:function (required)") : tr("module:function"));
}

QStringList CallableEditor::functionsIn(const QString &source)
{
    static const QRegularExpression definition(QStringLiteral(R"(^(?:async\s+)?def\s+([A-Za-z][A-Za-z0-9_]*)\s*\()"),
                                               QRegularExpression::MultilineOption);
    QStringList names;
    for (auto it = definition.globalMatch(source); it.hasNext();)
        names << it.next().captured(1);
    return names;
}

void CallableEditor::refreshCompletions()
{
    QStringList items;
    for (const QString &folder : std::as_const(m_folders)) {
        const QFileInfoList modules = QDir(folder).entryInfoList({QStringLiteral("*.py")}, QDir::Files, QDir::Name);
        for (const QFileInfo &module : modules) {
            if (module.completeBaseName().startsWith(QLatin1Char('_')) || module.size() > 4 * 1024 * 1024)
                continue; // private modules, and generated files too large to be a user's functions
            QFile file(module.filePath());
            if (!file.open(QIODevice::ReadOnly))
                continue;
            for (const QString &function : functionsIn(QString::fromUtf8(file.readAll())))
                items << module.completeBaseName() + QLatin1Char(':') + function;
        }
    }
    items.removeDuplicates();
    m_completions->setStringList(items);
}

QStringList CallableEditor::completions() const
{
    return m_completions->stringList();
}

void CallableEditor::setSourceFile(const QString &file)
{
    m_sourceFile = file;
    refreshOpenButton();
}

QString CallableEditor::fileToOpen() const
{
    if (!m_sourceFile.isEmpty() && QFileInfo::exists(m_sourceFile))
        return m_sourceFile;
    // Not resolved (yet, or it does not import): the module's file, if one of the folders has it.
    const QString module = m_edit->text().section(QLatin1Char(':'), 0, 0).trimmed();
    if (module.isEmpty())
        return {};
    const QString relative = QString(module).replace(QLatin1Char('.'), QLatin1Char('/'));
    for (const QString &folder : m_folders)
        for (const QString &candidate : {relative + QStringLiteral(".py"), relative + QStringLiteral("/__init__.py")})
            if (QFileInfo::exists(QDir(folder).filePath(candidate)))
                return QDir(folder).filePath(candidate);
    return {};
}

void CallableEditor::refreshOpenButton()
{
    const QString file = fileToOpen();
    m_open->setEnabled(!file.isEmpty());
    m_open->setToolTip(file.isEmpty() ? tr("The module's file is not found next to the project or on its python_path")
                                      : tr("Open %1 in its editor; the next run uses the saved file").arg(QDir::toNativeSeparators(file)));
}

} // namespace sluice::widgets
