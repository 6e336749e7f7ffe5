#pragma once
// Colours and pens of the charts, taken from the widget's QPalette so that the light and the dark
// theme both read well: background, axes, grid and legend follow the palette's Base, Text and
// Mid roles; line colours are a colour-blind-safe set (Okabe–Ito) moved in lightness to stand out
// from the palette's background.
//
// Threading: functions without state, GUI thread (they touch QCustomPlot objects).

#include <QColor>
#include <QPalette>
#include <QPen>

class QCustomPlot;

namespace sluice::widgets::chart_style {

// Background, axes, tick labels, grid and legend of every axis rect of `plot`.
void apply(QCustomPlot &plot, const QPalette &palette);

// The index-th line colour (cycles), legible on the palette's Base colour.
QColor lineColor(int index, const QPalette &palette);

// A live line, and the same line of an overlaid past run: thinner, translucent, so the live run
// stays in front.
QPen livePen(const QColor &color, double width = 1.6, Qt::PenStyle style = Qt::SolidLine);
QPen overlayPen(const QColor &color, Qt::PenStyle style = Qt::SolidLine);

} // namespace sluice::widgets::chart_style
