// The parameter form. Rows are rebuilt only when what they edit changes (another node, another
// layer class); values and messages are refreshed in place.
#include "inspector/param_form.h"

#include "inspector/choice_editors.h"
#include "inspector/param_editor.h"

#include <QGridLayout>
#include <QLabel>
#include <QToolButton>

namespace sluice::widgets {

ParamForm::ParamForm(QWidget *parent) : QWidget(parent), m_grid(new QGridLayout(this))
{
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setColumnStretch(1, 1);
}

void ParamForm::setSpecs(const QList<ParamSpec> &specs, const ParamContext &context)
{
    if (specs == m_specs && context.features == m_context.features && context.projectFolder == m_context.projectFolder &&
        context.moduleFolders == m_context.moduleFolders)
        return;
    m_specs = specs;
    m_context = context;
    rebuild();
}

void ParamForm::rebuild()
{
    // Later, not now: a rebuild is often caused by an edit of one of these editors (another layer
    // class, another optimizer), and that editor is still inside its signal's emission.
    for (Row &r : m_rows)
        for (QWidget *w : {static_cast<QWidget *>(r.label), static_cast<QWidget *>(r.editor), static_cast<QWidget *>(r.reset),
                           static_cast<QWidget *>(r.message)}) {
            w->disconnect(this);
            m_grid->removeWidget(w);
            w->hide();
            w->deleteLater();
        }
    m_rows.clear();
    int gridRow = 0;
    for (const ParamSpec &spec : m_specs) {
        Row r;
        r.spec = spec;
        r.label = new QLabel(spec.name, this);
        r.label->setToolTip(toolTipFor(spec));
        r.editor = createParamEditor(spec, m_context, this);
        r.label->setBuddy(r.editor->inputWidget());
        r.reset = new QToolButton(this);
        r.reset->setText(QStringLiteral("\u21BA"));
        r.reset->setAutoRaise(true);
        r.reset->setToolTip(spec.required                ? tr("%1 is required: it has no default").arg(spec.name)
                            : spec.defaultValue.isEmpty() ? tr("Remove %1 (not set)").arg(spec.name)
                                                          : tr("Reset %1 to its default (%2)").arg(spec.name, spec.defaultValue));
        r.message = new QLabel(this);
        r.message->setWordWrap(true);
        r.message->setStyleSheet(QStringLiteral("color: #d9363e;"));
        r.message->hide();
        // A label sits level with a one-line editor, and at the top of a list.
        const bool tall = qobject_cast<MultiChoiceEditor *>(r.editor) != nullptr;
        m_grid->addWidget(r.label, gridRow, 0, tall ? Qt::AlignTop : Qt::AlignVCenter);
        r.reset->setVisible(spec.type != QLatin1String("readonly")); // a fact from the build: nothing to reset
        m_grid->addWidget(r.editor, gridRow, 1);
        m_grid->addWidget(r.reset, gridRow, 2, tall ? Qt::AlignTop : Qt::AlignVCenter);
        m_grid->addWidget(r.message, gridRow + 1, 1, 1, 2);
        gridRow += 2;
        const QString name = spec.name;
        connect(r.editor, &ParamEditor::committed, this, [this, name](const QJsonValue &v) { Q_EMIT edited(name, v); });
        connect(r.reset, &QToolButton::clicked, this, [this, name] {
            if (ParamEditor *e = editor(name)) {
                e->setValue(QJsonValue::Undefined); // shows the default at once; the owner's re-set confirms it
                Q_EMIT edited(name, QJsonValue::Undefined);
            }
        });
        connect(r.editor, &ParamEditor::problemChanged, this, [this, name] {
            for (Row &x : m_rows)
                if (x.spec.name == name)
                    refreshRow(x);
        });
        r.editor->setValue(m_values.value(spec.name)); // a new editor shows its value (or default) once
        m_rows.push_back(r);
    }
    setValues(m_values);
}

void ParamForm::setValues(const QJsonObject &values)
{
    m_values = values;
    for (Row &r : m_rows) {
        r.editor->setNodeValues(values);
        const QJsonValue v = values.value(r.spec.name);
        if (v != r.editor->value() || !r.editor->problem().isEmpty())
            r.editor->setValue(v);
        refreshRow(r);
    }
    refreshVisibility();
}

void ParamForm::setErrors(const QMap<QString, QString> &errorsByParam)
{
    m_errors = errorsByParam;
    for (Row &r : m_rows)
        refreshRow(r);
}

void ParamForm::refreshRow(Row &r)
{
    const bool set = m_values.contains(r.spec.name);
    r.reset->setEnabled(set && !r.spec.required); // a required parameter has nothing to go back to
    QFont f = r.label->font();
    f.setBold(set); // set parameters stand out from defaults
    r.label->setFont(f);
    const QString message = !r.editor->problem().isEmpty() ? r.editor->problem() : m_errors.value(r.spec.name);
    r.message->setText(message);
    r.message->setVisible(!message.isEmpty() && !r.editor->isHidden());
}

void ParamForm::refreshVisibility()
{
    for (Row &r : m_rows) {
        bool visible = true;
        if (!r.spec.visibleWhenParam.isEmpty() && !m_values.contains(r.spec.name)) {
            QString current = m_values.value(r.spec.visibleWhenParam).toString();
            for (const ParamSpec &s : m_specs)
                if (s.name == r.spec.visibleWhenParam && !m_values.contains(s.name))
                    current = s.defaultValue;
            visible = r.spec.visibleWhenValues.contains(current);
        }
        for (QWidget *w : {static_cast<QWidget *>(r.label), static_cast<QWidget *>(r.editor)})
            w->setVisible(visible);
        r.reset->setVisible(visible && r.spec.type != QLatin1String("readonly"));
        r.message->setVisible(visible && !r.message->text().isEmpty());
    }
}

const ParamForm::Row *ParamForm::row(const QString &name) const
{
    for (const Row &r : m_rows)
        if (r.spec.name == name)
            return &r;
    return nullptr;
}

ParamEditor *ParamForm::editor(const QString &name) const
{
    const Row *r = row(name);
    return r ? r->editor : nullptr;
}

QLabel *ParamForm::messageLabel(const QString &name) const
{
    const Row *r = row(name);
    return r ? r->message : nullptr;
}

QToolButton *ParamForm::resetButton(const QString &name) const
{
    const Row *r = row(name);
    return r ? r->reset : nullptr;
}

QStringList ParamForm::visibleParams() const
{
    QStringList names;
    for (const Row &r : m_rows)
        if (!r.editor->isHidden())
            names << r.spec.name;
    return names;
}

} // namespace sluice::widgets
