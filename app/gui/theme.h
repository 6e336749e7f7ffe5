#pragma once
// Light and dark palettes. "System" keeps the palette the platform gave the application at
// start (so the workbench follows the desktop's light or dark setting); "Light" and "Dark" are
// Fusion palettes for desktops that have none. The choice is kept in QSettings.
//
// Threading: GUI thread.

#include <QString>

namespace sluice::gui {

enum class Theme { System, Light, Dark };

Theme savedTheme();
void applyTheme(Theme theme); // and remembers it
QString themeName(Theme theme);
bool paletteIsDark();

} // namespace sluice::gui
