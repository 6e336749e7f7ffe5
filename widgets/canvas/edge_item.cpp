#include "canvas/edge_item.h"

#include "canvas/node_item.h"

#include <QApplication>
#include <QPainter>
#include <QPainterPathStroker>
#include <QPalette>
#include <QStyleOptionGraphicsItem>

namespace sluice::widgets {

EdgeItem::EdgeItem(NodeItem *from, NodeItem *to) : m_from(from), m_to(to)
{
    setFlags(ItemIsSelectable);
    setZValue(0);
    updatePath();
}

QString EdgeItem::fromId() const { return m_from->id(); }
QString EdgeItem::toId() const { return m_to->id(); }

QPainterPath EdgeItem::curve(QPointF from, QPointF to)
{
    QPainterPath path(from);
    const double bend = std::max(40.0, std::abs(to.x() - from.x()) / 2);
    path.cubicTo(from + QPointF(bend, 0), to - QPointF(bend, 0), to);
    return path;
}

void EdgeItem::updatePath() { setPath(curve(m_from->outputPort(), m_to->inputPort())); }

void EdgeItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const QPalette palette = QApplication::palette();
    const bool selected = option->state & QStyle::State_Selected;
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setPen(QPen(selected ? palette.color(QPalette::Highlight) : palette.color(QPalette::Mid), selected ? 3.0 : 2.0));
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(path());
}

QPainterPath EdgeItem::shape() const
{
    QPainterPathStroker stroker;
    stroker.setWidth(10);
    return stroker.createStroke(path());
}

} // namespace sluice::widgets
