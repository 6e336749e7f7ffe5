#pragma once
// The model drawn on the canvas next to the pipeline: its cards (model_card_item.h) in columns
// by depth, left to right as the pipeline runs, in a band below the pipeline's stages, with
// lines between the cards and a dashed line from the stage whose output the inputs take. Kept
// by the PipelineScene and laid out again after every check and every edit of the pipeline.
//
// Threading: GUI thread only.

#include "document/model_graph.h"

#include <QHash>
#include <QPointF>

#include <optional>

#include <vector>

class QGraphicsItem;
class QGraphicsScene;
class QGraphicsSimpleTextItem;

namespace sluice::widgets {

class ModelCardItem;

class ModelGraphItems
{
public:
    explicit ModelGraphItems(QGraphicsScene *scene) : m_scene(scene) {}
    ~ModelGraphItems() = default; // the scene owns and deletes the items

    // The graph to draw from now on (drawn by the next show()).
    void setGraph(const ModelGraph &graph) { m_graph = graph; }
    // Draws the graph with its top-left at `origin`; `feedingPort` is the output port of the
    // stage the inputs bind to (none: no line from the pipeline).
    void show(QPointF origin, std::optional<QPointF> feedingPort);

    ModelCardItem *card(const QString &key) const { return m_cards.value(key); }
    int cardCount() const { return int(m_cards.size()); }
    int lineCount() const { return int(m_lines.size()); }
    const ModelGraph &graph() const { return m_graph; }

private:
    void removeItems();

    QGraphicsScene *m_scene;
    ModelGraph m_graph;
    QHash<QString, ModelCardItem *> m_cards;
    std::vector<QGraphicsItem *> m_lines;
    QGraphicsSimpleTextItem *m_title = nullptr;
};

} // namespace sluice::widgets
