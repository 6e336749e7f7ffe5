#pragma once
// The canvas widget: shows a PipelineScene with zoom (Ctrl+wheel, zoomIn/zoomOut, fit), pan
// (middle button, or Space held while dragging), rubber-band selection, and drops — a stage
// from the palette lands where it is dropped, data files from the file manager become source
// stages with those files as features.
//
// Threading: GUI thread only.

#include <QGraphicsView>
#include <QPointer>
#include <QProgressDialog>
#include <QStringList>

class QMenu;

class QMimeData;

namespace sluice::widgets {

class PipelineScene;
struct DroppedFiles;

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
    // Sources for data files dropped at `scenePos`. .npy and .npz files are added at once (their
    // headers are all it reads) and their ids returned. TFRecord and CSV files are read through
    // for their feature spec, which takes a while on a large file: that runs on a thread of its
    // own behind a progress dialog with Cancel, and sourcesAdded() says when the sources are in
    // (nothing is returned then).
    QStringList addSourcesFromFiles(const QStringList &paths, QPointF scenePos);
    // The progress dialog of a drop being read, while there is one.
    QProgressDialog *readingProgress() const { return m_reading; }

Q_SIGNALS:
    void statusMessage(const QString &message);
    void sourcesAdded(const QStringList &ids); // a drop read in the background is in

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

    QStringList addDroppedSources(const DroppedFiles &dropped, QPointF scenePos);

    QPointer<QMenu> m_linkMenu;
    QPointer<QProgressDialog> m_reading;

    PipelineScene *m_scene;
    bool m_panning = false;
    bool m_spaceHeld = false;
    QPoint m_panOrigin;
    int m_placements = 0;
    bool m_autoFit = true; // keep every stage in view as the window settles, until the user zooms or pans
};

} // namespace sluice::widgets
