#pragma once
// Where stages go when nobody placed them: columns by depth (a stage sits one column right of
// its deepest input), rows in file order inside a column, centred vertically. Used for files
// written by hand and for the canvas's "Arrange" action.

#include "project/project.h"

#include <QPointF>

#include <map>
#include <string>

namespace sluice::widgets {

constexpr double kLayoutColumnWidth = 230;
constexpr double kLayoutRowHeight = 120;

std::map<std::string, QPointF> layeredLayout(const Project &project);

} // namespace sluice::widgets
