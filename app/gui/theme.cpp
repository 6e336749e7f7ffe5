#include "gui/theme.h"

#include <QApplication>
#include <QPalette>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>

namespace sluice::gui {

namespace {

const char *kKey = "theme";

struct SystemLook
{
    QPalette palette;
    QString style;
};

// The platform's look, captured before any theme is applied.
const SystemLook &systemLook()
{
    static const SystemLook look{QApplication::palette(), QApplication::style()->name()};
    return look;
}

QPalette darkPalette()
{
    QPalette p;
    const QColor window(45, 47, 51), base(32, 33, 36), text(225, 227, 230), mid(90, 94, 100), highlight(64, 130, 220);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::PlaceholderText, QColor(150, 154, 160));
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::white);
    p.setColor(QPalette::Mid, mid);
    p.setColor(QPalette::Dark, QColor(20, 21, 23));
    p.setColor(QPalette::Light, QColor(70, 73, 78));
    p.setColor(QPalette::Highlight, highlight);
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(110, 170, 255));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(120, 124, 130));
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(120, 124, 130));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(120, 124, 130));
    return p;
}

} // namespace

Theme savedTheme()
{
    const QString name = QSettings().value(kKey, QStringLiteral("system")).toString();
    return name == QLatin1String("dark") ? Theme::Dark : name == QLatin1String("light") ? Theme::Light : Theme::System;
}

QString themeName(Theme theme)
{
    switch (theme) {
    case Theme::Light:
        return QStringLiteral("light");
    case Theme::Dark:
        return QStringLiteral("dark");
    case Theme::System:
        break;
    }
    return QStringLiteral("system");
}

void applyTheme(Theme theme)
{
    const SystemLook &system = systemLook();
    switch (theme) {
    case Theme::System:
        QApplication::setStyle(QStyleFactory::create(system.style));
        QApplication::setPalette(system.palette);
        break;
    case Theme::Light:
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(QApplication::style()->standardPalette());
        break;
    case Theme::Dark:
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(darkPalette());
        break;
    }
    QSettings().setValue(kKey, themeName(theme));
}

bool paletteIsDark() { return QApplication::palette().color(QPalette::Window).lightness() < 128; }

} // namespace sluice::gui
