#pragma once
// printf-style formatting into a std::string, of any length: the profile's reasons and the CLI's
// tables are written with it (std::format is not in every standard library this project builds with).
// And the figures as the CLI's profile table and the workbench's Profile dock both print them.

#include <cstdio>
#include <string>

namespace sluice {

template <typename... Values>
std::string formatText(const char *pattern, Values... values)
{
    const int size = std::snprintf(nullptr, 0, pattern, values...);
    if (size <= 0)
        return {};
    std::string text(std::size_t(size) + 1, '\0');
    std::snprintf(text.data(), text.size(), pattern, values...);
    text.pop_back();
    return text;
}

// A count: 12345 → "12.3k", 2.5e6 → "2.50M", 3e9 → "3.00G", under 10,000 as it is.
inline std::string countText(double v)
{
    if (v >= 1e9)
        return formatText("%.2fG", v / 1e9);
    if (v >= 1e6)
        return formatText("%.2fM", v / 1e6);
    if (v >= 1e4)
        return formatText("%.1fk", v / 1e3);
    return formatText("%.0f", v);
}

// Bytes in decimal units: "512 B", "1.50 MB".
inline std::string humanBytes(double bytes)
{
    const char *units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1000 && u < 4) {
        bytes /= 1000;
        ++u;
    }
    return u == 0 ? formatText("%.0f %s", bytes, units[u]) : formatText("%.2f %s", bytes, units[u]);
}

inline std::string humanRate(double bytesPerSecond) { return humanBytes(bytesPerSecond) + "/s"; }

} // namespace sluice
