// sluice ops [--json | --markdown]: every pipeline op with its parameters, defaults and the
// tf.data equivalent, straight from the op registry (docs/pipeline-ops.md is this command's
// --markdown output, checked by tst_cli so the reference never drifts from the code).
#include "commands/commands.h"

#include "cli/cli_support.h"
#include "pipeline/functions/map_functions.h"
#include "pipeline/engine/op_registry.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace sluice::commands {
namespace {

std::string markdown()
{
    std::string out = "# Pipeline ops\n\n"
                      "Every op a `.sluice` project's pipeline may use, with tf.data's names and semantics. This page is the "
                      "output of `sluice ops --markdown`.\n\n"
                      "A node is `{\"id\": ..., \"op\": ..., \"params\": {...}}`; edges `[from, to]` connect them. Counts "
                      "marked `int|AUTOTUNE` take a number, `\"AUTOTUNE\"` or `-1` (tf.data.AUTOTUNE). Paths are relative "
                      "to the project file's folder. In the default column, *required* marks a parameter every node of the op must set, and "
                      "*optional* one without a default that may be left out: its meaning says what leaving it out does (map's "
                      "function parameters say which functions need them).\n";
    for (const char *group : {"sources", "transformations", "performance"}) {
        out += std::string("\n## ") + (std::string(group) == "sources" ? "Sources" : std::string(group) == "transformations"
                                                                                          ? "Transformations"
                                                                                          : "Performance") + "\n";
        for (const auto &op : pipeline::allOps()) {
            if (op.group != group)
                continue;
            out += "\n### `" + op.name + "`\n\n" + op.summary + "\n";
            if (op.params.empty())
                continue;
            out += "\n| parameter | type | default | meaning |\n|---|---|---|---|\n";
            for (const auto &p : op.params) {
                std::string type = p.type;
                for (char &c : type)
                    if (c == '|')
                        c = '/';
                // A parameter without a default is either required or optional with a meaning of
                // its own for being left out, which its doc gives.
                const std::string def = p.required ? "required" : p.defaultValue.empty() ? "optional" : "`" + p.defaultValue + "`";
                out += "| `" + p.name + "` | " + type + " | " + def + " | " + p.doc + " |\n";
            }
            if (op.name == "map") {
                out += "\nFunctions:\n\n";
                for (const auto &f : pipeline::mapFunctions()) {
                    std::string params;
                    for (const auto &p : f.params)
                        params += (params.empty() ? "" : ", ") + p;
                    out += "- `" + f.name + "`" + (params.empty() ? "" : " (" + params + ")") + ": " + f.doc + "\n";
                }
            }
        }
    }
    return out;
}

} // namespace

int ops(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription("Lists every pipeline op and its parameters.\n\nExamples:\n  sluice ops\n  sluice ops --markdown > ops.md\n"
                                     "  sluice ops --json > ops.json");
    parser.addOption({"json", "As JSON."});
    parser.addOption({"markdown", "As the Markdown reference page."});
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    if (parser.isSet("markdown")) {
        std::fputs(markdown().c_str(), stdout);
        return cli::Success;
    }
    if (parser.isSet("json")) {
        nlohmann::json all = nlohmann::json::array();
        for (const auto &op : pipeline::allOps()) {
            nlohmann::json params = nlohmann::json::array();
            for (const auto &p : op.params)
                params.push_back({{"name", p.name}, {"type", p.type}, {"default", p.defaultValue}, {"required", p.required}, {"doc", p.doc}});
            all.push_back({{"name", op.name}, {"group", op.group}, {"summary", op.summary}, {"params", params},
                           {"min_inputs", op.minInputs}, {"max_inputs", op.maxInputs}});
        }
        std::printf("%s\n", all.dump(2).c_str());
        return cli::Success;
    }
    for (const auto &op : pipeline::allOps())
        std::printf("%-15s %-16s %s\n", op.name.c_str(), op.group.c_str(), op.summary.substr(0, 80).c_str());
    return cli::Success;
}

} // namespace sluice::commands
