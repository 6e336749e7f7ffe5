#include "gui/workbench.h"

#include "canvas/node_item.h"
#include "canvas/pipeline_scene.h"
#include "document/project_document.h"
#include "gui/main_window.h"
#include "gui/theme.h"

#include <QApplication>
#include <QFileInfo>
#include <QSettings>
#include <QTimer>

#include <cstdio>

namespace sluice::gui {

std::optional<WorkbenchOptions> parseWorkbenchArguments(const QStringList &arguments, QString *error)
{
    WorkbenchOptions options;
    for (int i = 0; i < arguments.size(); ++i) {
        const QString &a = arguments[i];
        auto value = [&](const char *name) -> std::optional<QString> {
            if (i + 1 >= arguments.size()) {
                *error = QStringLiteral("%1: needs a value").arg(QLatin1String(name));
                return std::nullopt;
            }
            return arguments[++i];
        };
        if (a == QLatin1String("--run")) {
            options.run = true;
        } else if (a == QLatin1String("--screenshot")) {
            auto v = value("--screenshot");
            if (!v)
                return std::nullopt;
            options.screenshot = *v;
        } else if (a == QLatin1String("--wait")) {
            auto v = value("--wait");
            if (!v)
                return std::nullopt;
            bool ok = false;
            options.wait = v->toDouble(&ok);
            if (!ok || options.wait < 0 || options.wait > 3600) {
                *error = QStringLiteral("--wait: expected seconds from 0 to 3600, got \"%1\"").arg(*v);
                return std::nullopt;
            }
        } else if (a.startsWith(QLatin1Char('-'))) {
            *error = QStringLiteral("%1: unknown option (the workbench takes [PROJECT] [--run] [--screenshot FILE] [--wait SECONDS])").arg(a);
            return std::nullopt;
        } else if (options.project.isEmpty()) {
            options.project = a;
        } else {
            *error = QStringLiteral("%1: only one project can be opened").arg(a);
            return std::nullopt;
        }
    }
    if (options.run && options.project.isEmpty()) {
        *error = QStringLiteral("--run: needs a PROJECT");
        return std::nullopt;
    }
    return options;
}

bool displayAvailable()
{
    return !qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") || !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

namespace {

// --screenshot: the window as it is now, then quit (exit 1 when the picture or the run failed).
void takeScreenshot(MainWindow &window, const QString &file, bool runFailed)
{
    // A picture of the workbench in use: the bottleneck stage (else the last one) selected, so
    // the inspector shows its parameters.
    if (window.scene() && window.document()) {
        QString pick;
        for (const QString &id : window.document()->nodeIds()) {
            pick = id;
            if (widgets::NodeItem *item = window.scene()->node(id); item && item->isBottleneck())
                break;
        }
        if (!pick.isEmpty())
            window.scene()->selectNodes({pick});
    }
    QApplication::processEvents();
    const bool saved = window.grab().save(file);
    if (!saved)
        std::fprintf(stderr, "sluice: %s: cannot save the screenshot\n", qPrintable(file));
    QApplication::exit(saved && !runFailed ? 0 : 1);
}

} // namespace

int runWorkbench(int &argc, char **argv, const WorkbenchOptions &options)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("sluice"));
    QApplication::setOrganizationName(QStringLiteral("sluice"));
    QApplication::setApplicationDisplayName(QStringLiteral("Sluice"));
    QApplication::setApplicationVersion(QStringLiteral(SLUICE_VERSION));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/sluice.svg")));
    QApplication::setDesktopFileName(QStringLiteral("sluice"));
    applyTheme(savedTheme());

    MainWindow window;
    QSettings settings;
    window.restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    const bool remembered = window.restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    window.show();
    if (!remembered) // once the window has its size
        QTimer::singleShot(0, &window, [&window] { window.applyDefaultLayout(); });
    // After the event loop starts: dialogs (recovery, a broken file) need a shown window.
    QTimer::singleShot(0, &window, [&window, options] {
        if (options.screenshot.isEmpty())
            window.offerRecovery(); // a scripted picture must not wait on a question
        const bool opened = !options.project.isEmpty() && window.openProject(QFileInfo(options.project).absoluteFilePath());
        if (opened && options.run)
            window.startRun();
        if (options.screenshot.isEmpty())
            return;
        if (opened && options.run && window.runSession()->isRunning()) {
            QObject::connect(window.runSession(), &bridge::RunSession::finished, &window, [&window, options](quint64, bridge::RunSession::Status status) {
                // Let the last coalesced updates reach the charts before the picture.
                QTimer::singleShot(int(options.wait * 1000), &window,
                                   [&window, options, status] { takeScreenshot(window, options.screenshot, status == bridge::RunSession::Status::Failed); });
            });
        } else {
            QTimer::singleShot(int(options.wait * 1000), &window, [&window, options, opened] {
                takeScreenshot(window, options.screenshot, (!options.project.isEmpty() && !opened) || (options.run && !window.lastRunOk()));
            });
        }
    });
    return app.exec();
}

} // namespace sluice::gui
