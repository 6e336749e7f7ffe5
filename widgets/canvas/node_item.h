#pragma once
// One stage on the canvas: a card with the stage's id, its op, what it emits (features with
// dtype and shape, once validated), its input and output ports, and live state — coloured by
// how busy the stage is while a run goes, marked when it is the bottleneck, outlined red with
// the message as tooltip when validation found an error in it.
//
// Threading: GUI thread (a QGraphicsItem of the PipelineScene).

#include <QGraphicsObject>
#include <QString>

namespace sluice::widgets {

class NodeItem : public QGraphicsObject
{
    Q_OBJECT
public:
    enum { Type = UserType + 1 };
    static constexpr double kWidth = 180;
    static constexpr double kHeight = 86;
    static constexpr double kPortRadius = 7;

    NodeItem(const QString &id, const QString &op, bool takesInput);

    int type() const override { return Type; }
    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

    const QString &id() const { return m_id; }
    const QString &op() const { return m_op; }
    bool takesInput() const { return m_takesInput; }
    // Port centres in scene coordinates.
    QPointF inputPort() const { return mapToScene(QPointF(0, kHeight / 2)); }
    QPointF outputPort() const { return mapToScene(QPointF(kWidth, kHeight / 2)); }
    // Whether a scene point lies on the output port (where connections start).
    bool isOnOutputPort(QPointF scenePos) const;

    void setOp(const QString &op, bool takesInput);
    void setSummary(const QString &summary);   // key parameters, one line
    void setFeatures(const QString &features); // "{x: float32 (8,), y: int64 ()}"; empty: unknown
    void setError(const QString &message);     // empty: no error
    void setActivity(double utilisation, bool bottleneck); // utilisation < 0: not running
    const QString &error() const { return m_error; }
    const QString &features() const { return m_features; }
    double utilisation() const { return m_utilisation; }
    bool isBottleneck() const { return m_bottleneck; }

Q_SIGNALS:
    void moved(); // the card's position changed (edges follow)

protected:
    QVariant itemChange(GraphicsItemChange change, const QVariant &value) override;

private:
    void updateToolTip();

    QString m_id, m_op, m_summary, m_features, m_error;
    bool m_takesInput = true;
    double m_utilisation = -1;
    bool m_bottleneck = false;
};

} // namespace sluice::widgets
