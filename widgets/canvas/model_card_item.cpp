#include "canvas/model_card_item.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QPainter>
#include <QPalette>

namespace sluice::widgets {

namespace {

// A tint of the palette's base colour per kind, so inputs and outputs stand out from layers in
// light and dark themes alike.
QColor tinted(const QColor &base, ModelCard::Kind kind)
{
    if (kind == ModelCard::Kind::Layer)
        return base;
    const QColor tint = kind == ModelCard::Kind::Input ? QColor(70, 130, 220) : QColor(60, 170, 90);
    constexpr float mix = 0.16f;
    return QColor::fromRgbF(base.redF() * (1 - mix) + tint.redF() * mix, base.greenF() * (1 - mix) + tint.greenF() * mix,
                            base.blueF() * (1 - mix) + tint.blueF() * mix);
}

} // namespace

ModelCardItem::ModelCardItem(const ModelCard &card)
{
    setZValue(1);
    setAcceptHoverEvents(true);
    setCard(card);
}

QRectF ModelCardItem::boundingRect() const { return QRectF(-2, -2, kWidth + 4, kHeight + 4); }

void ModelCardItem::setCard(const ModelCard &card)
{
    m_card = card;
    QString tip = QStringLiteral("<b>%1</b> (%2)<br>%3").arg(card.name.toHtmlEscaped(), card.title.toHtmlEscaped(), detailText().toHtmlEscaped());
    if (!card.error.isEmpty())
        tip += QStringLiteral("<br><span style='color:#d9363e'>%1</span>").arg(card.error.toHtmlEscaped());
    tip += QStringLiteral("<br><i>%1</i>").arg(tr("Double-click to edit it in the Model panel"));
    setToolTip(tip);
    update();
}

QString ModelCardItem::detailText() const
{
    QStringList parts;
    if (!m_card.shape.isEmpty())
        parts << m_card.shape;
    if (m_card.params >= 0)
        parts << (m_card.params == 1 ? tr("1 param") : tr("%1 params").arg(m_card.params));
    if (!m_card.detail.isEmpty())
        parts << m_card.detail;
    return parts.join(QStringLiteral(" · "));
}

void ModelCardItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *)
{
    const QPalette palette = QApplication::palette();
    painter->setRenderHint(QPainter::Antialiasing);
    const QRectF card(0, 0, kWidth, kHeight);
    painter->setPen(m_card.error.isEmpty() ? QPen(palette.color(QPalette::Mid), 1.2) : QPen(QColor(210, 40, 40), 2.4));
    painter->setBrush(tinted(palette.color(QPalette::Base), m_card.kind));
    painter->drawRoundedRect(card, m_card.kind == ModelCard::Kind::Layer ? 6 : 14, m_card.kind == ModelCard::Kind::Layer ? 6 : 14);

    QFont bold = painter->font();
    bold.setBold(true);
    painter->setFont(bold);
    painter->setPen(palette.color(QPalette::Text));
    const QFontMetricsF boldMetrics(bold);
    painter->drawText(QRectF(10, 4, kWidth - 20, 20), Qt::AlignLeft | Qt::AlignVCenter,
                      boldMetrics.elidedText(QStringLiteral("%1 · %2").arg(m_card.name, m_card.title), Qt::ElideRight, kWidth - 20));
    QFont small = painter->font();
    small.setBold(false);
    small.setPointSizeF(small.pointSizeF() * 0.85);
    painter->setFont(small);
    const QFontMetricsF metrics(small);
    painter->setPen(m_card.error.isEmpty() ? palette.color(QPalette::Text) : QColor(210, 40, 40));
    const QString body = m_card.error.isEmpty() ? detailText() : QStringLiteral("⚠ ") + m_card.error;
    painter->drawText(QRectF(10, 25, kWidth - 20, kHeight - 28), Qt::AlignLeft | Qt::TextWordWrap,
                      metrics.elidedText(body, Qt::ElideRight, 1.9 * (kWidth - 20)));
}

} // namespace sluice::widgets
