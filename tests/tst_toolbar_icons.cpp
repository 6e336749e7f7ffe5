// The workbench's icons read on light and dark themes: each toolbar icon, drawn for the palette,
// stands out from the toolbar's background (WCAG's 3:1 for graphics) in both, and switching the
// theme from the View menu redraws them; an unknown name gives no icon.
#include "gui/main_window.h"
#include "gui/theme.h"
#include "gui/toolbar_icons.h"

#include <QAction>
#include <QApplication>
#include <QImage>
#include <QSettings>
#include <QStandardPaths>
#include <QToolBar>
#include <QtTest>

#include <cmath>

using namespace sluice;

namespace {

double linear(double channel) { return channel <= 0.03928 ? channel / 12.92 : std::pow((channel + 0.055) / 1.055, 2.4); }

// WCAG relative luminance.
double luminance(const QColor &c) { return 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF()); }

// The colour of the icon's drawn pixels (alpha-weighted mean), and how much of it is drawn.
QColor inkOf(const QIcon &icon, double *coverage)
{
    const QImage image = icon.pixmap(24, 24).toImage().convertToFormat(QImage::Format_ARGB32);
    double r = 0, g = 0, b = 0, weight = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) {
            const QColor c = image.pixelColor(x, y);
            r += c.redF() * c.alphaF();
            g += c.greenF() * c.alphaF();
            b += c.blueF() * c.alphaF();
            weight += c.alphaF();
        }
    *coverage = weight / (image.width() * image.height());
    return weight > 0 ? QColor::fromRgbF(float(r / weight), float(g / weight), float(b / weight)) : QColor();
}

double contrast(const QColor &a, const QColor &b)
{
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

} // namespace

class TestToolbarIcons : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName("sluice-tests-icons");
        QCoreApplication::setApplicationName("sluice");
        QSettings().clear();
    }

    void everyNameHasAnIcon()
    {
        const QStringList names = gui::toolbarIconNames();
        QVERIFY(names.size() >= 12);
        for (const QString &name : names)
            QVERIFY2(!gui::toolbarIcon(name, QApplication::palette()).isNull(), qPrintable(name));
        QVERIFY(gui::toolbarIcon("no-such-icon", QApplication::palette()).isNull());
    }

    void toolbarIconsReadOnBothThemes_data()
    {
        QTest::addColumn<QString>("theme");
        QTest::newRow("light") << "light";
        QTest::newRow("dark") << "dark";
    }

    void toolbarIconsReadOnBothThemes()
    {
        QFETCH(QString, theme);
        gui::MainWindow window;
        window.show();
        QAction *choice = window.findChild<QAction *>("theme-" + theme);
        QVERIFY(choice);
        choice->trigger(); // View ▸ Theme, as users switch it
        QCOMPARE(gui::paletteIsDark(), theme == "dark");
        QCoreApplication::processEvents();
        auto *bar = window.findChild<QToolBar *>("mainToolBar");
        QVERIFY(bar);
        const QColor background = bar->palette().color(QPalette::Window);
        int checked = 0;
        for (QAction *action : bar->actions()) {
            if (action->isSeparator())
                continue;
            double coverage = 0;
            const QColor ink = inkOf(action->icon(), &coverage);
            QVERIFY2(coverage > 0.05, qPrintable(action->objectName() + ": nothing drawn"));
            const double ratio = contrast(ink, background);
            QVERIFY2(ratio >= 3.0, qPrintable(QStringLiteral("%1: contrast %2 against the toolbar").arg(action->objectName()).arg(ratio)));
            ++checked;
        }
        QVERIFY(checked >= 11); // new open save, undo redo, run pause stop preview, fit arrange
        gui::applyTheme(gui::Theme::System);
    }
};

QTEST_MAIN(TestToolbarIcons)
#include "tst_toolbar_icons.moc"
