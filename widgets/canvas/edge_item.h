#pragma once
// One edge on the canvas: a curve from a stage's output port to another's input port. It can be
// selected and deleted; it follows its stages as they move.
//
// Threading: GUI thread (a QGraphicsItem of the PipelineScene).

#include <QGraphicsPathItem>
#include <QString>

namespace sluice::widgets {

class NodeItem;

class EdgeItem : public QGraphicsPathItem
{
public:
    enum { Type = UserType + 2 };
    EdgeItem(NodeItem *from, NodeItem *to);
    int type() const override { return Type; }

    QString fromId() const;
    QString toId() const;
    void updatePath();
    // The curve between two points, shared with the connection being dragged.
    static QPainterPath curve(QPointF from, QPointF to);

    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;
    QPainterPath shape() const override; // a wider band than the line, so it is easy to click

private:
    NodeItem *m_from;
    NodeItem *m_to;
};

} // namespace sluice::widgets
