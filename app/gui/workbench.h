#pragma once
// The workbench's entry point: `sluice [PROJECT]` with a display. main() decides between this
// and a headless command before any application object exists (docs/architecture.md, headless before GUI).

#include <QStringList>

#include <optional>

namespace sluice::gui {

struct WorkbenchOptions
{
    QString project;    // opened at start; empty: the welcome page
    QString screenshot; // save a picture of the window here, then quit (documentation, scripts)
    bool run = false;   // start the project's run at once (with --screenshot: picture at its end)
    double wait = 2.0;  // --screenshot without --run: seconds to wait before the picture
};

// Reads `sluice [PROJECT] [--run] [--screenshot FILE] [--wait SECONDS]`; an error message for
// bad arguments (the caller prints it and exits 2).
std::optional<WorkbenchOptions> parseWorkbenchArguments(const QStringList &arguments, QString *error);
// True when a window can be shown: an X11 or Wayland display, or an explicit QT_QPA_PLATFORM.
bool displayAvailable();
// Runs the workbench (QApplication) and returns the exit code.
int runWorkbench(int &argc, char **argv, const WorkbenchOptions &options);

} // namespace sluice::gui
