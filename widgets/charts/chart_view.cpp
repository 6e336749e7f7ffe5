#include "charts/chart_view.h"

#include "charts/chart_style.h"

#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QMouseEvent>
#include <QSaveFile>
#include <QTextStream>

namespace sluice::widgets {

ChartView::ChartView(QWidget *parent) : QCustomPlot(parent)
{
    setInteractions(QCP::Interactions(QCP::iRangeDrag) | QCP::iRangeZoom);
    setAntialiasedElements(QCP::aeAll);
    setNoAntialiasingOnDrag(true);
    // The legend in a row of its own below the plot: over the data it hid most of it once a
    // few runs were overlaid.
    axisRect()->insetLayout()->take(legend);
    m_legendRow = new QCPLayoutGrid;
    plotLayout()->addElement(plotLayout()->rowCount(), 0, m_legendRow);
    plotLayout()->setRowStretchFactor(plotLayout()->rowCount() - 1, 0.001);
    m_legendRow->addElement(0, 0, legend);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(3);
    legend->setVisible(true);
    legend->setFont(font());
    legend->setIconSize(18, 8);
    setMinimumSize(240, 160);
    m_cursor = new QCPItemStraightLine(this);
    m_cursor->setVisible(false);
    m_cursor->setSelectable(false);
    setMouseTracking(true);
    setContextMenuPolicy(Qt::CustomContextMenu);
    connect(this, &QWidget::customContextMenuRequested, this, &ChartView::openMenu);
    // Looking at a part of the history stops the live rescaling; a double click returns to it.
    connect(this, &QCustomPlot::mousePress, this, [this](QMouseEvent *event) {
        if (event->button() == Qt::LeftButton)
            m_following = false;
    });
    connect(this, &QCustomPlot::mouseWheel, this, [this] { m_following = false; });
    connect(this, &QCustomPlot::mouseDoubleClick, this, [this] { setFollowing(true); });
    connect(mainRect()->axis(QCPAxis::atBottom), qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this, &ChartView::keepWithinData);
}

ChartView::~ChartView()
{
    // A collapsed legend is out of the plot's layout, which frees only what it holds.
    if (!m_legendShown)
        m_legendRow->addElement(0, 0, legend);
}

std::optional<QCPRange> ChartView::dataKeyRange() const
{
    std::optional<QCPRange> range;
    for (int i = 0; i < graphCount(); ++i) {
        bool ok = false;
        const QCPRange keys = graph(i)->getKeyRange(ok);
        if (ok)
            range = range ? QCPRange(std::min(range->lower, keys.lower), std::max(range->upper, keys.upper)) : keys;
    }
    return range;
}

void ChartView::keepWithinData(const QCPRange &range)
{
    // Only the user's drags and zooms are bounded: following sets the data's own range.
    const auto spanned = dataKeyRange();
    if (m_bounding || m_following || !spanned || spanned->size() <= 0)
        return;
    const double margin = 0.02 * spanned->size();
    const QCPRange bounds(spanned->lower - margin, spanned->upper + margin);
    QCPRange bounded = range;
    if (bounded.size() >= bounds.size()) {
        bounded = bounds; // zoomed out past the data: all of it, no more
    } else if (bounded.lower < bounds.lower) {
        bounded = QCPRange(bounds.lower, bounds.lower + range.size());
    } else if (bounded.upper > bounds.upper) {
        bounded = QCPRange(bounds.upper - range.size(), bounds.upper);
    }
    if (bounded.lower == range.lower && bounded.upper == range.upper)
        return;
    m_bounding = true;
    mainRect()->axis(QCPAxis::atBottom)->setRange(bounded);
    m_bounding = false;
}

bool ChartView::logScale() const { return mainRect()->axis(QCPAxis::atLeft)->scaleType() == QCPAxis::stLogarithmic; }

void ChartView::setLogScale(bool log)
{
    QCPAxis *axis = mainRect()->axis(QCPAxis::atLeft);
    if (log == logScale())
        return;
    if (log) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        axis->setNumberFormat(QStringLiteral("gb")); // 1·10^4 rather than 10000
        axis->setNumberPrecision(0);
    } else {
        axis->setScaleType(QCPAxis::stLinear);
        axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        axis->setNumberFormat(QStringLiteral("g"));
        axis->setNumberPrecision(6);
    }
    rescale();
    replot(QCustomPlot::rpQueuedReplot);
}

void ChartView::setLegendShown(bool shown)
{
    if (shown == m_legendShown)
        return;
    m_legendShown = shown;
    // Out of its row when collapsed, so the row takes no height and the plot gets it.
    if (shown)
        m_legendRow->addElement(0, 0, legend);
    else
        m_legendRow->take(legend);
    m_legendRow->simplify();
    legend->setVisible(shown);
    replot(QCustomPlot::rpQueuedReplot);
}

Status ChartView::exportCsv(const QString &path) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
        return Error::io(path.toStdString(), file.errorString().toStdString());
    QTextStream out(&file);
    const auto quoted = [](QString text) {
        if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n')))
            return text;
        return QLatin1Char('"') + text.replace(QLatin1Char('"'), QStringLiteral("\"\"")) + QLatin1Char('"');
    };
    out << "line," << quoted(mainRect()->axis(QCPAxis::atBottom)->label().isEmpty() ? QStringLiteral("x") : mainRect()->axis(QCPAxis::atBottom)->label())
        << ",y\n";
    for (int i = 0; i < graphCount(); ++i) {
        const QString name = quoted(graph(i)->name());
        for (auto it = graph(i)->data()->constBegin(); it != graph(i)->data()->constEnd(); ++it)
            if (!qIsNaN(it->value)) // a gap (a pause) is no point
                out << name << ',' << QString::number(it->key, 'g', 10) << ',' << QString::number(it->value, 'g', 10) << '\n';
    }
    out.flush();
    if (!file.commit())
        return Error::io(path.toStdString(), file.errorString().toStdString());
    return Status::success();
}

