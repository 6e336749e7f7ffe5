#include "document/project_document.h"

#include "document/json_qt.h"

#include "document/graph_layout.h"
#include "document/snapshot_command.h"
#include "pipeline/engine/op_registry.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include <algorithm>
#include <set>

namespace sluice::widgets {

namespace {

using nlohmann::json;

json toJson(const QJsonValue &value)
{
    // QJsonValue → nlohmann through text: exact for every JSON value, and edits are rare.
    const QJsonDocument wrapped(QJsonArray{value});
    return json::parse(wrapped.toJson(QJsonDocument::Compact).toStdString())[0];
}

json toJson(const QJsonObject &object) { return fromQtObject(object); }

QJsonObject toQt(const json &object) { return toQtObject(object); }

json &nodesOf(json &document) { return document["pipeline"]["nodes"]; }
json &edgesOf(json &document) { return document["pipeline"]["edges"]; }

json &layoutNodes(json &document)
{
    json &layout = document["layout"];
    if (!layout.is_object())
        layout = json::object();
    json &nodes = layout["nodes"];
    if (!nodes.is_object())
        nodes = json::object();
    return nodes;
}

} // namespace

ProjectDocument::ProjectDocument(const QString &folder, QObject *parent) : QObject(parent), m_folder(folder)
{
    auto empty = Project::fromJson(json{{"format", "sluice-project"}, {"version", Project::kFormatVersion}, {"name", "untitled"},
                                        {"pipeline", {{"nodes", json::array()}, {"edges", json::array()}}}, {"layout", json::object()}},
                                   folder.toStdString(), "untitled project");
    m_project = std::move(*empty);
    connect(&m_undo, &QUndoStack::cleanChanged, this, [this](bool clean) { Q_EMIT dirtyChanged(!clean); });
}

Result<std::unique_ptr<ProjectDocument>> ProjectDocument::open(const QString &path, QObject *parent)
{
    auto project = Project::load(path.toStdString());
    if (!project)
        return project.error();
    const QFileInfo info(path);
    auto document = std::make_unique<ProjectDocument>(info.absolutePath(), parent);
    document->m_project = std::move(*project);
    document->m_filePath = info.absoluteFilePath();
    document->ensurePositions();
    return document;
}

Result<std::unique_ptr<ProjectDocument>> ProjectDocument::recover(const QString &statePath, const QString &originalPath, QObject *parent)
{
    QFile file(statePath);
    if (!file.open(QIODevice::ReadOnly))
        return Error::notFound(statePath.toStdString(), "cannot read the autosaved project");
    const QString folder = originalPath.isEmpty() ? QDir::homePath() : QFileInfo(originalPath).absolutePath();
    auto project = Project::fromText(file.readAll().toStdString(), folder.toStdString(), statePath.toStdString());
    if (!project)
        return project.error();
    auto document = std::make_unique<ProjectDocument>(folder, parent);
    document->m_project = std::move(*project);
    document->m_filePath = originalPath.isEmpty() ? QString() : QFileInfo(originalPath).absoluteFilePath();
    document->ensurePositions();
    document->m_undo.resetClean(); // unsaved until the user saves
    return document;
}

QString ProjectDocument::displayName() const
{
    return m_filePath.isEmpty() ? tr("Untitled") : QFileInfo(m_filePath).fileName();
}

QString ProjectDocument::folder() const
{
    return m_filePath.isEmpty() ? m_folder : QFileInfo(m_filePath).absolutePath();
}

Status ProjectDocument::save(const QString &path)
{
    // Paths are kept as written: after a Save As into another folder, relative data paths
    // resolve against the new file's folder, exactly as `sluice run` will read them.
    const QString absolute = QFileInfo(path).absoluteFilePath();
    // A project is named after its file: an untitled one, or one still named after the file it
    // is saved away from, takes the new file's name (runs and titles show it).
    const std::string oldStem = m_filePath.isEmpty() ? std::string() : QFileInfo(m_filePath).completeBaseName().toStdString();
    const std::string keptName = m_project.name;
    if (keptName.empty() || keptName == "untitled" || (!oldStem.empty() && keptName == oldStem))
        m_project.name = QFileInfo(absolute).completeBaseName().toStdString();
    auto saved = m_project.save(absolute.toStdString());
    if (!saved.ok()) {
        m_project.name = keptName; // nothing was saved: nothing changes
        return saved;
    }
    // Paths in the saved file resolve against its folder from now on.
    if (auto reread = Project::fromJson(m_project.toJson(), QFileInfo(absolute).absolutePath().toStdString(), absolute.toStdString()); reread.ok()) {
        m_project = std::move(*reread);
    }
    const bool renamed = absolute != m_filePath;
    m_filePath = absolute;
    m_undo.setClean();
    if (renamed)
        Q_EMIT filePathChanged(m_filePath);
    return Status::success();
}

template <typename Edit>
void ProjectDocument::edit(const QString &text, Edit &&change, const QString &mergeKey)
{
    json before = state();
    json after = before;
    change(after);
    if (after == before)
        return;
    // Check the result before it enters the stack: an edit that core would refuse is a bug here.
    if (!Project::fromJson(after, folder().toStdString(), "edit").ok())
        return;
    m_undo.push(new SnapshotCommand(this, text, std::move(before), std::move(after), mergeKey));
}

void ProjectDocument::restore(const nlohmann::json &document)
{
    auto project = Project::fromJson(document, folder().toStdString(), m_filePath.isEmpty() ? "untitled project" : m_filePath.toStdString());
    if (!project)
        return; // only states that parsed before are restored
    m_project = std::move(*project);
    Q_EMIT changed();
}

QString ProjectDocument::uniqueId(const QString &base) const
{
    QString stem = base;
    stem.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_]")), QStringLiteral("_"));
    if (stem.isEmpty())
        stem = QStringLiteral("node");
    if (!m_project.findNode(stem.toStdString()))
        return stem;
    for (int n = 2;; ++n) {
        const QString candidate = QStringLiteral("%1_%2").arg(stem).arg(n);
        if (!m_project.findNode(candidate.toStdString()))
            return candidate;
    }
}

