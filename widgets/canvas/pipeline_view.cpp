#include "canvas/pipeline_view.h"

#include "canvas/model_card_item.h"
#include "canvas/node_item.h"
#include "canvas/pipeline_scene.h"
#include "canvas/source_from_files.h"
#include "document/project_document.h"
#include "pipeline/engine/op_registry.h"
#include "stage_palette_model.h"

#include <QDragEnterEvent>
#include <QFileInfo>
#include <QMenu>
#include <QMimeData>
#include <QPainter>
#include <QProgressDialog>
#include <QScrollBar>
#include <QThread>
#include <QUndoStack>
#include <QResizeEvent>
#include <QUrl>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <memory>

namespace sluice::widgets {

namespace {

constexpr double kMinZoom = 0.15, kMaxZoom = 4.0, kZoomStep = 1.2;

QStringList localFiles(const QMimeData *data)
{
    QStringList files;
    if (data->hasUrls())
        for (const QUrl &url : data->urls())
            if (url.isLocalFile())
                files << url.toLocalFile();
    return files;
}

} // namespace

PipelineView::PipelineView(PipelineScene *scene, QWidget *parent) : QGraphicsView(scene, parent), m_scene(scene)
{
    setRenderHint(QPainter::Antialiasing);
    setDragMode(QGraphicsView::RubberBandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);
    setAcceptDrops(true);
    setFocusPolicy(Qt::StrongFocus);
    connect(scene, &PipelineScene::statusMessage, this, &PipelineView::statusMessage);
    connect(scene, &PipelineScene::linkDroppedOnCanvas, this, &PipelineView::offerStagesFor);
    // The empty canvas's hint comes and goes with the first stage: repaint all of the viewport.
    connect(scene->document(), &ProjectDocument::changed, viewport(), qOverload<>(&QWidget::update));
}

void PipelineView::scaleBy(double factor)
{
    const double target = std::clamp(zoom() * factor, kMinZoom, kMaxZoom);
    const double applied = target / zoom();
    if (std::abs(applied - 1) > 1e-9)
        scale(applied, applied);
}

void PipelineView::zoomIn()
{
    m_autoFit = false;
    scaleBy(kZoomStep);
}

void PipelineView::zoomOut()
{
    m_autoFit = false;
    scaleBy(1 / kZoomStep);
}

void PipelineView::resetZoom() { setTransform(QTransform()); }

void PipelineView::resizeEvent(QResizeEvent *event)
{
    QGraphicsView::resizeEvent(event);
    if (m_autoFit)
        fitAll();
}

void PipelineView::fitAll()
{
    QRectF bounds;
    for (QGraphicsItem *item : scene()->items())
        if (item->type() == NodeItem::Type || item->type() == ModelCardItem::Type) // stages and the model's cards
            bounds |= item->sceneBoundingRect();
    if (bounds.isEmpty())
        return;
    fitInView(bounds.adjusted(-40, -40, 40, 40), Qt::KeepAspectRatio);
    if (zoom() > 1.0)
        resetZoom(), centerOn(bounds.center());
    else if (zoom() < kMinZoom)
        scaleBy(1.0); // clamps
}

QPointF PipelineView::placementPoint()
{
    const QPointF centre = mapToScene(viewport()->rect().center());
    const double shift = 24.0 * (m_placements++ % 6);
    return centre + QPointF(shift - NodeItem::kWidth / 2, shift - NodeItem::kHeight / 2);
}

QString PipelineView::addStage(const QString &op, QPointF scenePos)
{
    const QString id = m_scene->document()->addNode(op, {}, scenePos);
    if (!id.isEmpty())
        m_scene->selectNodes({id});
    return id;
}

QString PipelineView::addConnectedStage(const QString &from, const QString &op, QPointF scenePos)
{
    ProjectDocument *document = m_scene->document();
    document->undoStack()->beginMacro(tr("Add %1 after %2").arg(op, from));
    const QString id = document->addNode(op, {}, scenePos);
    std::optional<QString> refused;
    if (!id.isEmpty())
        refused = document->connectNodes(from, id);
    document->undoStack()->endMacro();
    if (refused)
        Q_EMIT statusMessage(tr("Not connected: %1").arg(*refused));
    if (!id.isEmpty())
        m_scene->selectNodes({id});
    return id;
}

void PipelineView::shiftDownstream(const QString &first, double dx)
{
    ProjectDocument *document = m_scene->document();
    const auto &edges = document->project().edges;
    std::map<QString, QPointF> moved;
    QStringList pending{first};
    while (!pending.isEmpty()) {
        const QString id = pending.takeFirst();
        if (moved.count(id))
            continue;
        moved[id] = document->position(id) + QPointF(dx, 0);
        for (const PipelineEdge &e : edges)
            if (QString::fromStdString(e.from) == id)
                pending << QString::fromStdString(e.to);
    }
    document->moveNodes(moved);
}

QString PipelineView::insertAfterSelection(const QString &op)
{
    ProjectDocument *document = m_scene->document();
    const QStringList selected = m_scene->selectedNodeIds();
    const pipeline::OpInfo *info = pipeline::findOp(op.toStdString());
    if (selected.size() != 1 || !info || info->maxInputs == 0)
        return addStage(op, placementPoint());
    const QString from = selected.first();
    QStringList next;
    for (const PipelineEdge &e : document->project().edges)
        if (QString::fromStdString(e.from) == from)
            next << QString::fromStdString(e.to);
    const double step = NodeItem::kWidth + 60;
    const QPointF at = document->position(from) + QPointF(step, 0);
    document->undoStack()->beginMacro(tr("Insert %1 after %2").arg(op, from));
    if (next.size() == 1) // between the stage and its next one: the rest moves right
        shiftDownstream(next.first(), step);
    const QString id = document->addNode(op, {}, at);
    std::optional<QString> refused = document->connectNodes(from, id);
    if (!refused && next.size() == 1) {
        document->disconnectNodes(from, next.first());
        if (auto spliced = document->connectNodes(id, next.first())) {
            refused = spliced;
            document->connectNodes(from, next.first()); // the stage after keeps its input
        }
    }
    document->undoStack()->endMacro();
    if (refused)
        Q_EMIT statusMessage(tr("Not connected: %1").arg(*refused));
    m_scene->selectNodes({id});
    return id;
}

void PipelineView::offerStagesFor(const QString &from, QPointF scenePos, QPoint screenPos)
{
    delete m_linkMenu;
    m_linkMenu = new QMenu(this);
    m_linkMenu->setObjectName(QStringLiteral("linkMenu"));
    m_linkMenu->setAttribute(Qt::WA_DeleteOnClose);
    QString group;
    for (const pipeline::OpInfo &op : pipeline::allOps()) {
        if (op.maxInputs == 0)
            continue; // a source takes no input
        if (QString::fromStdString(op.group) != group) {
            group = QString::fromStdString(op.group);
            m_linkMenu->addSection(group);
        }
        QAction *add = m_linkMenu->addAction(QString::fromStdString(op.name));
        add->setToolTip(QString::fromStdString(op.summary));
        connect(add, &QAction::triggered, this, [this, from, scenePos, name = add->text()] { addConnectedStage(from, name, scenePos); });
    }
    m_linkMenu->popup(screenPos);
}

QMenu *PipelineView::linkMenu() const { return m_linkMenu; }

QStringList PipelineView::addSourcesFromFiles(const QStringList &paths, QPointF scenePos)
{
    ProjectDocument *document = m_scene->document();
    if (std::none_of(paths.begin(), paths.end(), readsThrough))
        return addDroppedSources(sourcesFromFiles(paths, document->folder()), scenePos);

    // A TFRecord or CSV file is read through for its spec: on a thread of its own, so the window
    // stays live, behind a progress dialog whose Cancel drops the result.
    auto result = std::make_shared<DroppedFiles>();
    auto cancelled = std::make_shared<bool>(false);
    QThread *reader = QThread::create([result, paths, folder = document->folder()] { *result = sourcesFromFiles(paths, folder); });
    QStringList names;
    for (const QString &p : paths)
        names << QFileInfo(p).fileName();
    auto *progress = new QProgressDialog(tr("Reading the features of %1…").arg(names.join(QStringLiteral(", "))), tr("Cancel"), 0, 0, this);
    progress->setWindowTitle(tr("Adding Sources"));
    progress->setMinimumDuration(300);
    progress->setAutoClose(false);
    progress->setAutoReset(false);
    m_reading = progress;
    connect(progress, &QProgressDialog::canceled, this, [cancelled] { *cancelled = true; });
    connect(reader, &QThread::finished, this, [this, result, cancelled, progress, scenePos] {
        progress->deleteLater();
        if (*cancelled) {
            Q_EMIT statusMessage(tr("Adding the sources was cancelled"));
            return;
        }
        Q_EMIT sourcesAdded(addDroppedSources(*result, scenePos));
    });
    connect(reader, &QThread::finished, reader, &QObject::deleteLater);
    reader->start();
    return {};
}

QStringList PipelineView::addDroppedSources(const DroppedFiles &dropped, QPointF scenePos)
{
    ProjectDocument *document = m_scene->document();
    QStringList ids;
    if (!dropped.sources.empty()) {
        document->undoStack()->beginMacro(tr("Add sources from files"));
        QPointF at = scenePos;
        for (const DroppedSource &source : dropped.sources) {
            ids << document->addNode(source.op, source.params, at);
            at += QPointF(0, NodeItem::kHeight + 40);
        }
        document->undoStack()->endMacro();
        m_scene->selectNodes(ids);
    }
    if (!dropped.problems.isEmpty())
        Q_EMIT statusMessage(dropped.problems.join(QStringLiteral("; ")));
    return ids;
}

void PipelineView::wheelEvent(QWheelEvent *event)
{
    m_autoFit = false;
    if (event->modifiers() & Qt::ControlModifier) {
        const double steps = event->angleDelta().y() / 120.0;
        scaleBy(std::pow(kZoomStep, steps));
        event->accept();
        return;
    }
    QGraphicsView::wheelEvent(event);
}

void PipelineView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::MiddleButton || (event->button() == Qt::LeftButton && m_spaceHeld)) {
        m_panning = true;
        m_autoFit = false;
        m_panOrigin = event->position().toPoint();
        viewport()->setCursor(Qt::ClosedHandCursor);
        event->accept();
        return;
    }
    QGraphicsView::mousePressEvent(event);
}

