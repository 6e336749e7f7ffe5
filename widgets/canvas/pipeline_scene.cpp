#include "canvas/pipeline_scene.h"

#include "canvas/edge_item.h"
#include "canvas/model_card_item.h"
#include "canvas/model_graph_items.h"
#include "canvas/node_item.h"
#include "canvas/node_summary.h"
#include "document/project_document.h"
#include "pipeline/engine/op_registry.h"

#include <QApplication>
#include <QGraphicsPathItem>
#include <QGraphicsSceneMouseEvent>
#include <QJsonArray>
#include <QPainter>
#include <QPalette>
#include <QToolTip>

#include <cmath>

namespace sluice::widgets {

namespace {

bool takesInput(const std::string &op)
{
    const pipeline::OpInfo *info = pipeline::findOp(op);
    return !info || info->maxInputs != 0;
}

} // namespace

PipelineScene::PipelineScene(ProjectDocument *document, QObject *parent)
    : QGraphicsScene(parent), m_document(document), m_model(std::make_unique<ModelGraphItems>(this))
{
    setItemIndexMethod(QGraphicsScene::NoIndex); // few items, moved often
    connect(document, &ProjectDocument::changed, this, &PipelineScene::sync);
    sync();
}

PipelineScene::~PipelineScene()
{
    blockSignals(true);
    m_nodes.clear();
    m_edges.clear();
    clear();
}

void PipelineScene::sync()
{
    const Project &project = m_document->project();
    QSet<QString> present;
    for (const PipelineNode &node : project.nodes) {
        const QString id = QString::fromStdString(node.id);
        present.insert(id);
        NodeItem *item = m_nodes.value(id);
        if (!item) {
            item = new NodeItem(id, QString::fromStdString(node.op), takesInput(node.op));
            addItem(item);
            m_nodes.insert(id, item);
            connect(item, &NodeItem::moved, this, [this, id] { updateEdgesOf(id); });
        }
        item->setOp(QString::fromStdString(node.op), takesInput(node.op));
        item->setSummary(nodeSummary(node));
        const QPointF p = m_document->position(id);
        if (item->pos() != p)
            item->setPos(p);
    }
    for (auto it = m_nodes.begin(); it != m_nodes.end();) {
        if (!present.contains(it.key())) {
            delete it.value();
            it = m_nodes.erase(it);
        } else {
            ++it;
        }
    }
    rebuildEdges();
    placeModel();
    // Room around the stages to drop new ones and to pan.
    setSceneRect(itemsBoundingRect().adjusted(-2000, -2000, 2000, 2000));
}

void PipelineScene::rebuildEdges()
{
    QSet<QPair<QString, QString>> selected;
    for (EdgeItem *e : m_edges) {
        if (e->isSelected())
            selected.insert({e->fromId(), e->toId()});
        delete e;
    }
    m_edges.clear();
    for (const PipelineEdge &e : m_document->project().edges) {
        NodeItem *from = m_nodes.value(QString::fromStdString(e.from));
        NodeItem *to = m_nodes.value(QString::fromStdString(e.to));
        if (!from || !to)
            continue;
        auto *edge = new EdgeItem(from, to);
        addItem(edge);
        edge->setSelected(selected.contains({edge->fromId(), edge->toId()}));
        m_edges.push_back(edge);
    }
}

void PipelineScene::updateEdgesOf(const QString &id)
{
    for (EdgeItem *e : m_edges)
        if (e->fromId() == id || e->toId() == id)
            e->updatePath();
}

EdgeItem *PipelineScene::edge(const QString &from, const QString &to) const
{
    for (EdgeItem *e : m_edges)
        if (e->fromId() == from && e->toId() == to)
            return e;
    return nullptr;
}

QStringList PipelineScene::selectedNodeIds() const
{
    QStringList ids;
    for (const PipelineNode &node : m_document->project().nodes) // document order: stable
        if (NodeItem *item = m_nodes.value(QString::fromStdString(node.id)); item && item->isSelected())
            ids << item->id();
    return ids;
}

void PipelineScene::selectNodes(const QStringList &ids)
{
    clearSelection();
    for (const QString &id : ids)
        if (NodeItem *item = m_nodes.value(id))
            item->setSelected(true);
}

void PipelineScene::deleteSelection()
{
    const QStringList nodes = selectedNodeIds();
    std::vector<std::pair<QString, QString>> edges;
    for (EdgeItem *e : m_edges)
        if (e->isSelected() && !nodes.contains(e->fromId()) && !nodes.contains(e->toId()))
            edges.emplace_back(e->fromId(), e->toId());
    if (nodes.isEmpty() && edges.empty())
        return;
    QUndoStack *undo = m_document->undoStack();
    undo->beginMacro(tr("Delete"));
    for (const auto &[from, to] : edges)
        m_document->disconnectNodes(from, to);
    if (!nodes.isEmpty())
        m_document->removeNodes(nodes);
    undo->endMacro();
}

void PipelineScene::setCheck(const ProjectCheck &check)
{
    for (auto it = m_nodes.begin(); it != m_nodes.end(); ++it) {
        const StageCheck stage = check.stages.value(it.key());
        it.value()->setError(stage.error);
        it.value()->setFeatures(stage.features);
    }
    m_model->setGraph(check.modelGraph);
    placeModel();
}

ModelCardItem *PipelineScene::modelCard(const QString &key) const { return m_model->card(key); }

void PipelineScene::placeModel()
{
    QRectF stages;
    for (NodeItem *node : std::as_const(m_nodes))
        stages |= node->sceneBoundingRect();
    const QPointF origin = stages.isNull() ? QPointF(0, 0) : QPointF(stages.left(), stages.bottom() + 70);
    std::optional<QPointF> feeding;
    if (NodeItem *node = m_nodes.value(m_model->graph().feedingNode))
        feeding = node->outputPort();
    m_model->show(origin, feeding);
}

void PipelineScene::setStats(const pipeline::PipelineSnapshot &snapshot)
{
    const QString bottleneck = QString::fromStdString(snapshot.bottleneck);
    QSet<QString> seen;
    for (const pipeline::StageSnapshot &stage : snapshot.stages) {
        const QString id = QString::fromStdString(stage.id);
        if (NodeItem *item = m_nodes.value(id)) {
            item->setActivity(stage.utilisation, id == bottleneck);
            seen.insert(id);
        }
    }
    for (auto it = m_nodes.begin(); it != m_nodes.end(); ++it)
        if (!seen.contains(it.key()))
            it.value()->setActivity(-1, false);
}

void PipelineScene::clearActivity()
{
    for (NodeItem *item : std::as_const(m_nodes))
        item->setActivity(-1, false);
}

NodeItem *PipelineScene::nodeAt(QPointF scenePos) const
{
    for (QGraphicsItem *item : items(scenePos))
        if (item->type() == NodeItem::Type)
            return static_cast<NodeItem *>(item);
    return nullptr;
}

void PipelineScene::mousePressEvent(QGraphicsSceneMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        NodeItem *item = nodeAt(event->scenePos());
        if (item && item->isOnOutputPort(event->scenePos())) {
            // Start a connection instead of a move.
            m_connectFrom = item->id();
            m_pendingConnection = addPath(EdgeItem::curve(item->outputPort(), event->scenePos()),
                                          QPen(QApplication::palette().color(QPalette::Highlight), 2, Qt::DashLine));
            event->accept();
            return;
        }
        m_pressedOnNode = item != nullptr;
    }
    QGraphicsScene::mousePressEvent(event);
}

