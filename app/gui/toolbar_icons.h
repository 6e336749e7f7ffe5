#pragma once
// The workbench's toolbar and menu icons, drawn in the palette's text colour so that they read
// on light and dark themes alike (the style's stock media icons are black, unreadable on a dark
// toolbar). Each is a small monochrome SVG whose `currentColor` becomes the palette's
// WindowText for the normal icon and its disabled WindowText for the disabled one; the window
// draws them again whenever the palette changes.
//
// Threading: GUI thread (QIcon and QPixmap).

#include <QIcon>
#include <QPalette>
#include <QStringList>

namespace sluice::gui {

// Names: new, open, save, undo, redo, delete, run, pause, stop, preview, fit, arrange.
QStringList toolbarIconNames();
// A null icon for an unknown name.
QIcon toolbarIcon(const QString &name, const QPalette &palette);

} // namespace sluice::gui
