#include "pipeline/engine/element.h"

namespace sluice::pipeline {

std::optional<std::size_t> ElementSpec::find(const std::string &name) const
{
    for (std::size_t i = 0; i < features.size(); ++i)
        if (features[i].name == name)
            return i;
    return std::nullopt;
}

std::string ElementSpec::names() const
{
    std::string s;
    for (const auto &f : features)
        s += (s.empty() ? "" : ", ") + f.name;
    return s.empty() ? "none" : s;
}

std::string ElementSpec::text() const
{
    std::string s = "{";
    for (std::size_t i = 0; i < features.size(); ++i)
        s += (i ? ", " : "") + features[i].name + ": " + features[i].type.name() + " " + shapeText(features[i].shape);
    return s + "}";
}

std::uint64_t Element::nbytes() const
{
    std::uint64_t n = 0;
    for (const auto &t : tensors)
        n += t.nbytes();
    return n;
}

} // namespace sluice::pipeline
