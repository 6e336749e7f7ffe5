// libFuzzer target: any bytes given as a project file load as a project or fail with an error,
// never a crash; a project that loads writes JSON that loads again to the same JSON, and its
// graph questions (order, output, inputs) answer.
#include "project/project.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const auto document = nlohmann::json::parse(data, data + size, nullptr, false);
    if (document.is_discarded())
        return 0;
    auto project = sluice::Project::fromJson(document, "/nonexistent/fuzz", "/nonexistent/fuzz/project.sluice");
    if (!project.ok())
        return 0;
    const nlohmann::json written = project->toJson();
    auto again = sluice::Project::fromJson(written, "/nonexistent/fuzz", "/nonexistent/fuzz/project.sluice");
    if (!again.ok() || again->toJson() != written)
        std::abort();
    (void)project->topologicalOrder();
    (void)project->outputNode();
    for (const auto &node : project->nodes)
        (void)project->inputsOf(node.id);
    return 0;
}
