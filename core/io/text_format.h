#pragma once
// printf-style formatting into a std::string, of any length: the profile's reasons and the CLI's
// tables are written with it (std::format is not in every standard library this project builds with).

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

} // namespace sluice
