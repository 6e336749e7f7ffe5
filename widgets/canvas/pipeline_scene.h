#pragma once
// The canvas's scene: a view of a ProjectDocument's pipeline (docs/architecture.md, model and view). It
// mirrors the document — one NodeItem per stage, one EdgeItem per edge — and turns what the user
// does into document edits: dragging from an output port to another stage connects them
// (refused connections say why), a finished drag of stages moves them, deleting removes the
// selection. It never changes the Project itself, so every edit is undoable.
//
// Threading: GUI thread only.

#include "document/project_validator.h"
#include "pipeline/profile/pipeline_stats.h"

#include <QGraphicsScene>
#include <QHash>
#include <QJsonObject>
#include <QPointer>
#include <QStringList>

#include <map>
#include <memory>

class QGraphicsPathItem;

namespace sluice::widgets {

class EdgeItem;
class ModelCardItem;
class ModelGraphItems;
class NodeItem;
class ProjectDocument;

class PipelineScene : public QGraphicsScene
{
    Q_OBJECT
public:
    explicit PipelineScene(ProjectDocument *document, QObject *parent = nullptr);
    ~PipelineScene() override; // quietly: no selectionChanged() while its items go

    ProjectDocument *document() const { return m_document; }
    NodeItem *node(const QString &id) const { return m_nodes.value(id); }
    EdgeItem *edge(const QString &from, const QString &to) const;
    QStringList selectedNodeIds() const;
    void selectNodes(const QStringList &ids);
    int edgeCount() const { return int(m_edges.size()); }

    // Removes the selected stages and edges, as one undoable step.
    void deleteSelection();
    // Shows validation results on the stages (errors outlined, features listed) and draws the
    // model's cards below the stages (model_graph_items.h).
    void setCheck(const ProjectCheck &check);
    // The model's card by key ("layer:d1"); null when the project has no such card.
    ModelCardItem *modelCard(const QString &key) const;
    const ModelGraphItems &modelItems() const { return *m_model; }
    // Live run state: stage utilisation colours and the bottleneck mark; clearActivity() ends it.
    void setStats(const pipeline::PipelineSnapshot &snapshot);
    void clearActivity();

    // Re-reads the document (after an edit, undo or redo).
    void sync();

Q_SIGNALS:
    void statusMessage(const QString &message); // e.g. why a connection was refused
    // A link dragged out of `from`'s output and let go over empty canvas (the view offers the
    // stages that fit there).
    void linkDroppedOnCanvas(const QString &from, QPointF scenePos, QPoint screenPos);
    void nodeActivated(const QString &id);      // double-clicked
    // A model card double-clicked: its list in the model ("inputs", "layers", "outputs") and name.
    void modelCardActivated(const QString &list, const QString &name);

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent *event) override;
    void mouseMoveEvent(QGraphicsSceneMouseEvent *event) override;
    void mouseReleaseEvent(QGraphicsSceneMouseEvent *event) override;
    void mouseDoubleClickEvent(QGraphicsSceneMouseEvent *event) override;
    void drawBackground(QPainter *painter, const QRectF &rect) override;

private:
    NodeItem *nodeAt(QPointF scenePos) const;
    void rebuildEdges();
    void updateEdgesOf(const QString &id);
    void commitMoves();
    void placeModel(); // the model's cards in a band below the stages

    ProjectDocument *m_document;
    QHash<QString, NodeItem *> m_nodes;
    std::vector<EdgeItem *> m_edges;
    std::unique_ptr<ModelGraphItems> m_model; // its items belong to the scene
    QGraphicsPathItem *m_pendingConnection = nullptr; // while dragging from an output port
    QString m_connectFrom;
    bool m_pressedOnNode = false;
};

} // namespace sluice::widgets
