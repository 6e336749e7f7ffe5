// Parameter descriptions shared by every editor: conversions from core's tables and the
// per-name bounds core's builders enforce (so the editor refuses what the build would).
#include "inspector/param_spec.h"

#include "pipeline/engine/op_registry.h"
#include "train/model/layer_registry.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

namespace sluice::widgets {

bool ParamSpec::operator==(const ParamSpec &o) const
{
    const bool sameRange = range.has_value() == o.range.has_value() &&
                           (!range || (range->min == o.range->min && range->max == o.range->max &&
                                       range->minOpen == o.range->minOpen && range->maxOpen == o.range->maxOpen));
    return name == o.name && type == o.type && defaultValue == o.defaultValue && doc == o.doc && required == o.required && sameRange &&
           visibleWhenParam == o.visibleWhenParam && visibleWhenValues == o.visibleWhenValues;
}

ParamSpec toSpec(const pipeline::ParamInfo &info)
{
    ParamSpec s;
    s.name = QString::fromStdString(info.name);
    s.type = QString::fromStdString(info.type);
    s.defaultValue = QString::fromStdString(info.defaultValue);
    s.doc = QString::fromStdString(info.doc);
    s.required = info.required;
    return s;
}

ParamSpec toSpec(const train::LayerParamDoc &info)
{
    ParamSpec s;
    s.name = QString::fromStdString(info.name);
    s.type = QString::fromStdString(info.type);
    s.defaultValue = QString::fromStdString(info.defaultValue);
    s.doc = QString::fromStdString(info.doc);
    return s;
}

ParamRange rangeFor(const ParamSpec &spec)
{
    if (spec.range)
        return *spec.range;
    // Keyed by name because the names mean the same wherever they appear (tf.data, Keras, the
    // training object); the bounds are those core's builders check.
    static const QHash<QString, ParamRange> byName = [] {
        QHash<QString, ParamRange> m;
        const ParamRange atLeastOne{1.0, std::nullopt};
        const ParamRange nonNegative{0.0, std::nullopt};
        const ParamRange positive{0.0, std::nullopt, true, false};
        const ParamRange fraction{0.0, 1.0};
        for (const char *n : {"batch_size", "buffer_size", "num_shards", "cycle_length", "block_length", "num_parallel_calls",
                              "depth", "units", "n", "epochs", "replicas", "keep", "step_size", "decay_steps", "steps_per_epoch", "steps"})
            m.insert(QString::fromLatin1(n), atLeastOne);
        for (const char *n : {"index", "threads", "every_steps", "warmup_steps", "seed"})
            m.insert(QString::fromLatin1(n), nonNegative);
        for (const char *n : {"count", "adapt_elements"})
            m.insert(QString::fromLatin1(n), ParamRange{-1.0, std::nullopt});
        for (const char *n : {"stddev", "learning_rate", "initial_learning_rate", "loss_weight", "weight_decay", "alpha", "gamma",
                              "warmup_target", "epsilon"})
            m.insert(QString::fromLatin1(n), nonNegative);
        for (const char *n : {"delta", "global_clipnorm"})
            m.insert(QString::fromLatin1(n), positive);
        for (const char *n : {"momentum", "rho", "beta_1", "beta_2", "label_smoothing"})
            m.insert(QString::fromLatin1(n), fraction);
        m.insert(QStringLiteral("rate"), ParamRange{0.0, 1.0, false, true});
        m.insert(QStringLiteral("split"), ParamRange{0.0, 1.0, true, true});
        return m;
    }();
    return byName.value(spec.name);
}

QStringList choicesOf(const QString &type)
{
    for (const QLatin1String prefix : {QLatin1String("enum:"), QLatin1String("multi:")})
        if (type.startsWith(prefix))
            return type.mid(prefix.size()).split(QLatin1Char('|')); // "enum:|GZIP" keeps its empty choice
    return {};
}

bool isAutotune(const QJsonValue &value)
{
    return (value.isString() && value.toString() == QLatin1String("AUTOTUNE")) || (value.isDouble() && value.toDouble() == -1.0);
}

bool isSeedParam(const ParamSpec &spec)
{
    return spec.name == QLatin1String("seed");
}

QString placeholderFor(const ParamSpec &spec)
{
    if (!spec.defaultValue.isEmpty())
        return spec.defaultValue;
    return spec.required ? QObject::tr("required") : QObject::tr("not set");
}

QString formatNumber(double value)
{
    // The shortest text that reads back as the same double: 0.1 stays "0.1", 1e-07 stays short.
    return QString::number(value, 'g', QLocale::FloatingPointShortest);
}

QString displayText(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Double:
        return formatNumber(value.toDouble());
    case QJsonValue::String:
        return value.toString();
    case QJsonValue::Bool:
        return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Array:
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    case QJsonValue::Object:
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    case QJsonValue::Undefined:
        break;
    }
    return {};
}

QString toolTipFor(const ParamSpec &spec)
{
    const QString def = spec.required                ? QObject::tr("required")
                        : spec.defaultValue.isEmpty() ? QObject::tr("optional")
                                                      : QObject::tr("default %1").arg(spec.defaultValue.toHtmlEscaped());
    return QStringLiteral("<p><b>%1</b> <i>(%2, %3)</i></p><p>%4</p>")
        .arg(spec.name.toHtmlEscaped(), spec.type.toHtmlEscaped(), def, spec.doc.toHtmlEscaped());
}

} // namespace sluice::widgets