QString ProjectDocument::addNode(const QString &op, const QJsonObject &params, QPointF position)
{
    const QString id = uniqueId(op);
    edit(tr("Add %1").arg(op), [&](json &doc) {
        nodesOf(doc).push_back({{"id", id.toStdString()}, {"op", op.toStdString()}, {"params", toJson(params)}});
        layoutNodes(doc)[id.toStdString()] = {{"x", position.x()}, {"y", position.y()}};
    });
    return m_project.findNode(id.toStdString()) ? id : QString();
}

void ProjectDocument::removeNodes(const QStringList &ids)
{
    std::set<std::string> gone;
    for (const QString &id : ids)
        gone.insert(id.toStdString());
    edit(ids.size() == 1 ? tr("Delete %1").arg(ids.front()) : tr("Delete %1 stages").arg(ids.size()), [&](json &doc) {
        json nodes = json::array(), edges = json::array();
        for (const json &node : nodesOf(doc))
            if (!gone.count(node.value("id", std::string())))
                nodes.push_back(node);
        for (const json &edge : edgesOf(doc))
            if (!gone.count(edge[0].get<std::string>()) && !gone.count(edge[1].get<std::string>()))
                edges.push_back(edge);
        nodesOf(doc) = nodes;
        edgesOf(doc) = edges;
        for (const std::string &id : gone)
            layoutNodes(doc).erase(id);
        json &pipeline = doc["pipeline"];
        if (pipeline.contains("output") && gone.count(pipeline["output"].get<std::string>()))
            pipeline.erase("output");
    });
}

