#pragma once
// What an editor needs to know about one parameter, whoever documents it: a pipeline op's
// ParamInfo, a Keras layer's LayerParamDoc or the training object's keys all become a ParamSpec,
// so one set of editors serves the inspector and the model panel alike.
//
// Threading: plain values; the functions are pure and may be called from any thread.

#include <QJsonValue>
#include <QString>
#include <QStringList>

#include <optional>

namespace sluice::pipeline {
struct ParamInfo;
}
namespace sluice::train {
struct LayerParamDoc;
}

namespace sluice::widgets {

// Inclusive or open bounds of a number; both open-ended when unset.
struct ParamRange
{
    std::optional<double> min, max;
    bool minOpen = false, maxOpen = false;
};

struct ParamSpec
{
    QString name;
    QString type;         // core's type string: "int", "int|AUTOTUNE", "enum:a|b", "multi:a|b", "json", …
    QString defaultValue; // as written in a project file; empty when none is documented
    QString doc;
    bool required = false;           // every node must set it (the placeholder says so)
    std::optional<ParamRange> range; // unset: rangeFor() picks one from the name
    // Shown only while the parameter named `visibleWhenParam` holds one of `visibleWhenValues`
    // (map's `depth` only for one_hot…); an empty name: always shown.
    QString visibleWhenParam;
    QStringList visibleWhenValues;

    bool operator==(const ParamSpec &other) const;
};

// What the editors may offer besides the value: the features of the node's input (feature
// pickers) and the project's folder (file pickers write paths relative to it when inside).
struct ParamContext
{
    QStringList features;
    QString projectFolder;
    QStringList moduleFolders; // where "module:function" names are looked for (folder, python_path)
};

ParamSpec toSpec(const pipeline::ParamInfo &info);
ParamSpec toSpec(const train::LayerParamDoc &info);

// The sensible bounds of a numeric parameter: the spec's own, else by its name (batch_size and
// buffer_size at least 1, counts at least -1, rates in [0, 1)…), else none.
ParamRange rangeFor(const ParamSpec &spec);

// "enum:a|b" → {"a", "b"} (also "multi:"); empty for other types.
QStringList choicesOf(const QString &type);

bool isAutotune(const QJsonValue &value); // "AUTOTUNE" or -1, as core's Params::count accepts
bool isSeedParam(const ParamSpec &spec);

// A value as a user types it: numbers without exponent noise, strings bare, the rest as JSON.
QString displayText(const QJsonValue &value);
QString formatNumber(double value);

// What an empty editor shows: the default, else "required" or "not set".
QString placeholderFor(const ParamSpec &spec);

// The rich-text tooltip of a parameter: name, type, default and its documentation.
QString toolTipFor(const ParamSpec &spec);

} // namespace sluice::widgets