Status ChartView::exportPng(const QString &path)
{
    if (!savePng(path, width(), height()))
        return Error::io(path.toStdString(), "cannot write the PNG");
    return Status::success();
}

void ChartView::openMenu(const QPoint &at)
{
    delete m_menu;
    m_menu = new QMenu(this);
    m_menu->setObjectName(QStringLiteral("chartMenu"));
    m_menu->setAttribute(Qt::WA_DeleteOnClose);
    QAction *follow = m_menu->addAction(tr("&Reset View (follow the data)"), this, [this] { setFollowing(true); });
    follow->setObjectName(QStringLiteral("resetView"));
    QAction *log = m_menu->addAction(tr("&Logarithmic Scale"), this, [this](bool on) { setLogScale(on); });
    log->setObjectName(QStringLiteral("logScale"));
    log->setCheckable(true);
    log->setChecked(logScale());
    QAction *legendAction = m_menu->addAction(tr("Show &Legend"), this, [this](bool on) { setLegendShown(on); });
    legendAction->setObjectName(QStringLiteral("showLegend"));
    legendAction->setCheckable(true);
    legendAction->setChecked(m_legendShown);
    m_menu->addSeparator();
    QAction *png = m_menu->addAction(tr("Export &PNG…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export Chart"), objectName() + QStringLiteral(".png"), tr("PNG images (*.png)"));
        if (!path.isEmpty())
            if (Status s = exportPng(path); !s.ok())
                QMessageBox::warning(this, tr("Export Chart"), QString::fromStdString(s.error().message()));
    });
    png->setObjectName(QStringLiteral("exportPng"));
    QAction *csv = m_menu->addAction(tr("Export &CSV…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export Chart Data"), objectName() + QStringLiteral(".csv"), tr("CSV files (*.csv)"));
        if (!path.isEmpty())
            if (Status s = exportCsv(path); !s.ok())
                QMessageBox::warning(this, tr("Export Chart Data"), QString::fromStdString(s.error().message()));
    });
    csv->setObjectName(QStringLiteral("exportCsv"));
    m_menu->popup(mapToGlobal(at));
}

void ChartView::setCursorX(double x)
{
    m_cursorX = x;
    const bool shown = !qIsNaN(x);
    if (shown) {
        QCPAxisRect *rect = mainRect();
        m_cursor->setClipAxisRect(rect);
        m_cursor->point1->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        m_cursor->point2->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        m_cursor->point1->setCoords(x, 0);
        m_cursor->point2->setCoords(x, 1);
        QColor colour = palette().color(QPalette::Text);
        colour.setAlphaF(0.45f);
        m_cursor->setPen(QPen(colour, 1, Qt::DashLine));
    }
    if (shown != m_cursor->visible() || shown) {
        m_cursor->setVisible(shown);
        replot(QCustomPlot::rpQueuedReplot);
    }
}

void ChartView::mouseMoveEvent(QMouseEvent *event)
{
    QCustomPlot::mouseMoveEvent(event);
    QCPAxisRect *rect = mainRect();
    if (rect->rect().contains(event->pos())) {
        const double x = rect->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x());
        setCursorX(x);
        Q_EMIT cursorMoved(x);
    }
}

void ChartView::leaveEvent(QEvent *event)
{
    QCustomPlot::leaveEvent(event);
    setCursorX(qQNaN());
    Q_EMIT cursorMoved(qQNaN());
}

void ChartView::setSources(const RunRecord *live, const QList<OverlayRun> &overlays)
{
    m_live = live;
    m_overlays = overlays;
    m_ready = true;
    rebuild();
}

void ChartView::setFollowing(bool follow)
{
    m_following = follow;
    if (follow) {
        rescale();
        replot(QCustomPlot::rpQueuedReplot);
    }
}

void ChartView::rebuild()
{
    clearGraphs();
    chart_style::apply(*this, palette());
    build();
    m_signature = signature();
    if (m_following)
        rescale();
    replot(QCustomPlot::rpQueuedReplot);
}

void ChartView::refresh()
{
    if (signature() != m_signature) {
        rebuild();
        return;
    }
    if (m_following)
        rescale();
    replot(QCustomPlot::rpQueuedReplot); // coalesced by Qt: one repaint per event-loop pass
}

void ChartView::rescale()
{
    rescaleAxes(true);
}

int ChartView::pointCount() const
{
    int n = 0;
    for (int i = 0; i < graphCount(); ++i)
        n += graph(i)->data()->size();
    return n;
}

QCPGraph *ChartView::graphNamed(const QString &name) const
{
    for (int i = 0; i < graphCount(); ++i)
        if (graph(i)->name() == name)
            return graph(i);
    return nullptr;
}

QCPGraph *ChartView::addLine(const RunRecord &record, const QString &key, const QString &name, const QPen &pen, QCPAxisRect *rect)
{
    if (!record.series().contains(key))
        return nullptr; // no point of it yet: the line appears with its first (signature())
    if (!rect)
        rect = mainRect();
    QCPGraph *g = addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    // The record's series is shared, not copied: const_cast because QCPGraph takes a
    // non-const container, though the graph only reads it.
    g->setData(const_cast<RunRecord &>(record).series().series(key));
    g->setName(name);
    g->setPen(pen);
    return g;
}

void ChartView::changeEvent(QEvent *event)
{
    QCustomPlot::changeEvent(event);
    // The line colours depend on the palette too. Not before setSources(): a subclass may still
    // be under construction (build() is virtual).
    if (m_ready && (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange))
        rebuild();
}

} // namespace sluice::widgets
