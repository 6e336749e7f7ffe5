// Number editors. The text is checked on every keystroke (message + red frame) but emitted
// only on Enter or focus out; AUTOTUNE and the dice commit at once, being single clicks.
#include "inspector/number_editor.h"

#include "inspector/param_value.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QRandomGenerator>
#include <QToolButton>
#include <QWheelEvent>

#include <cmath>

namespace sluice::widgets {

NumberField::NumberField(const ParamSpec &spec, QWidget *parent)
    : QAbstractSpinBox(parent), m_spec(spec), m_integer(spec.type != QLatin1String("number"))
{
    // Wheel only once focused: scrolling the inspector must not change the values it passes.
    setFocusPolicy(Qt::StrongFocus);
    setKeyboardTracking(false);
}

QString NumberField::text() const
{
    return lineEdit()->text();
}

void NumberField::setText(const QString &text)
{
    lineEdit()->setText(text);
}

void NumberField::setPlaceholderText(const QString &text)
{
    lineEdit()->setPlaceholderText(text);
}

QValidator::State NumberField::validate(QString &, int &) const
{
    return QValidator::Acceptable; // checked by the editor, which can say why
}

QSize NumberField::sizeHint() const
{
    QSize s = QAbstractSpinBox::sizeHint();
    s.setWidth(std::max(s.width(), fontMetrics().horizontalAdvance(QStringLiteral("0000000000000"))));
    return s;
}

double NumberField::current() const
{
    bool ok = false;
    double v = text().trimmed().toDouble(&ok);
    if (!ok)
        v = m_spec.defaultValue.toDouble(&ok);
    if (!ok) {
        const ParamRange r = rangeFor(m_spec);
        v = r.min ? *r.min : 0.0;
    }
    return v;
}

void NumberField::stepBy(int steps)
{
    const ParamRange r = rangeFor(m_spec);
    double v = current();
    // Whole numbers step by one; fractions by a tenth of their magnitude (0.001 → 0.0011), which
    // suits learning rates and rates alike.
    const double step = m_integer ? 1.0 : (v == 0.0 ? 0.1 : std::pow(10.0, std::floor(std::log10(std::abs(v)))) / 10.0);
    v += steps * step;
    if (r.min && v < *r.min)
        v = *r.min;
    if (r.max && v > *r.max)
        v = *r.max;
    setText(m_integer ? QString::number(qint64(std::llround(v))) : formatNumber(v));
    Q_EMIT stepped();
}

QAbstractSpinBox::StepEnabled NumberField::stepEnabled() const
{
    if (isReadOnly())
        return StepNone;
    const ParamRange r = rangeFor(m_spec);
    const double v = current();
    StepEnabled e = StepNone;
    if (!r.min || v > *r.min)
        e |= StepDownEnabled;
    if (!r.max || v < *r.max)
        e |= StepUpEnabled;
    return e;
}

void NumberField::wheelEvent(QWheelEvent *event)
{
    if (!hasFocus()) {
        event->ignore(); // let the scroll area scroll
        return;
    }
    QAbstractSpinBox::wheelEvent(event);
}

NumberEditor::NumberEditor(const ParamSpec &spec, QWidget *parent) : ParamEditor(spec, parent)
{
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_field = new NumberField(spec, this);
    layout->addWidget(m_field, 1);
    if (spec.type == QLatin1String("int|AUTOTUNE")) {
        m_autotune = new QCheckBox(tr("AUTOTUNE"), this);
        m_autotune->setToolTip(tr("Let Sluice tune this value while the pipeline runs (tf.data.AUTOTUNE)"));
        layout->addWidget(m_autotune);
        connect(m_autotune, &QCheckBox::toggled, this, &NumberEditor::autotuneToggled);
    }
    if (isSeedParam(spec)) {
        m_dice = new QToolButton(this);
        m_dice->setText(QStringLiteral("\u2684")); // a die
        m_dice->setToolTip(tr("Draw a random seed (empty: unseeded, derived from the pipeline's seed)"));
        layout->addWidget(m_dice);
        connect(m_dice, &QToolButton::clicked, this, &NumberEditor::rollDice);
    }
    connect(m_field->textEdit(), &QLineEdit::textEdited, this, &NumberEditor::check);
    connect(m_field, &QAbstractSpinBox::editingFinished, this, &NumberEditor::commitTyped);
    connect(m_field, &NumberField::stepped, this, &NumberEditor::commitTyped);
}

QWidget *NumberEditor::inputWidget() const
{
    return m_field;
}

void NumberEditor::showValue(const QJsonValue &value)
{
    const ParamSpec &s = spec();
    QString placeholder = placeholderFor(s);
    if (isSeedParam(s) && s.defaultValue.isEmpty())
        placeholder = tr("unseeded");
    if (m_autotune) {
        const bool autotuned = value.isUndefined() ? s.defaultValue == QLatin1String("AUTOTUNE") : isAutotune(value);
        const QSignalBlocker block(m_autotune);
        m_autotune->setChecked(autotuned);
        m_field->setEnabled(!autotuned);
        m_field->setText(autotuned || value.isUndefined() ? QString() : displayText(value));
        m_field->setPlaceholderText(autotuned ? QStringLiteral("AUTOTUNE") : placeholder);
        return;
    }
    m_field->setText(value.isUndefined() ? QString() : displayText(value));
    m_field->setPlaceholderText(placeholder);
}

void NumberEditor::check()
{
    setProblem(parseParamText(spec(), m_field->text()).error);
}

void NumberEditor::commitTyped()
{
    if (m_autotune && m_autotune->isChecked())
        return;
    const ParsedValue parsed = parseParamText(spec(), m_field->text());
    setProblem(parsed.error);
    if (parsed.ok())
        commit(parsed.value);
}

void NumberEditor::autotuneToggled(bool on)
{
    m_field->setEnabled(!on);
    if (on) {
        setProblem({});
        commit(QJsonValue(QStringLiteral("AUTOTUNE")));
        return;
    }
    // Off: the number typed before, if any; else wait for one (guessing a count would be worse).
    m_field->setPlaceholderText(tr("a number"));
    const ParsedValue parsed = parseParamText(spec(), m_field->text());
    if (parsed.ok() && !parsed.value.isUndefined() && !isAutotune(parsed.value)) {
        commit(parsed.value);
    } else {
        setProblem(tr("type a number, or turn AUTOTUNE back on"));
        m_field->setFocus();
    }
}

void NumberEditor::rollDice()
{
    // 31 bits: every tool that reads the project (numpy, JSON readers using doubles) keeps it exact.
    const qint64 seed = QRandomGenerator::global()->bounded(1 << 30) * 2 + QRandomGenerator::global()->bounded(2);
    m_field->setText(QString::number(seed));
    setProblem({});
    commit(QJsonValue(seed));
}

} // namespace sluice::widgets
