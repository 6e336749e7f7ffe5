#pragma once
// Text typed into a parameter's editor → the JSON value a project file holds, or why not. Pure
// functions, so "checked as you type" and "what is emitted on commit" are the same rule.
//
// Threading: pure; any thread.

#include "inspector/param_spec.h"

#include <QJsonValue>
#include <QString>

namespace sluice::widgets {

struct ParsedValue
{
    QJsonValue value = QJsonValue::Undefined; // Undefined: remove the parameter (back to its default)
    QString error;                            // non-empty: invalid, nothing may be emitted

    bool ok() const { return error.isEmpty(); }
};

// By the spec's type: "int" (and "int|AUTOTUNE", "int|null"), "number", "string", "path",
// "path|glob|list" (paths separated by ';'), and the JSON kinds ("list", "object", "shape",
// "number|list|adapt", anything unknown). Empty text means "not set" (an error when required).
ParsedValue parseParamText(const ParamSpec &spec, const QString &text);

// A number checked against rangeFor(spec); `integer` refuses fractions.
ParsedValue parseNumber(const ParamSpec &spec, const QString &text, bool integer);

// Any JSON value; `text` may be a bare scalar. On failure `error` says where.
ParsedValue parseJson(const QString &text);

// The text an editor shows for a value of this spec (inverse of parseParamText).
QString editText(const ParamSpec &spec, const QJsonValue &value);

} // namespace sluice::widgets
