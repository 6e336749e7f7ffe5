// The JSON dialog: the same parse rule as the line editor, on indented text.
#include "inspector/json_dialog.h"

#include "inspector/param_value.h"

#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace sluice::widgets {

JsonDialog::JsonDialog(const ParamSpec &spec, const QJsonValue &value, QWidget *parent)
    : QDialog(parent), m_spec(spec), m_text(new QPlainTextEdit), m_message(new QLabel),
      m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel))
{
    setWindowTitle(tr("Edit %1").arg(spec.name));
    auto *doc = new QLabel(spec.doc);
    doc->setWordWrap(true);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setPlaceholderText(placeholderFor(spec));
    if (value.isObject())
        m_text->setPlainText(QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Indented)).trimmed());
    else if (value.isArray())
        m_text->setPlainText(QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Indented)).trimmed());
    else if (!value.isUndefined())
        m_text->setPlainText(editText(spec, value));
    m_message->setStyleSheet(QStringLiteral("color: #d9363e;"));
    m_message->setWordWrap(true);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(doc);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_message);
    layout->addWidget(m_buttons);
    connect(m_text, &QPlainTextEdit::textChanged, this, &JsonDialog::check);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    resize(480, 360);
    check();
}

QJsonValue JsonDialog::value() const
{
    return parseParamText(m_spec, m_text->toPlainText()).value;
}

void JsonDialog::check()
{
    const QString error = parseParamText(m_spec, m_text->toPlainText()).error;
    m_message->setText(error);
    m_message->setVisible(!error.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(error.isEmpty());
}

} // namespace sluice::widgets
