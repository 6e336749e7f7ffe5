// Text editors. One rule for what is accepted (parseParamText) serves the live check and the
// commit, so a red frame always means "Enter will not emit this".
#include "inspector/text_editors.h"

#include "inspector/json_dialog.h"
#include "inspector/param_value.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>

namespace sluice::widgets {

LineEditor::LineEditor(const ParamSpec &spec, QWidget *parent) : ParamEditor(spec, parent), m_edit(new QLineEdit(this))
{
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_edit, 1);
    connect(m_edit, &QLineEdit::textEdited, this, [this](const QString &text) { setProblem(parseParamText(this->spec(), text).error); });
    connect(m_edit, &QLineEdit::editingFinished, this, &LineEditor::commitText);
    static const QStringList structured{QStringLiteral("object"), QStringLiteral("object|list"), QStringLiteral("json")};
    if (structured.contains(spec.type)) {
        m_json = new QToolButton(this);
        m_json->setText(QStringLiteral("{\u2026}"));
        m_json->setToolTip(tr("Edit %1 as indented JSON").arg(spec.name));
        layout->addWidget(m_json);
        connect(m_json, &QToolButton::clicked, this, &LineEditor::editAsJson);
    }
}

void LineEditor::editAsJson()
{
    const ParsedValue typed = parseParamText(spec(), m_edit->text());
    JsonDialog dialog(spec(), typed.ok() ? typed.value : value(), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const QJsonValue v = dialog.value();
    m_edit->setText(v.isUndefined() ? QString() : editText(spec(), v));
    m_edit->setCursorPosition(0);
    setProblem({});
    commit(v);
}

QWidget *LineEditor::inputWidget() const
{
    return m_edit;
}

void LineEditor::showValue(const QJsonValue &value)
{
    m_edit->setText(value.isUndefined() ? QString() : editText(spec(), value));
    m_edit->setCursorPosition(0);
    m_edit->setPlaceholderText(placeholderFor(spec()));
}

void LineEditor::commitText()
{
    const ParsedValue parsed = parseParamText(spec(), m_edit->text());
    setProblem(parsed.error);
    if (parsed.ok())
        commit(parsed.value);
}

PathEditor::PathEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent)
    : LineEditor(spec, parent), m_browse(new QToolButton(this)), m_folder(context.projectFolder)
{
    m_browse->setText(QStringLiteral("\u2026"));
    m_browse->setToolTip(spec.type == QLatin1String("path") ? tr("Choose a file") : tr("Choose one or more files"));
    layout()->addWidget(m_browse);
    connect(m_browse, &QToolButton::clicked, this, &PathEditor::browse);
}

QString PathEditor::projectRelative(const QString &path, const QString &projectFolder)
{
    if (projectFolder.isEmpty())
        return path;
    const QDir folder(projectFolder);
    const QString relative = folder.relativeFilePath(QFileInfo(path).absoluteFilePath());
    // Outside the folder ("../elsewhere"): absolute, so that moving the project does not silently
    // point it at another file.
    return relative.startsWith(QLatin1String("..")) || QDir::isAbsolutePath(relative) ? QFileInfo(path).absoluteFilePath() : relative;
}

void PathEditor::browse()
{
    const QString start = m_folder.isEmpty() ? QDir::currentPath() : m_folder;
    QStringList picked;
    if (spec().type == QLatin1String("path")) {
        // A cache file may not exist yet: a save dialog that does not insist on overwriting.
        const QString file = QFileDialog::getSaveFileName(this, tr("Choose %1").arg(spec().name), start, QString(), nullptr,
                                                          QFileDialog::DontConfirmOverwrite);
        if (!file.isEmpty())
            picked << file;
    } else {
        picked = QFileDialog::getOpenFileNames(this, tr("Choose %1").arg(spec().name), start);
    }
    if (picked.isEmpty())
        return;
    QJsonArray paths;
    for (const QString &p : picked)
        paths.append(projectRelative(p, m_folder));
    const QJsonValue value = paths.size() == 1 ? paths.at(0) : QJsonValue(paths);
    m_edit->setText(editText(spec(), value));
    setProblem({});
    commit(value);
}

ReadOnlyEditor::ReadOnlyEditor(const ParamSpec &spec, QWidget *parent) : ParamEditor(spec, parent), m_label(new QLabel(this))
{
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_label, 1);
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
}

QWidget *ReadOnlyEditor::inputWidget() const
{
    return m_label;
}

void ReadOnlyEditor::showValue(const QJsonValue &)
{
    m_label->setText(spec().defaultValue);
}

} // namespace sluice::widgets
