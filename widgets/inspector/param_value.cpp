// Parsing typed parameter text. Messages read as the rest of Sluice's: what is wrong and what
// was expected, without repeating the parameter's name (the editor sits next to it).
#include "inspector/param_value.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>

#include <cmath>

namespace sluice::widgets {
namespace {

QString tr(const char *text)
{
    return QObject::tr(text);
}

QString bound(double v)
{
    return formatNumber(v);
}

QString checkRange(const ParamRange &r, double v)
{
    const bool low = r.min && (r.minOpen ? v <= *r.min : v < *r.min);
    const bool high = r.max && (r.maxOpen ? v >= *r.max : v > *r.max);
    if (!low && !high)
        return {};
    if (r.min && r.max)
        return tr("must be in %1%2, %3%4").arg(r.minOpen ? "(" : "[", bound(*r.min), bound(*r.max), r.maxOpen ? ")" : "]");
    if (r.min)
        return r.minOpen ? tr("must be greater than %1").arg(bound(*r.min)) : tr("must be at least %1").arg(bound(*r.min));
    return r.maxOpen ? tr("must be less than %1").arg(bound(*r.max)) : tr("must be at most %1").arg(bound(*r.max));
}

// Users type lists the way they say them ("x, y", "(24, 4)"): accepted when the text is not JSON.
QJsonArray lenientList(QString text)
{
    text = text.trimmed();
    if ((text.startsWith(QLatin1Char('(')) && text.endsWith(QLatin1Char(')'))) ||
        (text.startsWith(QLatin1Char('[')) && text.endsWith(QLatin1Char(']'))))
        text = text.mid(1, text.size() - 2);
    QJsonArray items;
    for (const QString &part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString item = part.trimmed();
        bool isNumber = false;
        const double v = item.toDouble(&isNumber);
        if (isNumber)
            items.append(v);
        else if (!item.isEmpty())
            items.append(item);
    }
    return items;
}

bool allIntegers(const QJsonArray &a)
{
    for (const QJsonValue &v : a)
        if (!v.isDouble() || std::trunc(v.toDouble()) != v.toDouble())
            return false;
    return true;
}

bool allNumbers(const QJsonArray &a)
{
    for (const QJsonValue &v : a)
        if (!v.isDouble())
            return false;
    return true;
}

// Integral numbers go out as integers (QJsonValue(qint64)) so a file keeps "3", never "3.0".
QJsonArray withIntegers(const QJsonArray &a)
{
    QJsonArray out;
    for (const QJsonValue &v : a)
        out.append(v.isDouble() && std::trunc(v.toDouble()) == v.toDouble() && std::abs(v.toDouble()) < 9e15 ? QJsonValue(qint64(v.toDouble())) : v);
    return out;
}

} // namespace

ParsedValue parseNumber(const ParamSpec &spec, const QString &raw, bool integer)
{
    const QString text = raw.trimmed();
    if (text.isEmpty())
        return {};
    bool ok = false;
    if (integer) {
        const qint64 v = text.toLongLong(&ok);
        if (!ok)
            return {QJsonValue::Undefined, tr("expected a whole number, got \"%1\"").arg(text)};
        if (const QString e = checkRange(rangeFor(spec), double(v)); !e.isEmpty())
            return {QJsonValue::Undefined, e};
        return {QJsonValue(v), {}};
    }
    const double v = text.toDouble(&ok); // C locale: a project file's "0.5" whatever the desktop's language
    if (!ok || !std::isfinite(v))
        return {QJsonValue::Undefined, tr("expected a number, got \"%1\"").arg(text)};
    if (const QString e = checkRange(rangeFor(spec), v); !e.isEmpty())
        return {QJsonValue::Undefined, e};
    return {QJsonValue(v), {}};
}

ParsedValue parseJson(const QString &raw)
{
    const QString text = raw.trimmed();
    if (text.isEmpty())
        return {};
    // Wrapped in a list so that a bare scalar ("adapt" aside) parses too; offsets shift by one.
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(QStringLiteral("[%1]").arg(text).toUtf8(), &error);
    if (error.error != QJsonParseError::NoError || !doc.isArray() || doc.array().size() != 1)
        return {QJsonValue::Undefined,
                tr("not valid JSON at character %1: %2").arg(std::max(0, error.offset - 1)).arg(error.errorString())};
    return {doc.array().at(0), {}};
}

ParsedValue parseParamText(const ParamSpec &spec, const QString &text)
{
    const QString &type = spec.type;
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty())
        return spec.required ? ParsedValue{QJsonValue::Undefined, tr("required: every node of this stage sets it")} : ParsedValue{};
    if (type == QLatin1String("int|AUTOTUNE")) {
        if (trimmed.compare(QLatin1String("AUTOTUNE"), Qt::CaseInsensitive) == 0 || trimmed == QLatin1String("-1"))
            return {QJsonValue(QStringLiteral("AUTOTUNE")), {}};
        return parseNumber(spec, trimmed, true);
    }
    if (type == QLatin1String("int|null")) {
        if (trimmed == QLatin1String("null"))
            return {QJsonValue(QJsonValue::Null), {}};
        return parseNumber(spec, trimmed, true);
    }
    if (type == QLatin1String("int"))
        return parseNumber(spec, trimmed, true);
    if (type == QLatin1String("number"))
        return parseNumber(spec, trimmed, false);
    if (type == QLatin1String("string") || type == QLatin1String("path"))
        return {QJsonValue(text), {}}; // spaces may matter (a field delimiter)
    if (type == QLatin1String("callable")) {
        const qsizetype colon = trimmed.indexOf(QLatin1Char(':'));
        if (colon <= 0 || colon == trimmed.size() - 1)
            return {QJsonValue::Undefined, tr("\"module:function\": the module's name, a colon, the function's name")};
        return {QJsonValue(trimmed), {}};
    }
    if (type == QLatin1String("path|glob|list")) {
        QJsonArray paths;
        for (const QString &p : trimmed.split(QLatin1Char(';'), Qt::SkipEmptyParts))
            if (!p.trimmed().isEmpty())
                paths.append(p.trimmed());
        if (paths.size() == 1)
            return {paths.at(0), {}};
        return {paths, {}};
    }
    if (type == QLatin1String("number|list|adapt")) {
        if (trimmed == QLatin1String("adapt") || trimmed == QLatin1String("\"adapt\""))
            return {QJsonValue(QStringLiteral("adapt")), {}};
        ParsedValue p = parseJson(trimmed);
        if (!p.ok() || p.value.isString())
            p = {QJsonArray(lenientList(trimmed)), {}};
        if (p.value.isDouble())
            return parseNumber(spec, trimmed, false);
        if (p.value.isArray() && allNumbers(p.value.toArray()) && !p.value.toArray().isEmpty())
            return p;
        return {QJsonValue::Undefined, tr("expected a number, a list of numbers (one per last-axis position) or adapt")};
    }
    if (type == QLatin1String("shape") || type == QLatin1String("list of int")) {
        ParsedValue p = parseJson(trimmed);
        if (!p.ok() || !p.value.isArray())
            p = {QJsonArray(lenientList(trimmed)), {}};
        const QJsonArray dims = p.value.toArray();
        if (!allIntegers(dims))
            return {QJsonValue::Undefined, tr("expected a list of whole numbers such as [24, 4]")};
        int inferred = 0;
        for (const QJsonValue &d : dims) {
            if (d.toDouble() == -1)
                ++inferred;
            else if (d.toDouble() < 0)
                return {QJsonValue::Undefined, tr("dimensions must be positive (-1 once: inferred)")};
        }
        if (inferred > 1)
            return {QJsonValue::Undefined, tr("only one dimension may be -1")};
        return {withIntegers(dims), {}};
    }
    if (type == QLatin1String("list") || type == QLatin1String("members")) {
        ParsedValue p = parseJson(trimmed);
        if (p.ok() && p.value.isArray())
            return {withIntegers(p.value.toArray()), {}};
        if (trimmed.startsWith(QLatin1Char('[')) || trimmed.startsWith(QLatin1Char('{')))
            return p.ok() ? ParsedValue{QJsonValue::Undefined, tr("expected a list")} : p;
        return {withIntegers(lenientList(trimmed)), {}}; // "x, y"
    }
    ParsedValue p = parseJson(trimmed);
    if (!p.ok())
        return p;
    if ((type == QLatin1String("object") || type == QLatin1String("features") || type == QLatin1String("feature_spec")) && !p.value.isObject())
        return {QJsonValue::Undefined, tr("expected a JSON object {\"key\": value, …}")};
    if ((type == QLatin1String("object|list") || type == QLatin1String("columns")) && !p.value.isObject() && !p.value.isArray())
        return {QJsonValue::Undefined, tr("expected a JSON object or a list")};
    return p;
}

QString editText(const ParamSpec &spec, const QJsonValue &value)
{
    if (spec.type == QLatin1String("path|glob|list") && value.isArray()) {
        QStringList paths;
        for (const QJsonValue &p : value.toArray())
            paths << p.toString();
        return paths.join(QStringLiteral("; "));
    }
    if (value.isString() && (spec.type == QLatin1String("json") || spec.type == QLatin1String("object") ||
                             spec.type == QLatin1String("list") || spec.type == QLatin1String("object|list")))
        return QString::fromUtf8(QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact)).mid(1).chopped(1); // quoted
    return displayText(value);
}

} // namespace sluice::widgets
