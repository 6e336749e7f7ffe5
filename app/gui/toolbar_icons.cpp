#include "gui/toolbar_icons.h"

#include <QMap>
#include <QPainter>
#include <QPixmap>
#include <QSvgRenderer>

namespace sluice::gui {

namespace {

// 24×24 outlines in the style of common monochrome icon sets: 2 px strokes, round joins.
const QMap<QString, QString> &shapes()
{
    static const QMap<QString, QString> s{
        {QStringLiteral("new"), QStringLiteral(R"(<path d="M6 3h8l4 4v14H6z M14 3v4h4" fill="none"/><path d="M12 11v6 M9 14h6" fill="none"/>)")},
        {QStringLiteral("open"), QStringLiteral(R"(<path d="M3 6h6l2 2h10v11H3z" fill="none"/><path d="M3 11h18" fill="none"/>)")},
        {QStringLiteral("save"), QStringLiteral(R"(<path d="M4 4h13l3 3v13H4z" fill="none"/><path d="M8 4v5h8V4 M7 20v-6h10v6" fill="none"/>)")},
        {QStringLiteral("undo"), QStringLiteral(R"(<path d="M9 5L4 10l5 5" fill="none"/><path d="M4 10h10a6 6 0 0 1 0 12h-3" fill="none"/>)")},
        {QStringLiteral("redo"), QStringLiteral(R"(<path d="M15 5l5 5-5 5" fill="none"/><path d="M20 10H10a6 6 0 0 0 0 12h3" fill="none"/>)")},
        {QStringLiteral("delete"), QStringLiteral(R"(<path d="M4 7h16 M9 7V4h6v3 M6 7l1 13h10l1-13 M10 11v6 M14 11v6" fill="none"/>)")},
        {QStringLiteral("run"), QStringLiteral(R"(<path d="M7 4l13 8-13 8z" fill="currentColor"/>)")},
        {QStringLiteral("pause"), QStringLiteral(R"(<path d="M6 4h4v16H6z M14 4h4v16h-4z" fill="currentColor"/>)")},
        {QStringLiteral("stop"), QStringLiteral(R"(<path d="M5 5h14v14H5z" fill="currentColor"/>)")},
        {QStringLiteral("preview"), QStringLiteral(R"(<path d="M2 12s4-7 10-7 10 7 10 7-4 7-10 7S2 12 2 12z" fill="none"/><circle cx="12" cy="12" r="3" fill="currentColor"/>)")},
        {QStringLiteral("fit"), QStringLiteral(R"(<path d="M4 9V4h5 M15 4h5v5 M20 15v5h-5 M9 20H4v-5" fill="none"/><path d="M9 9h6v6H9z" fill="none"/>)")},
        {QStringLiteral("arrange"), QStringLiteral(R"(<path d="M2 9h5v6H2z M10 4h5v6h-5z M10 14h5v6h-5z M17 9h5v6h-5z M7 12h3 M15 7h2v3 M15 17h2v-2" fill="none"/>)")},
    };
    return s;
}

QPixmap draw(const QString &shape, const QColor &colour, int size)
{
    const QString svg = QStringLiteral(R"(<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="24" height="24" )"
                                       R"(stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">%1</svg>)")
                            .arg(shape)
                            .replace(QStringLiteral("currentColor"), colour.name());
    QSvgRenderer renderer(svg.toUtf8());
    QPixmap pixmap(size, size);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    renderer.render(&painter);
    return pixmap;
}

} // namespace

QStringList toolbarIconNames() { return shapes().keys(); }

QIcon toolbarIcon(const QString &name, const QPalette &palette)
{
    const auto shape = shapes().constFind(name);
    if (shape == shapes().cend())
        return {};
    QIcon icon;
    for (int size : {16, 24, 32, 48}) {
        icon.addPixmap(draw(*shape, palette.color(QPalette::Active, QPalette::WindowText), size), QIcon::Normal);
        icon.addPixmap(draw(*shape, palette.color(QPalette::Disabled, QPalette::WindowText), size), QIcon::Disabled);
    }
    return icon;
}

} // namespace sluice::gui