void PipelineScene::mouseMoveEvent(QGraphicsSceneMouseEvent *event)
{
    if (m_pendingConnection) {
        if (NodeItem *from = m_nodes.value(m_connectFrom))
            m_pendingConnection->setPath(EdgeItem::curve(from->outputPort(), event->scenePos()));
        event->accept();
        return;
    }
    QGraphicsScene::mouseMoveEvent(event);
}

void PipelineScene::mouseReleaseEvent(QGraphicsSceneMouseEvent *event)
{
    if (m_pendingConnection) {
        delete m_pendingConnection;
        m_pendingConnection = nullptr;
        const QString from = m_connectFrom;
        m_connectFrom.clear();
        NodeItem *target = nodeAt(event->scenePos());
        if (target && target->id() != from) {
            if (auto refused = m_document->connectNodes(from, target->id())) {
                const QString text = tr("Not connected: %1").arg(*refused);
                Q_EMIT statusMessage(text);
                QToolTip::showText(event->screenPos(), text);
            }
        } else if (!target) {
            Q_EMIT linkDroppedOnCanvas(from, event->scenePos(), event->screenPos());
        }
        event->accept();
        return;
    }
    QGraphicsScene::mouseReleaseEvent(event);
    if (m_pressedOnNode) {
        m_pressedOnNode = false;
        commitMoves();
    }
}

void PipelineScene::commitMoves()
{
    std::map<QString, QPointF> moved;
    for (NodeItem *item : std::as_const(m_nodes)) {
        const QPointF now = item->pos();
        if (QLineF(now, m_document->position(item->id())).length() > 0.5)
            moved[item->id()] = now;
    }
    if (!moved.empty())
        m_document->moveNodes(moved);
}

void PipelineScene::mouseDoubleClickEvent(QGraphicsSceneMouseEvent *event)
{
    for (QGraphicsItem *item : items(event->scenePos()))
        if (auto *card = qgraphicsitem_cast<ModelCardItem *>(item)) {
            Q_EMIT modelCardActivated(card->card().list(), card->card().name);
            event->accept();
            return;
        }
    if (NodeItem *item = nodeAt(event->scenePos())) {
        Q_EMIT nodeActivated(item->id());
        event->accept();
        return;
    }
    QGraphicsScene::mouseDoubleClickEvent(event);
}

void PipelineScene::drawBackground(QPainter *painter, const QRectF &rect)
{
    // A light dot grid: orientation while panning, in the palette's colours.
    const QPalette palette = QApplication::palette();
    painter->fillRect(rect, palette.color(QPalette::Window));
    const double step = 24;
    QColor dot = palette.color(QPalette::Mid);
    dot.setAlphaF(0.5f);
    painter->setPen(QPen(dot, 1.5));
    const double left = std::floor(rect.left() / step) * step, top = std::floor(rect.top() / step) * step;
    if (rect.width() / step * rect.height() / step > 40000)
        return; // zoomed far out: no grid
    for (double x = left; x < rect.right(); x += step)
        for (double y = top; y < rect.bottom(); y += step)
            painter->drawPoint(QPointF(x, y));
}

} // namespace sluice::widgets
