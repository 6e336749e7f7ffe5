// The editors' shared behaviour and the factory that picks one by type.
#include "inspector/param_editor.h"

#include "inspector/callable_editor.h"
#include "inspector/choice_editors.h"
#include "inspector/feature_table_editor.h"
#include "inspector/number_editor.h"
#include "inspector/source_spec_editors.h"
#include "inspector/text_editors.h"

namespace sluice::widgets {

ParamEditor::ParamEditor(ParamSpec spec, QWidget *parent) : QWidget(parent), m_spec(std::move(spec))
{
    setToolTip(toolTipFor(m_spec));
}

void ParamEditor::setValue(const QJsonValue &value)
{
    m_value = value;
    setProblem({});
    showValue(value);
}

void ParamEditor::commit(const QJsonValue &value)
{
    if (value == m_value)
        return;
    m_value = value;
    Q_EMIT committed(value);
}

void ParamEditor::setProblem(const QString &message)
{
    if (message == m_problem)
        return;
    m_problem = message;
    // The red frame on the input alone: a bare "border" rule would cascade into a spin box's line
    // edit and a combo's popup too.
    if (QWidget *input = inputWidget()) {
        input->setObjectName(QStringLiteral("sluiceParamInput"));
        input->setStyleSheet(message.isEmpty() ? QString() : QStringLiteral("#sluiceParamInput { border: 1px solid #d9363e; }"));
    }
    Q_EMIT problemChanged(message);
}

ParamEditor *createParamEditor(const ParamSpec &spec, const ParamContext &context, QWidget *parent)
{
    const QString &t = spec.type;
    ParamEditor *editor = nullptr;
    if (t == QLatin1String("int") || t == QLatin1String("int|AUTOTUNE") || t == QLatin1String("int|null") || t == QLatin1String("number"))
        editor = new NumberEditor(spec, parent);
    else if (t == QLatin1String("bool"))
        editor = new BoolEditor(spec, parent);
    else if (t.startsWith(QLatin1String("enum:")) || t == QLatin1String("dtype") || t == QLatin1String("feature"))
        editor = new ChoiceEditor(spec, context, parent);
    else if (t.startsWith(QLatin1String("multi:")) || t == QLatin1String("feature|list"))
        editor = new MultiChoiceEditor(spec, context, parent);
    else if (t == QLatin1String("path") || t == QLatin1String("path|glob|list"))
        editor = new PathEditor(spec, context, parent);
    else if (t == QLatin1String("callable"))
        editor = new CallableEditor(spec, context, parent);
    else if (t == QLatin1String("string"))
        editor = new LineEditor(spec, parent);
    else if (t == QLatin1String("features"))
        editor = new FeatureTableEditor(spec, context, parent);
    else if (t == QLatin1String("feature_spec"))
        editor = new TfRecordSpecEditor(spec, context, parent);
    else if (t == QLatin1String("columns"))
        editor = new CsvColumnsEditor(spec, context, parent);
    else if (t == QLatin1String("members"))
        editor = new NpzMembersEditor(spec, context, parent);
    else if (t == QLatin1String("readonly"))
        editor = new ReadOnlyEditor(spec, parent);
    else
        editor = new LineEditor(spec, parent); // JSON kinds: list, string|list (a name or a list of them), object, shape, number|list|adapt, unknown
    if (QWidget *input = editor->inputWidget())
        input->setToolTip(editor->toolTip());
    return editor;
}

} // namespace sluice::widgets