void PipelineView::mouseMoveEvent(QMouseEvent *event)
{
    if (m_panning) {
        const QPoint delta = event->position().toPoint() - m_panOrigin;
        m_panOrigin = event->position().toPoint();
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() - delta.x());
        verticalScrollBar()->setValue(verticalScrollBar()->value() - delta.y());
        event->accept();
        return;
    }
    QGraphicsView::mouseMoveEvent(event);
}

void PipelineView::mouseReleaseEvent(QMouseEvent *event)
{
    if (m_panning) {
        m_panning = false;
        viewport()->unsetCursor();
        event->accept();
        return;
    }
    QGraphicsView::mouseReleaseEvent(event);
}

void PipelineView::keyPressEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_Space && !event->isAutoRepeat()) {
        m_spaceHeld = true;
        viewport()->setCursor(Qt::OpenHandCursor);
        event->accept();
        return;
    }
    QGraphicsView::keyPressEvent(event);
}

void PipelineView::keyReleaseEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_Space && !event->isAutoRepeat()) {
        m_spaceHeld = false;
        viewport()->unsetCursor();
        event->accept();
        return;
    }
    QGraphicsView::keyReleaseEvent(event);
}

bool PipelineView::acceptsDrop(const QMimeData *mime) const
{
    if (!StagePaletteModel::stageNames(mime).isEmpty())
        return true;
    for (const QString &file : localFiles(mime))
        if (isDataFile(file))
            return true;
    return false;
}

