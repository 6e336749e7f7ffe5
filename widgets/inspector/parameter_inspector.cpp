// The inspector's page: title, the op's summary, node-level errors, the parameter form, and a
// second form for parameters the op does not document (kept visible, so they can be removed).
#include "inspector/parameter_inspector.h"

#include "inspector/callable_editor.h"
#include "inspector/number_editor.h"
#include "inspector/param_form.h"
#include "inspector/param_spec.h"
#include "pipeline/engine/op_registry.h"

#include <QCheckBox>
#include <QDir>
#include <QLabel>
#include <QScrollArea>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace sluice::widgets {
namespace {

// Parameters documented as "cast, one_hot: output dtype" belong to those values of the op's enum
// parameter (map's `function`): shown only then. Read from the docs, so a new function in core
// needs nothing here.
void linkToEnum(QList<ParamSpec> &specs)
{
    for (const ParamSpec &e : std::as_const(specs)) {
        const QStringList choices = choicesOf(e.type);
        if (!e.type.startsWith(QLatin1String("enum:")) || choices.size() < 2)
            continue;
        for (ParamSpec &p : specs) {
            const qsizetype colon = p.doc.indexOf(QLatin1Char(':'));
            if (&p == &e || colon <= 0)
                continue;
            QStringList names = p.doc.left(colon).split(QLatin1Char(','));
            for (QString &n : names)
                n = n.trimmed();
            if (std::all_of(names.begin(), names.end(), [&](const QString &n) { return choices.contains(n); })) {
                p.visibleWhenParam = e.name;
                p.visibleWhenValues = names;
            }
        }
    }
}

} // namespace

ParameterInspector::ParameterInspector(QWidget *parent)
    : QWidget(parent), m_stack(new QStackedWidget(this)), m_title(new QLabel), m_summary(new QLabel), m_nodeError(new QLabel),
      m_form(new ParamForm), m_extraTitle(new QLabel(tr("Parameters this stage does not know"))), m_extraForm(new ParamForm),
      m_functionDoc(new QLabel), m_tuned(new QLabel)
{
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(m_stack);

    auto *empty = new QLabel(tr("Select a stage on the canvas to edit its parameters."));
    empty->setAlignment(Qt::AlignCenter);
    empty->setWordWrap(true);
    m_stack->addWidget(empty);

    auto *page = new QWidget;
    auto *layout = new QVBoxLayout(page);
    m_title->setTextFormat(Qt::RichText);
    m_summary->setWordWrap(true);
    m_nodeError->setWordWrap(true);
    m_nodeError->setStyleSheet(QStringLiteral("color: #d9363e;"));
    m_nodeError->hide();
    m_extraTitle->hide();
    m_functionDoc->setTextFormat(Qt::RichText);
    m_functionDoc->setWordWrap(true);
    m_functionDoc->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_functionDoc->hide();
    m_tuned->setTextFormat(Qt::RichText);
    m_tuned->setWordWrap(true);
    m_tuned->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tuned->hide();
    layout->addWidget(m_title);
    layout->addWidget(m_summary);
    layout->addWidget(m_nodeError);
    layout->addWidget(m_form);
    layout->addWidget(m_functionDoc);
    layout->addWidget(m_tuned);
    layout->addWidget(m_extraTitle);
    layout->addWidget(m_extraForm);
    layout->addStretch(1);
    auto *scroll = new QScrollArea;
    scroll->setWidget(page);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    m_stack->addWidget(scroll);

    for (ParamForm *form : {m_form, m_extraForm})
        connect(form, &ParamForm::edited, this, [this](const QString &param, const QJsonValue &value) {
            Q_EMIT parameterEdited(m_nodeId, param, value);
        });
}