void ProjectDocument::moveNodes(const std::map<QString, QPointF> &positions)
{
    edit(positions.size() == 1 ? tr("Move %1").arg(positions.begin()->first) : tr("Move %1 stages").arg(positions.size()), [&](json &doc) {
        for (const auto &[id, p] : positions)
            layoutNodes(doc)[id.toStdString()] = {{"x", p.x()}, {"y", p.y()}};
    });
}

std::optional<QString> ProjectDocument::connectionProblem(const QString &from, const QString &to) const
{
    const PipelineNode *source = m_project.findNode(from.toStdString());
    const PipelineNode *target = m_project.findNode(to.toStdString());
    if (!source || !target)
        return tr("no such stage");
    if (from == to)
        return tr("a stage cannot feed itself");
    for (const PipelineEdge &e : m_project.edges)
        if (e.from == source->id && e.to == target->id)
            return tr("%1 already feeds %2").arg(from, to);
    if (const pipeline::OpInfo *op = pipeline::findOp(target->op)) {
        const int inputs = int(m_project.inputsOf(target->id).size());
        if (op->maxInputs == 0)
            return tr("%1 is a source (%2): it takes no input").arg(to, QString::fromStdString(op->name));
        if (op->maxInputs >= 0 && inputs >= op->maxInputs)
            return op->maxInputs == 1 ? tr("%1 (%2) takes one input and already has one: disconnect it first").arg(to, QString::fromStdString(op->name))
                                      : tr("%1 (%2) takes at most %3 inputs").arg(to, QString::fromStdString(op->name)).arg(op->maxInputs);
    }
    // A cycle: `from` is reachable from `to`.
    const auto below = m_project.downstreamOf(target->id);
    if (std::find(below.begin(), below.end(), source->id) != below.end())
        return tr("connecting %1 to %2 would make a cycle").arg(from, to);
    return std::nullopt;
}

std::optional<QString> ProjectDocument::connectNodes(const QString &from, const QString &to)
{
    if (auto problem = connectionProblem(from, to))
        return problem;
    edit(tr("Connect %1 to %2").arg(from, to), [&](json &doc) { edgesOf(doc).push_back({from.toStdString(), to.toStdString()}); });
    return std::nullopt;
}

void ProjectDocument::disconnectNodes(const QString &from, const QString &to)
{
    edit(tr("Disconnect %1 from %2").arg(from, to), [&](json &doc) {
        json edges = json::array();
        for (const json &e : edgesOf(doc))
            if (!(e[0] == from.toStdString() && e[1] == to.toStdString()))
                edges.push_back(e);
        edgesOf(doc) = edges;
    });
}

void ProjectDocument::setParameter(const QString &id, const QString &name, const QJsonValue &value)
{
    edit(tr("Set %1.%2").arg(id, name), [&](json &doc) {
        for (json &node : nodesOf(doc)) {
            if (node.value("id", std::string()) != id.toStdString())
                continue;
            json &params = node["params"];
            if (!params.is_object())
                params = json::object();
            if (value.isUndefined())
                params.erase(name.toStdString());
            else
                params[name.toStdString()] = toJson(value);
        }
    }, QStringLiteral("param:%1.%2").arg(id, name));
}

void ProjectDocument::setModel(const QJsonObject &model)
{
    edit(tr("Edit the model"), [&](json &doc) {
        if (model.isEmpty())
            doc.erase("model");
        else
            doc["model"] = toJson(model);
    });
}

void ProjectDocument::setTraining(const QJsonObject &training)
{
    edit(tr("Edit training settings"), [&](json &doc) {
        if (training.isEmpty())
            doc.erase("training");
        else
            doc["training"] = toJson(training);
    });
}

void ProjectDocument::autoLayout()
{
    const auto positions = layeredLayout(m_project);
    edit(tr("Arrange stages"), [&](json &doc) {
        for (const auto &[id, p] : positions)
            layoutNodes(doc)[id] = {{"x", p.x()}, {"y", p.y()}};
    });
}