void PipelineView::dragEnterEvent(QDragEnterEvent *event)
{
    if (acceptsDrop(event->mimeData()))
        event->acceptProposedAction();
    else
        event->ignore();
}

void PipelineView::dragMoveEvent(QDragMoveEvent *event)
{
    if (acceptsDrop(event->mimeData()))
        event->acceptProposedAction();
    else
        event->ignore();
}

void PipelineView::dropEvent(QDropEvent *event)
{
    const QPointF at = mapToScene(event->position().toPoint()) - QPointF(NodeItem::kWidth / 2, NodeItem::kHeight / 2);
    const QStringList stages = StagePaletteModel::stageNames(event->mimeData());
    if (!stages.isEmpty()) {
        QPointF p = at;
        for (const QString &op : stages) {
            addStage(op, p);
            p += QPointF(30, 30);
        }
        event->acceptProposedAction();
        setFocus();
        return;
    }
    const QStringList files = localFiles(event->mimeData());
    if (!files.isEmpty()) {
        addSourcesFromFiles(files, at);
        event->acceptProposedAction();
        setFocus();
        return;
    }
    event->ignore();
}

QString PipelineView::emptyHint() const
{
    if (!m_scene->document()->nodeIds().isEmpty())
        return {};
    return tr("An empty pipeline.\n\n"
              "Drag a stage here from the palette, or double-click one (Ctrl+F searches it, Enter adds it).\n"
              "Drop data files here (.npy, .npz, TFRecord, CSV, pictures or a folder of them) to make sources of them.\n"
              "Help ▸ User Guide (F1) walks through a first project.");
}

void PipelineView::drawForeground(QPainter *painter, const QRectF &rect)
{
    QGraphicsView::drawForeground(painter, rect);
    const QString hint = emptyHint();
    if (hint.isEmpty())
        return;
    // In the viewport's own coordinates: the hint stays centred and unscaled whatever the zoom.
    painter->save();
    painter->resetTransform();
    QColor ink = palette().color(QPalette::WindowText);
    ink.setAlphaF(0.6f);
    painter->setPen(ink);
    QFont font = painter->font();
    font.setPointSizeF(font.pointSizeF() * 1.15);
    painter->setFont(font);
    painter->drawText(viewport()->rect().adjusted(24, 24, -24, -24), Qt::AlignCenter | Qt::TextWordWrap, hint);
    painter->restore();
}

} // namespace sluice::widgets