void ParameterInspector::showNode(const QString &nodeId, const QString &op, const QJsonObject &params, const QStringList &knownFeatures,
                                  const QString &projectFolder, const QStringList &moduleFolders)
{
    if (nodeId != m_nodeId || op != m_op) {
        m_errors.clear(); // another node: the last node's messages, function and tuned values do not apply
        m_functionDoc->hide();
        m_tuned->hide();
    }
    m_nodeId = nodeId;
    m_op = op;
    const pipeline::OpInfo *info = pipeline::findOp(op.toStdString());
    m_title->setText(QStringLiteral("<b>%1</b> &nbsp; <i>%2</i>").arg(op.toHtmlEscaped(), nodeId.toHtmlEscaped()));
    m_summary->setText(info ? QString::fromStdString(info->summary) : tr("\"%1\" is not a stage this version of Sluice knows.").arg(op));

    QList<ParamSpec> specs;
    if (info)
        for (const auto &p : info->params)
            specs << toSpec(p);
    linkToEnum(specs);
    QList<ParamSpec> extra;
    for (auto it = params.begin(); it != params.end(); ++it)
        if (std::none_of(specs.begin(), specs.end(), [&](const ParamSpec &s) { return s.name == it.key(); }))
            extra << ParamSpec{it.key(), QStringLiteral("json"), {}, tr("Not a parameter of %1: the build refuses it. Reset removes it.").arg(op)};

    const ParamContext context{knownFeatures, projectFolder, moduleFolders};
    m_form->setSpecs(specs, context);
    m_form->setValues(params);
    m_extraForm->setSpecs(extra, context);
    m_extraForm->setValues(params);
    m_extraTitle->setVisible(!extra.isEmpty());
    m_extraForm->setVisible(!extra.isEmpty());
    refreshErrors();
    m_stack->setCurrentIndex(1);
}

void ParameterInspector::showNothing()
{
    m_nodeId.clear();
    m_op.clear();
    m_errors.clear();
    m_functionDoc->hide();
    m_tuned->hide();
    m_form->setSpecs({}, {});
    m_extraForm->setSpecs({}, {});
    m_stack->setCurrentIndex(0);
}

void ParameterInspector::setNodeErrors(const QMap<QString, QString> &errorsByParam)
{
    m_errors = errorsByParam;
    refreshErrors();
}

void ParameterInspector::setHostFunction(const QString &param, const QString &doc, const QString &file)
{
    auto *editor = qobject_cast<CallableEditor *>(m_form->editor(param));
    if (param.isEmpty() || !editor) {
        m_functionDoc->hide();
        return;
    }
    editor->setSourceFile(file);
    // The docstring as Python's help() shows it (inspect.getdoc: indentation removed), kept as written.
    const QString text = doc.isEmpty() ? tr("<i>%1 has no docstring.</i>").arg(editor->value().toString().toHtmlEscaped())
                                       : QStringLiteral("<pre style=\"white-space: pre-wrap\">%1</pre>").arg(doc.toHtmlEscaped());
    m_functionDoc->setText(text);
    m_functionDoc->setToolTip(file.isEmpty() ? QString() : QDir::toNativeSeparators(file));
    m_functionDoc->show();
}

void ParameterInspector::setTuned(const pipeline::StageSnapshot *stage)
{
    QStringList lines;
    for (const auto &[name, value] : stage ? stage->tuned : std::map<std::string, int>{}) {
        const QString key = QString::fromStdString(name);
        const auto why = stage->tunedWhy.find(name);
        lines << tr("<b>%1</b> = %2: %3")
                     .arg(key.toHtmlEscaped())
                     .arg(value)
                     .arg(why != stage->tunedWhy.end() ? QString::fromStdString(why->second).toHtmlEscaped() : QString());
        // The field of an AUTOTUNE'd value stays empty (the project says AUTOTUNE); its hint shows the choice.
        if (auto *editor = qobject_cast<NumberEditor *>(m_form->editor(key)); editor && editor->autotuneToggle() &&
                                                                                    editor->autotuneToggle()->isChecked())
            editor->field()->setPlaceholderText(tr("AUTOTUNE: %1 in the last run").arg(value));
    }
    if (lines.isEmpty()) {
        m_tuned->hide();
        return;
    }
    m_tuned->setText(tr("<i>AUTOTUNE chose, in the last run:</i><br>") + lines.join(QStringLiteral("<br>")));
    m_tuned->show();
}

void ParameterInspector::refreshErrors()
{
    // A message for a parameter without an editor (a required one of an unknown op…) joins the
    // node's own, so none is lost.
    QStringList general;
    if (!m_errors.value(QString()).isEmpty())
        general << m_errors.value(QString());
    for (auto it = m_errors.begin(); it != m_errors.end(); ++it)
        if (!it.key().isEmpty() && !m_form->editor(it.key()) && !m_extraForm->editor(it.key()))
            general << QStringLiteral("%1: %2").arg(it.key(), it.value());
    m_nodeError->setText(general.join(QLatin1Char('\n')));
    m_nodeError->setVisible(!general.isEmpty());
    m_form->setErrors(m_errors);
    m_extraForm->setErrors(m_errors);
}

} // namespace sluice::widgets
