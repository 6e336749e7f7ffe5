#include "pipeline/engine/preview.h"

#include "pipeline/engine/pipeline.h"

#include <cstdio>

namespace sluice::pipeline {

std::string firstValues(const Tensor &t, std::size_t limit)
{
    std::string s = "[";
    const std::uint64_t n = t.isString() ? t.stringValues().size() : t.count();
    for (std::uint64_t i = 0; i < n && i < limit; ++i) {
        if (i)
            s += ", ";
        if (t.isString()) {
            s += "b'" + t.stringValues()[i].substr(0, 24) + "'";
        } else {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.6g", t.valueAsDouble(i));
            s += buf;
        }
    }
    return s + (n > limit ? ", …]" : "]");
}

Result<StagePreview> previewStage(const Project &project, const std::string &node, std::size_t elements, std::size_t valuesPerCell)
{
    PipelineOptions options;
    options.outputNode = node;
    options.autotune = false;
    auto built = Pipeline::build(project, options);
    if (!built)
        return built.error();
    Pipeline &pipe = **built;
    StagePreview preview;
    preview.node = node;
    preview.emits = pipe.elementSpec().text();
    for (const FeatureSpec &f : pipe.elementSpec().features) {
        preview.features.push_back(f.name);
        preview.types.push_back(f.type.name());
    }
    for (std::size_t i = 0; i < elements; ++i) {
        auto next = pipe.next();
        if (!next)
            return next.error();
        if (!*next) {
            preview.ended = true;
            break;
        }
        std::vector<PreviewCell> row;
        for (const Tensor &t : (*next)->tensors)
            row.push_back({shapeText(t.shape()), firstValues(t, valuesPerCell)});
        preview.rows.push_back(std::move(row));
    }
    pipe.cancel();
    return preview;
}

} // namespace sluice::pipeline
