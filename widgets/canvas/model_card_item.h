#pragma once
// One card of the model drawn on the canvas below the pipeline: an input (the feature it takes),
// a layer (its name and class, its output shape and parameter count), or an output (its target
// and loss). Outlined red with core's message as tooltip when the model's error names it. The
// cards are a view of the model: neither movable nor selectable (the model panel edits it; a
// double-click takes the user there).
//
// Threading: GUI thread (a QGraphicsItem of the PipelineScene).

#include "document/model_graph.h"

#include <QGraphicsObject>

namespace sluice::widgets {

class ModelCardItem : public QGraphicsObject
{
    Q_OBJECT
public:
    enum { Type = UserType + 3 };
    static constexpr double kWidth = 170;
    static constexpr double kHeight = 62;

    explicit ModelCardItem(const ModelCard &card);

    int type() const override { return Type; }
    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

    const ModelCard &card() const { return m_card; }
    void setCard(const ModelCard &card);
    // The line under the title, as drawn: "(None, 16) · 112 params", the feature or the target.
    QString detailText() const;

    QPointF inPort() const { return mapToScene(QPointF(0, kHeight / 2)); }
    QPointF outPort() const { return mapToScene(QPointF(kWidth, kHeight / 2)); }

private:
    ModelCard m_card;
};

} // namespace sluice::widgets
