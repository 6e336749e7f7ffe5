#include "document/model_graph.h"

#include "model/error_location.h"
#include "train/model/model.h"

#include <QHash>

namespace sluice::widgets {

namespace {

QString text(const nlohmann::json &object, const char *key, const QString &fallback = {})
{
    return object.is_object() && object.contains(key) && object[key].is_string() ? QString::fromStdString(object[key].get<std::string>())
                                                                                 : fallback;
}

const nlohmann::json &list(const nlohmann::json &model, const char *key)
{
    static const nlohmann::json empty = nlohmann::json::array();
    return model.contains(key) && model[key].is_array() ? model[key] : empty;
}

QString batchShape(const train::Shape &shape)
{
    QString out = QStringLiteral("(None");
    for (auto d : shape)
        out += QStringLiteral(", %1").arg(d);
    return out + QLatin1Char(')');
}

} // namespace

QString ModelCard::key() const { return list().chopped(1) + QLatin1Char(':') + name; }

QString ModelCard::list() const
{
    switch (kind) {
    case Kind::Input: return QStringLiteral("inputs");
    case Kind::Layer: return QStringLiteral("layers");
    case Kind::Output: return QStringLiteral("outputs");
    }
    return {};
}

const ModelCard *ModelGraph::card(const QString &key) const
{
    for (const ModelCard &c : cards)
        if (c.key() == key)
            return &c;
    return nullptr;
}

ModelGraph modelGraphOf(const nlohmann::json &model, const train::Model *built, const Error *error)
{
    ModelGraph graph;
    if (!model.is_object())
        return graph;
    QHash<QString, QString> keyByName; // what a layer's "inputs" may name: inputs and earlier layers
    for (const auto &j : list(model, "inputs")) {
        ModelCard card;
        card.kind = ModelCard::Kind::Input;
        card.name = text(j, "name");
        card.title = QStringLiteral("Input");
        card.detail = QStringLiteral("feature %1").arg(text(j, "feature", card.name));
        keyByName.insert(card.name, card.key());
        graph.cards << card;
    }
    QString previous = graph.cards.size() == 1 ? graph.cards.front().key() : QString();
    const auto &layers = list(model, "layers");
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const auto &j = layers[i];
        ModelCard card;
        card.title = text(j, "class_name", QStringLiteral("?"));
        card.name = text(j, "name", QStringLiteral("%1_%2").arg(card.title).arg(i));
        QStringList names;
        if (j.is_object() && j.contains("inputs") && j["inputs"].is_string())
            names << QString::fromStdString(j["inputs"].get<std::string>());
        else if (j.is_object() && j.contains("inputs") && j["inputs"].is_array())
            for (const auto &n : j["inputs"])
                if (n.is_string())
                    names << QString::fromStdString(n.get<std::string>());
        if (j.is_object() && !j.contains("inputs") && !previous.isEmpty())
            card.from << previous;
        for (const QString &n : names)
            if (keyByName.contains(n))
                card.from << keyByName.value(n);
        keyByName.insert(card.name, card.key());
        previous = card.key();
        graph.cards << card;
    }
    for (const auto &j : list(model, "outputs")) {
        ModelCard card;
        card.kind = ModelCard::Kind::Output;
        const QString layer = text(j, "layer");
        card.name = text(j, "name", layer);
        card.title = QStringLiteral("Output");
        const auto &loss = j.is_object() && j.contains("loss") ? j["loss"] : nlohmann::json();
        const QString lossName = loss.is_string() ? QString::fromStdString(loss.get<std::string>()) : text(loss, "name");
        card.detail = lossName.isEmpty() ? QStringLiteral("target %1").arg(text(j, "target"))
                                         : QStringLiteral("target %1 · %2").arg(text(j, "target"), lossName);
        if (keyByName.contains(layer))
            card.from << keyByName.value(layer);
        graph.cards << card;
    }

    if (built) {
        QHash<QString, const train::ModelNode *> nodeByName;
        for (const auto &node : built->nodes())
            nodeByName.insert(QString::fromStdString(node.name), &node);
        for (ModelCard &card : graph.cards) {
            if (card.kind == ModelCard::Kind::Output) {
                const QString layer = card.from.value(0).section(QLatin1Char(':'), 1);
                if (const auto *node = nodeByName.value(layer))
                    card.shape = batchShape(node->shape);
                continue;
            }
            const auto *node = nodeByName.value(card.name);
            if (!node)
                continue;
            card.shape = batchShape(node->shape);
            if (card.kind == ModelCard::Kind::Layer) {
                card.params = 0;
                for (auto p : node->params)
                    card.params += qint64(built->parameters()[p].count);
            }
        }
    }

    // The error on the card it names: by list and index, or by name.
    if (error) {
        const ErrorLocation at = locateError(*error);
        int seen = 0;
        for (ModelCard &card : graph.cards) {
            if (at.list.isEmpty() || card.list() != at.list)
                continue;
            if (seen++ == at.row) {
                card.error = QString::fromStdString(error->message());
                break;
            }
        }
    }
    return graph;
}

} // namespace sluice::widgets
