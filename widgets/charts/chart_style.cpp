#include "charts/chart_style.h"

#include "charts/qcustomplot_include.h"

#include <algorithm>
#include <array>

namespace sluice::widgets::chart_style {

namespace {

bool isDark(const QPalette &palette) { return palette.color(QPalette::Base).lightnessF() < 0.5; }

QColor withAlpha(QColor c, int alpha)
{
    c.setAlpha(alpha);
    return c;
}

} // namespace

QColor lineColor(int index, const QPalette &palette)
{
    // Okabe–Ito (blue, vermillion, green, purple, orange, sky blue) plus brown and grey: told
    // apart with the common colour-vision deficiencies; yellow and black are left out (yellow
    // vanishes on white, black on a dark theme).
    static constexpr std::array<QRgb, 8> colors{0x0072B2, 0xD55E00, 0x009E73, 0xCC79A7, 0xE69F00, 0x56B4E9, 0x8C564B, 0x7F7F7F};
    QColor c = QColor::fromRgb(colors[std::size_t(index % int(colors.size()))]);
    float h = 0, s = 0, l = 0, a = 0;
    c.getHslF(&h, &s, &l, &a);
    // Contrast with the background: light lines on a dark base, dark lines on a light one.
    l = isDark(palette) ? std::max(l, 0.62f) : std::min(l, 0.45f);
    return QColor::fromHslF(h, s, l, a);
}

QPen livePen(const QColor &color, double width, Qt::PenStyle style)
{
    QPen pen(color, width, style);
    pen.setCapStyle(Qt::RoundCap);
    return pen;
}

QPen overlayPen(const QColor &color, Qt::PenStyle style)
{
    QPen pen(withAlpha(color, 110), 1.0, style);
    pen.setCapStyle(Qt::RoundCap);
    return pen;
}

void apply(QCustomPlot &plot, const QPalette &palette)
{
    const QColor base = palette.color(QPalette::Base);
    const QColor text = palette.color(QPalette::Text);
    const QColor grid = withAlpha(palette.color(QPalette::Mid), 110);
    plot.setBackground(QBrush(base));
    for (QCPAxisRect *rect : plot.axisRects()) {
        rect->setBackground(Qt::NoBrush);
        for (QCPAxis *axis : rect->axes()) {
            axis->setBasePen(QPen(withAlpha(text, 160), 1));
            axis->setTickPen(QPen(withAlpha(text, 160), 1));
            axis->setSubTickPen(QPen(withAlpha(text, 100), 1));
            axis->setTickLabelColor(text);
            axis->setLabelColor(text);
            axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
            axis->grid()->setSubGridPen(Qt::NoPen);
            axis->grid()->setZeroLinePen(QPen(grid, 1));
        }
    }
    if (plot.legend) {
        plot.legend->setBrush(QBrush(withAlpha(base, 215)));
        plot.legend->setBorderPen(QPen(grid));
        plot.legend->setTextColor(text);
    }
}

} // namespace sluice::widgets::chart_style
