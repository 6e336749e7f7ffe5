// sluice run PROJECT --profile [--epochs N | --seconds S] [--json]: iterates a pipeline-only
// project headless and reports every stage's figures and the bottleneck.
#include "commands/commands.h"

#include "cli/cli_support.h"
#include "cli/pipeline_options.h"
#include "cli/stats_table.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>

namespace sluice::commands {
namespace {

std::atomic<pipeline::Pipeline *> g_running{nullptr};
extern "C" void onRunInterrupt(int)
{
    // Only an atomic store happens here (Runtime::cancel), which is safe in a signal handler.
    if (auto *p = g_running.load())
        p->cancel();
}

void printJson(const nlohmann::json &j)
{
    std::fputs((j.dump() + "\n").c_str(), stdout);
    std::fflush(stdout);
}

} // namespace

int run(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Runs a project headless. A project with a pipeline and no model: iterates the pipeline and reports each stage.\n\n"
        "Example:\n  sluice run projects/classic-pipeline.sluice --profile --seconds 10");
    parser.addPositionalArgument("PROJECT", "The .sluice project file.");
    parser.addOption({"profile", "Print the per-stage table and the bottleneck at the end."});
    parser.addOption({"epochs", "Passes over the pipeline (default 1; a repeating pipeline runs until --seconds or Ctrl-C).", "N"});
    parser.addOption({"seconds", "Stop after S seconds, starting new passes as needed.", "S"});
    parser.addOption({"json", "One JSON object per line on stdout: periodic {\"event\": \"stats\"} and a final {\"event\": \"run_end\"}."});
    parser.addOption({"stats-interval", "Seconds between stats events (default 1).", "S"});
    parser.addOption({"node", "Run the pipeline up to this node (default: its output).", "ID"});
    cli::addPipelineOptions(parser);
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    auto project = cli::loadProjectArgument(parser, "run");
    if (!project)
        return cli::BadInput;
    if (!project->model.is_null()) {
        cli::printError(project->path(), "has a model; this version of Sluice runs pipeline-only projects (training comes with the "
                                         "training engine). Remove \"model\" or run with a newer Sluice");
        return cli::BadInput;
    }
    auto options = cli::pipelineOptions(parser);
    if (!options)
        return cli::BadInput;
    std::optional<std::uint64_t> epochs;
    std::optional<double> seconds;
    if (parser.isSet("epochs") && !(epochs = cli::parseCount("epochs", parser.value("epochs"), 1)))
        return cli::BadInput;
    if (parser.isSet("seconds") && !(seconds = cli::parseSeconds("seconds", parser.value("seconds"))))
        return cli::BadInput;
    double interval = 1.0;
    if (parser.isSet("stats-interval")) {
        auto s = cli::parseSeconds("stats-interval", parser.value("stats-interval"));
        if (!s)
            return cli::BadInput;
        interval = *s;
    }
    if (!epochs && !seconds)
        epochs = 1;
    const bool json = parser.isSet("json");
    options->statsInterval = std::chrono::milliseconds(std::int64_t(interval * 1000));

    auto pipe = cli::buildPipeline(*project, *options);
    if (!pipe)
        return cli::BadInput;
    if (json)
        pipe->sink().subscribe([](const pipeline::PipelineSnapshot &s) {
            nlohmann::json j = s.toJson();
            j["event"] = "stats";
            printJson(j);
        });

    g_running = pipe.get();
    auto previous = std::signal(SIGINT, onRunInterrupt);
    const bool terminal = isatty(STDERR_FILENO);
    const auto start = std::chrono::steady_clock::now();
    auto lastLine = start;
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    std::string status = "ok", error;
    int pass = 1;
    std::uint64_t elements = 0;
    for (;;) {
        if (seconds && elapsed() >= *seconds)
            break;
        auto r = pipe->next();
        if (!r.ok()) {
            status = pipe->cancelled() && r.error().reason == "cancelled" ? "cancelled" : "failed";
            error = r.error().message();
            break;
        }
        if (!*r) {
            if (epochs && std::uint64_t(pass) >= *epochs)
                break;
            if (elements == 0 && pass == 1 && !seconds)
                break;
            ++pass;
            pipe->restart();
            continue;
        }
        ++elements;
        if (terminal && !json && std::chrono::steady_clock::now() - lastLine > std::chrono::milliseconds(250)) {
            lastLine = std::chrono::steady_clock::now();
            std::fprintf(stderr, "\r\033[K%s", cli::statsLine(pipe->snapshot(), pass).c_str());
        }
    }
    std::signal(SIGINT, previous);
    g_running = nullptr;
    if (terminal && !json)
        std::fputs("\r\033[K", stderr);

    const pipeline::PipelineSnapshot snapshot = pipe->snapshot();
    if (json) {
        nlohmann::json end{{"event", "run_end"}, {"status", status}, {"passes", pass}, {"elements", elements},
                           {"seconds", elapsed()}, {"stats", snapshot.toJson()}};
        if (!error.empty())
            end["error"] = error;
        printJson(end);
    } else if (parser.isSet("profile") || status != "ok") {
        std::fputs(cli::statsTable(snapshot).c_str(), stdout);
    } else {
        std::printf("%s: %llu elements in %d pass%s, %.2f s\n", project->name.c_str(), (unsigned long long)elements, pass,
                    pass == 1 ? "" : "es", elapsed());
    }
    if (status == "failed") {
        cli::printError("run", error);
        return cli::RunFailed;
    }
    if (status == "cancelled") {
        cli::printError("run", "cancelled");
        return cli::RunFailed;
    }
    return cli::Success;
}

} // namespace sluice::commands
