#include "canvas/model_graph_items.h"

#include "canvas/model_card_item.h"

#include <QApplication>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QPainterPath>
#include <QPalette>
#include <QPen>

#include <algorithm>

namespace sluice::widgets {

namespace {

constexpr double kColumnGap = 60;
constexpr double kRowGap = 22;
constexpr double kTitleHeight = 28;

QPainterPath curve(QPointF from, QPointF to)
{
    QPainterPath path(from);
    const double dx = std::max(40.0, (to.x() - from.x()) / 2);
    path.cubicTo(from + QPointF(dx, 0), to - QPointF(dx, 0), to);
    return path;
}

} // namespace

void ModelGraphItems::removeItems()
{
    for (ModelCardItem *card : std::as_const(m_cards))
        delete card;
    m_cards.clear();
    for (QGraphicsItem *line : m_lines)
        delete line;
    m_lines.clear();
    delete m_title;
    m_title = nullptr;
}

void ModelGraphItems::show(QPointF origin, std::optional<QPointF> feedingPort)
{
    removeItems();
    const ModelGraph &graph = m_graph;
    if (graph.isEmpty())
        return;
    const QPalette palette = QApplication::palette();
    m_title = m_scene->addSimpleText(QObject::tr("Model"));
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_title->setBrush(palette.color(QPalette::PlaceholderText));
    m_title->setPos(origin);

    // Columns by depth: a card sits one column right of the deepest card feeding it (the cards
    // come in an order where those are earlier).
    QHash<QString, int> depth, rowsInColumn;
    for (const ModelCard &card : graph.cards) {
        int d = 0;
        for (const QString &from : card.from)
            d = std::max(d, depth.value(from, 0) + 1);
        depth.insert(card.key(), d);
        const int row = rowsInColumn.value(QString::number(d), 0);
        rowsInColumn.insert(QString::number(d), row + 1);
        auto *item = new ModelCardItem(card);
        item->setPos(origin + QPointF(d * (ModelCardItem::kWidth + kColumnGap), kTitleHeight + row * (ModelCardItem::kHeight + kRowGap)));
        m_scene->addItem(item);
        m_cards.insert(card.key(), item);
    }

    const QPen line(palette.color(QPalette::Mid), 1.6);
    for (const ModelCard &card : graph.cards) {
        ModelCardItem *to = m_cards.value(card.key());
        for (const QString &key : card.from)
            if (ModelCardItem *from = m_cards.value(key)) {
                QGraphicsPathItem *path = m_scene->addPath(curve(from->outPort(), to->inPort()), line);
                m_lines.push_back(path);
            }
        // The inputs take the pipeline's output: a dashed line from that stage.
        if (card.kind == ModelCard::Kind::Input && feedingPort) {
            QPen dashed(palette.color(QPalette::Highlight), 1.4, Qt::DashLine);
            m_lines.push_back(m_scene->addPath(curve(*feedingPort, to->inPort()), dashed));
        }
    }
}

} // namespace sluice::widgets