void ProjectDocument::ensurePositions()
{
    // Files written by hand have no layout: place their stages once, without an undo step
    // (positions are GUI-only state; the document is not dirty for it).
    const auto positions = layeredLayout(m_project);
    json doc = state();
    bool added = false;
    for (const auto &[id, p] : positions) {
        json &nodes = layoutNodes(doc);
        const json &known = nodes.contains(id) ? nodes[id] : json();
        if (!known.is_object() || !known.contains("x") || !known.contains("y")) {
            nodes[id] = {{"x", p.x()}, {"y", p.y()}};
            added = true;
        }
    }
    if (added)
        if (auto project = Project::fromJson(doc, folder().toStdString(), m_filePath.toStdString()); project.ok())
            m_project = std::move(*project);
}

QPointF ProjectDocument::position(const QString &id) const
{
    const json &layout = m_project.layout;
    if (layout.is_object() && layout.contains("nodes") && layout["nodes"].is_object()) {
        const json &nodes = layout["nodes"];
        const std::string key = id.toStdString();
        if (nodes.contains(key) && nodes[key].is_object()) {
            const json &p = nodes[key];
            if (p.value("x", json()).is_number() && p.value("y", json()).is_number())
                return {p["x"].get<double>(), p["y"].get<double>()};
        }
    }
    return {};
}

QStringList ProjectDocument::nodeIds() const
{
    QStringList ids;
    for (const PipelineNode &node : m_project.nodes)
        ids << QString::fromStdString(node.id);
    return ids;
}

QJsonObject ProjectDocument::copy(const QStringList &ids) const
{
    std::set<std::string> chosen;
    for (const QString &id : ids)
        chosen.insert(id.toStdString());
    json nodes = json::array(), edges = json::array(), positions = json::object();
    for (const PipelineNode &node : m_project.nodes) {
        if (!chosen.count(node.id))
            continue;
        nodes.push_back({{"id", node.id}, {"op", node.op}, {"params", node.params}});
        const QPointF p = position(QString::fromStdString(node.id));
        positions[node.id] = {{"x", p.x()}, {"y", p.y()}};
    }
    for (const PipelineEdge &e : m_project.edges)
        if (chosen.count(e.from) && chosen.count(e.to))
            edges.push_back({e.from, e.to});
    return toQt({{"nodes", nodes}, {"edges", edges}, {"positions", positions}});
}

QStringList ProjectDocument::paste(const QJsonObject &fragment, QPointF offset)
{
    const json piece = toJson(fragment);
    if (!piece.value("nodes", json()).is_array())
        return {};
    QStringList added;
    edit(tr("Paste"), [&](json &doc) {
        std::map<std::string, std::string> renamed;
        std::set<std::string> taken;
        for (const json &node : nodesOf(doc))
            taken.insert(node.value("id", std::string()));
        for (const json &node : piece["nodes"]) {
            if (!node.is_object() || !node.value("id", json()).is_string() || !node.value("op", json()).is_string())
                continue;
            const std::string old = node["id"];
            std::string fresh = old;
            for (int n = 2; taken.count(fresh); ++n)
                fresh = old + "_" + std::to_string(n);
            taken.insert(fresh);
            renamed[old] = fresh;
            json copy{{"id", fresh}, {"op", node["op"]}, {"params", node.value("params", json::object())}};
            nodesOf(doc).push_back(copy);
            const json p = piece.value("positions", json::object()).value(old, json::object());
            layoutNodes(doc)[fresh] = {{"x", p.value("x", 0.0) + offset.x()}, {"y", p.value("y", 0.0) + offset.y()}};
            added << QString::fromStdString(fresh);
        }
        for (const json &e : piece.value("edges", json::array()))
            if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string() && renamed.count(e[0]) && renamed.count(e[1]))
                edgesOf(doc).push_back({renamed[e[0]], renamed[e[1]]});
    });
    return added;
}

} // namespace sluice::widgets
