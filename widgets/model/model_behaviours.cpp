// The model lists' rules. Labels show the graph's edges ("← x_enc, meta_enc") so a functional
// model reads as a graph in list form; a layer without "inputs" shows the previous one.
#include "model/model_behaviours.h"

#include "model/model_specs.h"

#include <QJsonArray>

namespace sluice::widgets::behaviours {
namespace {

const QString kName = QStringLiteral("name");
const QString kInputs = QStringLiteral("inputs");
const QString kConfig = QStringLiteral("config");
const QString kClass = QStringLiteral("class_name");

QStringList stringsOf(const QJsonValue &v)
{
    if (v.isString())
        return {v.toString()};
    QStringList out;
    for (const QJsonValue &x : v.toArray())
        out << x.toString();
    return out;
}

QStringList namesOf(const QJsonArray &all)
{
    QStringList names;
    for (const QJsonValue &v : all)
        names << v.toObject().value(kName).toString();
    return names;
}

// The parameter that says most about a layer at a glance.
QString layerDetail(const QJsonObject &values)
{
    QStringList parts;
    for (const char *key : {"units", "rate", "n", "target_shape", "activation"}) {
        const QJsonValue v = values.value(QString::fromLatin1(key));
        if (!v.isUndefined() && !v.isNull())
            parts << displayText(v);
    }
    if (values.value(QStringLiteral("return_sequences")).toBool())
        parts << QStringLiteral("sequences");
    return parts.join(QStringLiteral(", "));
}

} // namespace

QString uniqueName(const QString &base, const QJsonArray &all)
{
    const QStringList names = namesOf(all);
    QString name = base;
    for (int i = 2; names.contains(name); ++i)
        name = QStringLiteral("%1_%2").arg(base).arg(i);
    return name;
}

QJsonObject layerValues(const QJsonObject &layer)
{
    QJsonObject values = layer.value(kConfig).toObject();
    for (auto it = layer.begin(); it != layer.end(); ++it)
        if (it.key() != kConfig)
            values.insert(it.key(), it.value());
    return values;
}

void applyLayerEdit(QJsonObject &layer, const QString &key, const QJsonValue &value)
{
    if (key == kClass) {
        const QStringList oldKeys = modelspecs::specNames(modelspecs::layerParamSpecs(layer.value(kClass).toString()));
        const QStringList newKeys = modelspecs::specNames(modelspecs::layerParamSpecs(value.toString()));
        QJsonObject config = layer.value(kConfig).toObject();
        for (const QString &k : oldKeys)
            if (!newKeys.contains(k)) {
                layer.remove(k);
                config.remove(k);
            }
        if (layer.contains(kConfig))
            layer.insert(kConfig, config);
    }
    QJsonObject config = layer.value(kConfig).toObject();
    if (config.contains(key) && !layer.contains(key)) {
        // Kept where Keras wrote it.
        if (value.isUndefined())
            config.remove(key);
        else
            config.insert(key, value);
        layer.insert(kConfig, config);
        return;
    }
    if (value.isUndefined())
        layer.remove(key);
    else
        layer.insert(key, value);
}

void renameReferences(QJsonObject &model, const QString &from, const QString &to)
{
    if (from.isEmpty() || from == to)
        return;
    QJsonArray layers = model.value(QStringLiteral("layers")).toArray();
    for (qsizetype i = 0; i < layers.size(); ++i) {
        QJsonObject layer = layers.at(i).toObject();
        const QJsonValue in = layer.value(kInputs);
        if (in.isString() && in.toString() == from) {
            layer.insert(kInputs, to);
        } else if (in.isArray() && stringsOf(in).contains(from)) {
            QStringList names = stringsOf(in);
            for (QString &n : names)
                if (n == from)
                    n = to;
            layer.insert(kInputs, QJsonArray::fromStringList(names));
        } else {
            continue;
        }
        layers.replace(i, layer);
    }
    if (model.contains(QStringLiteral("layers")))
        model.insert(QStringLiteral("layers"), layers);
    QJsonArray outputs = model.value(QStringLiteral("outputs")).toArray();
    bool changed = false;
    for (qsizetype i = 0; i < outputs.size(); ++i) {
        QJsonObject out = outputs.at(i).toObject();
        if (out.value(QStringLiteral("layer")).toString() == from) {
            out.insert(QStringLiteral("layer"), to);
            outputs.replace(i, out);
            changed = true;
        }
    }
    if (changed)
        model.insert(QStringLiteral("outputs"), outputs);
}

ObjectListEditor::Behaviour inputs(const QStringList *features, const QMap<QString, QString> *shapes)
{
    ObjectListEditor::Behaviour b;
    b.noun = QObject::tr("model input");
    auto featureOf = [](const QJsonObject &item) { return item.value(QStringLiteral("feature")).toString(item.value(kName).toString()); };
    b.label = [shapes, featureOf](const QJsonObject &item, int, const QJsonArray &) {
        const QString feature = featureOf(item);
        const QString shape = shapes->value(feature);
        return QObject::tr("%1 \u2190 %2%3").arg(item.value(kName).toString(), feature, shape.isEmpty() ? QString() : QStringLiteral("  ") + shape);
    };
    b.specs = [shapes, featureOf](const QJsonObject &item, int, const QJsonArray &) {
        return modelspecs::inputSpecs(shapes->value(featureOf(item), QObject::tr("known after the pipeline builds")));
    };
    b.make = [features](const QString &, const QJsonArray &all) {
        QString feature;
        for (const QString &f : *features)
            if (!namesOf(all).contains(f)) {
                feature = f;
                break;
            }
        const QString name = uniqueName(feature.isEmpty() ? QStringLiteral("input") : feature, all);
        return QJsonObject{{kName, name}, {QStringLiteral("feature"), feature.isEmpty() ? name : feature}};
    };
    return b;
}

ObjectListEditor::Behaviour layers(const QJsonObject *model)
{
    ObjectListEditor::Behaviour b;
    b.noun = QObject::tr("layer");
    b.addChoices = modelspecs::layerClassNames();
    b.label = [](const QJsonObject &item, int, const QJsonArray &) {
        // Explicit edges only: a layer without "inputs" takes the one above it, as the list reads.
        QString label = QStringLiteral("%1  %2").arg(item.value(kName).toString(), item.value(kClass).toString());
        if (const QString detail = layerDetail(layerValues(item)); !detail.isEmpty())
            label += QStringLiteral("(%1)").arg(detail);
        if (item.contains(kInputs))
            label += QStringLiteral("  \u2190 ") + stringsOf(item.value(kInputs)).join(QStringLiteral(", "));
        return label;
    };
    b.toolTip = [model](const QJsonObject &item, int row, const QJsonArray &all) {
        QString from = stringsOf(item.value(kInputs)).join(QStringLiteral(", "));
        if (!item.contains(kInputs))
            from = row > 0 ? all.at(row - 1).toObject().value(kName).toString()
                           : model->value(QStringLiteral("inputs")).toArray().at(0).toObject().value(kName).toString();
        const QString cls = item.value(kClass).toString();
        return QObject::tr("<p><b>%1</b> (%2) takes %3</p><p>%4</p>")
            .arg(item.value(kName).toString().toHtmlEscaped(), cls.toHtmlEscaped(), from.toHtmlEscaped(),
                 modelspecs::layerClassDoc(cls).toHtmlEscaped());
    };
    b.specs = [model](const QJsonObject &item, int row, const QJsonArray &all) {
        QStringList inputNames;
        for (const QJsonValue &v : model->value(QStringLiteral("inputs")).toArray())
            inputNames << v.toObject().value(kName).toString();
        return modelspecs::layerSpecs(item, row, inputNames, all);
    };
    b.values = layerValues;
    b.apply = applyLayerEdit;
    b.make = [](const QString &className, const QJsonArray &all) {
        const QString cls = className.isEmpty() ? QStringLiteral("Dense") : className;
        // Keras's own naming: the class in snake case ("layer_normalization").
        QString base;
        for (qsizetype i = 0; i < cls.size(); ++i) {
            if (cls.at(i).isUpper() && i > 0 && !cls.at(i - 1).isUpper())
                base += QLatin1Char('_');
            base += cls.at(i).toLower();
        }
        return QJsonObject{{kClass, cls}, {kName, uniqueName(base, all)}};
    };
    return b;
}

ObjectListEditor::Behaviour outputs(const QJsonObject *model, const QStringList *features)
{
    ObjectListEditor::Behaviour b;
    b.noun = QObject::tr("output");
    b.label = [](const QJsonObject &item, int, const QJsonArray &) {
        const QJsonValue loss = item.value(QStringLiteral("loss"));
        QString label = QObject::tr("%1: %2 \u2192 %3 (%4")
                            .arg(item.value(kName).toString(item.value(QStringLiteral("layer")).toString()),
                                 item.value(QStringLiteral("layer")).toString(), item.value(QStringLiteral("target")).toString(),
                                 loss.isObject() ? loss.toObject().value(kName).toString() : loss.toString());
        if (item.contains(QStringLiteral("loss_weight")))
            label += QStringLiteral(" \u00d7 ") + displayText(item.value(QStringLiteral("loss_weight")));
        return label + QLatin1Char(')');
    };
    b.specs = [model](const QJsonObject &item, int, const QJsonArray &) {
        return modelspecs::outputSpecs(item, namesOf(model->value(QStringLiteral("layers")).toArray()));
    };
    b.make = [model, features](const QString &, const QJsonArray &all) {
        const QJsonArray layers = model->value(QStringLiteral("layers")).toArray();
        const QString layer = layers.isEmpty() ? QString() : layers.last().toObject().value(kName).toString();
        QJsonObject out{{kName, uniqueName(QStringLiteral("output"), all)}, {QStringLiteral("layer"), layer},
                        {QStringLiteral("loss"), QStringLiteral("mse")}};
        if (!features->isEmpty())
            out.insert(QStringLiteral("target"), features->last());
        return out;
    };
    return b;
}

} // namespace sluice::widgets::behaviours
