#pragma once
// The canvas widget: shows a PipelineScene with zoom (Ctrl+wheel, zoomIn/zoomOut, fit), pan
// (middle button, or Space held while dragging), rubber-band selection, and drops — a stage
// from the palette lands where it is dropped, data files from the file manager become source
// stages with those files as features.
//
// Threading: GUI thread only.

#include <QGraphicsView>
#include <QPointer>
#include <QStringList>

class QMenu;
class QMimeData;

namespace sluice::widgets {

class PipelineScene;

class PipelineView : public QGraphicsView
{
    Q_OBJECT
public:
    explicit PipelineView(PipelineScene *scene, QWidget *parent = nullptr);
    PipelineScene *pipelineScene() const { return m_scene; }

    double zoom() const { return transform().m11(); }
    // Where a stage added without a position (double-click in the palette) goes: the view's
    // centre, nudged so that stages added one after another do not stack exactly.
    QPointF placementPoint();
    // What an empty canvas says about how to start; empty once it holds a stage.
    QString emptyHint() const;
    // The menu of stages that take an input, open after a link was let go on empty canvas.
    QMenu *linkMenu() const;

public Q_SLOTS:
    void zoomIn();
    void zoomOut();
    void resetZoom();
    void fitAll();
    // Adds the op at `scenePos` (or the placement point) as an undoable edit; selects it.
    QString addStage(const QString &op, QPointF scenePos);
    // Adds `op` after the one selected stage, connected, as KNIME does: between that stage and
    // its only next one when it has one (the stages after it move right to make room). Without
    // exactly one selected stage, or for a source op, it is added as addStage() at the placement
    // point. One undoable step; the new stage is selected.
    QString insertAfterSelection(const QString &op);
    // Adds `op` at `scenePos` fed by `from`, as one undoable step.
    QString addConnectedStage(const QString &from, const QString &op, QPointF scenePos);
    QStringList addSourcesFromFiles(const QStringList &paths, QPointF scenePos);

Q_SIGNALS:
    void statusMessage(const QString &message);

protected:
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void keyReleaseEvent(QKeyEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dragMoveEvent(QDragMoveEvent *event) override;
    void dropEvent(QDropEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void drawForeground(QPainter *painter, const QRectF &rect) override;

private:
    void scaleBy(double factor);
    bool acceptsDrop(const QMimeData *mime) const;
    void offerStagesFor(const QString &from, QPointF scenePos, QPoint screenPos);
    // Moves `first` and every stage after it right by `dx` (part of the caller's undo step).
    void shiftDownstream(const QString &first, double dx);

    QPointer<QMenu> m_linkMenu;

    PipelineScene *m_scene;
    bool m_panning = false;
    bool m_spaceHeld = false;
    QPoint m_panOrigin;
    int m_placements = 0;
    bool m_autoFit = true; // keep every stage in view as the window settles, until the user zooms or pans
};

} // namespace sluice::widgets
