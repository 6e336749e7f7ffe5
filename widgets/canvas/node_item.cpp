#include "canvas/node_item.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QPainter>
#include <QPalette>
#include <QStyleOptionGraphicsItem>

namespace sluice::widgets {

namespace {

// Busy colour: from the base colour (idle) towards amber (half busy) and red (saturated), so the
// stage that works hardest stands out whatever the palette.
QColor activityColour(double utilisation, const QColor &base)
{
    const double u = std::clamp(utilisation, 0.0, 1.0);
    const QColor hot = u < 0.5 ? QColor(240, 180, 40) : QColor(220, 60, 40);
    const double mix = u < 0.5 ? u / 0.5 * 0.55 : 0.55 + (u - 0.5) / 0.5 * 0.35;
    return QColor::fromRgbF(float(base.redF() * (1 - mix) + hot.redF() * mix), float(base.greenF() * (1 - mix) + hot.greenF() * mix),
                            float(base.blueF() * (1 - mix) + hot.blueF() * mix));
}

} // namespace

NodeItem::NodeItem(const QString &id, const QString &op, bool takesInput) : m_id(id), m_op(op), m_takesInput(takesInput)
{
    setFlags(ItemIsMovable | ItemIsSelectable | ItemSendsGeometryChanges | ItemIsFocusable);
    setAcceptHoverEvents(true);
    setZValue(1);
    updateToolTip();
}

QRectF NodeItem::boundingRect() const
{
    const double pad = kPortRadius + 2;
    return QRectF(-pad, -14, kWidth + 2 * pad, kHeight + 16);
}

bool NodeItem::isOnOutputPort(QPointF scenePos) const
{
    const QPointF d = scenePos - outputPort();
    return d.x() * d.x() + d.y() * d.y() <= (kPortRadius + 4) * (kPortRadius + 4);
}

void NodeItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const QPalette palette = QApplication::palette();
    painter->setRenderHint(QPainter::Antialiasing);
    const QRectF card(0, 0, kWidth, kHeight);
    const QColor base = palette.color(QPalette::Base);
    const QColor fill = m_utilisation >= 0 ? activityColour(m_utilisation, base) : base;
    QPen border(palette.color(QPalette::Mid), 1.2);
    if (!m_error.isEmpty())
        border = QPen(QColor(210, 40, 40), 2.4);
    if (option->state & QStyle::State_Selected)
        border = QPen(palette.color(QPalette::Highlight), 2.6);
    painter->setPen(border);
    painter->setBrush(fill);
    painter->drawRoundedRect(card, 8, 8);

    // Header band: the op, so a glance tells sources from transformations.
    painter->setPen(palette.color(QPalette::Text));
    QFont bold = painter->font();
    bold.setBold(true);
    painter->setFont(bold);
    const QFontMetricsF metrics(bold);
    painter->drawText(QRectF(10, 4, kWidth - 20, 20), Qt::AlignLeft | Qt::AlignVCenter, metrics.elidedText(m_id, Qt::ElideRight, kWidth - 20));
    QFont small = painter->font();
    small.setBold(false);
    small.setPointSizeF(small.pointSizeF() * 0.85);
    painter->setFont(small);
    const QFontMetricsF smallMetrics(small);
    painter->setPen(palette.color(QPalette::PlaceholderText));
    painter->drawText(QRectF(10, 24, kWidth - 20, 16), Qt::AlignLeft | Qt::AlignVCenter, smallMetrics.elidedText(m_op + (m_summary.isEmpty() ? QString() : QStringLiteral("  ·  ") + m_summary), Qt::ElideRight, kWidth - 20));
    painter->setPen(m_error.isEmpty() ? palette.color(QPalette::Text) : QColor(210, 40, 40));
    const QString third = m_error.isEmpty() ? m_features : QStringLiteral("⚠ ") + m_error;
    // Up to three lines of features (or the error); the tooltip has the whole text.
    painter->drawText(QRectF(10, 41, kWidth - 20, kHeight - 44), Qt::AlignLeft | Qt::TextWordWrap,
                      smallMetrics.elidedText(third, Qt::ElideRight, 2.6 * (kWidth - 20)));

    if (m_bottleneck) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor(220, 60, 40));
        painter->drawRoundedRect(QRectF(kWidth - 84, -13, 82, 14), 4, 4);
        painter->setPen(Qt::white);
        painter->drawText(QRectF(kWidth - 84, -13, 82, 14), Qt::AlignCenter, tr("bottleneck"));
    }

    painter->setPen(QPen(palette.color(QPalette::Dark), 1));
    painter->setBrush(palette.color(QPalette::Button));
    if (m_takesInput)
        painter->drawEllipse(QPointF(0, kHeight / 2), kPortRadius, kPortRadius);
    painter->setBrush(palette.color(QPalette::Highlight));
    painter->drawEllipse(QPointF(kWidth, kHeight / 2), kPortRadius, kPortRadius);
}

void NodeItem::setOp(const QString &op, bool takesInput)
{
    if (op == m_op && takesInput == m_takesInput)
        return;
    m_op = op;
    m_takesInput = takesInput;
    updateToolTip();
    update();
}

void NodeItem::setSummary(const QString &summary)
{
    if (summary == m_summary)
        return;
    m_summary = summary;
    update();
}

void NodeItem::setFeatures(const QString &features)
{
    if (features == m_features)
        return;
    m_features = features;
    updateToolTip();
    update();
}

void NodeItem::setError(const QString &message)
{
    if (message == m_error)
        return;
    m_error = message;
    updateToolTip();
    update();
}

void NodeItem::setActivity(double utilisation, bool bottleneck)
{
    if (utilisation == m_utilisation && bottleneck == m_bottleneck)
        return;
    m_utilisation = utilisation;
    m_bottleneck = bottleneck;
    updateToolTip();
    update();
}

void NodeItem::updateToolTip()
{
    QString tip = QStringLiteral("<b>%1</b> (%2)").arg(m_id.toHtmlEscaped(), m_op.toHtmlEscaped());
    if (!m_features.isEmpty())
        tip += QStringLiteral("<br>emits %1").arg(m_features.toHtmlEscaped());
    if (m_utilisation >= 0)
        tip += QStringLiteral("<br>busy %1%").arg(int(m_utilisation * 100 + 0.5));
    if (m_bottleneck)
        tip += QStringLiteral("<br><b>the bottleneck</b>");
    if (!m_error.isEmpty())
        tip += QStringLiteral("<br><span style='color:#d22'>%1</span>").arg(m_error.toHtmlEscaped());
    setToolTip(tip);
}

QVariant NodeItem::itemChange(GraphicsItemChange change, const QVariant &value)
{
    if (change == ItemPositionHasChanged)
        Q_EMIT moved();
    return QGraphicsObject::itemChange(change, value);
}

} // namespace sluice::widgets
