// sluice run PROJECT: a project with a model trains it (train_command.cpp); a pipeline-only
// project is iterated and every stage's figures and the bottleneck are reported (--profile).
#include "commands/commands.h"

#include "cli/cli_support.h"
#include "cli/pipeline_options.h"
#include "cli/stats_table.h"
#include "events/run_events.h"
#include "commands/run/train_command.h"
#include "pipeline/profile/advice_trial.h"
#include "train/loop/training_config.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <optional>
#include <cstdio>
#include <thread>

namespace sluice::commands {
namespace {

std::atomic<pipeline::Pipeline *> g_running{nullptr};
std::atomic<bool> g_trialCancel{false}; // Ctrl-C during --try-advice's trials
extern "C" void onRunInterrupt(int)
{
    // Only atomic stores happen here (Runtime::cancel), which is safe in a signal handler.
    if (auto *p = g_running.load())
        p->cancel();
    g_trialCancel = true;
}

void printJson(const events::Event &event)
{
    std::fputs((events::toJson(event).dump() + "\n").c_str(), stdout);
    std::fflush(stdout);
}

// --try-advice: the change the verdict's advice names, tried against the project as it is.
// Returns the "advice_trial" event, or an error (the changed pipeline failed, Ctrl-C).
Result<events::AdviceTrial> tryTheAdvice(const Project &project, const pipeline::PipelineOptions &options, const pipeline::PipelineSnapshot &snapshot,
                                    double secondsEach, int rounds, bool json)
{
    const pipeline::BottleneckVerdict verdict = pipeline::judgeBottleneck(snapshot);
    events::AdviceTrial event;
    event.bottleneck = verdict.node;
    event.bottleneckKind = pipeline::bottleneckKindName(verdict.kind);
    const auto change = pipeline::adviceChange(verdict, snapshot, project);
    if (!change) {
        event.tried = false;
        event.why = "its advice needs other data, storage, code or hardware, not a parameter";
        if (!json)
            std::printf("advice: nothing to try by changing a parameter for a %s verdict (%s)\n", pipeline::bottleneckKindName(verdict.kind),
                        verdict.node.c_str());
        return event;
    }
    if (!json)
        std::fprintf(stderr, "trying: %s, %d rounds of %.1f s each way...\n", change->text().c_str(), rounds, secondsEach);
    g_trialCancel = false;
    auto trial = pipeline::tryAdvice(project, options, *change, secondsEach, rounds, &g_trialCancel);
    if (!trial)
        return trial.error();
    event.tried = true;
    event.trial = trial->toJson();
    if (!json) {
        std::printf("advice: %s\n", change->text().c_str());
        for (std::size_t i = 0; i < trial->rounds.size(); ++i)
            std::printf("  round %zu: %s elements/s as it is, %s with the change (%.2fx)\n", i + 1,
                        cli::countText(trial->rounds[i].baseline).c_str(), cli::countText(trial->rounds[i].changed).c_str(),
                        trial->rounds[i].speedup());
        std::printf("  measured: %s; the project is unchanged\n", trial->summary().c_str());
    }
    return event;
}

} // namespace

int run(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Runs a project headless. A project with a model trains it: synchronous data-parallel over CPU replicas (--replicas) "
        "and, under mpirun, over processes; progress on a terminal, JSON lines with --json, and with --out DIR the run's "
        "events.jsonl, metrics.csv, weights.npz, checkpoints/ and the project as run. A project with a pipeline and no model: "
        "iterates the pipeline and reports each stage.\n\n"
        "Exit codes: 0 ok, 1 the run failed or was cancelled (Ctrl-C saves a checkpoint), 2 bad input.\n\n"
        "Examples:\n"
        "  sluice run projects/regression.sluice --epochs 3 --replicas 2 --out runs/first\n"
        "  sluice run projects/regression.sluice --set training.optimizer.learning_rate=0.01 --set nodes.batch.batch_size=256\n"
        "  sluice run projects/regression.sluice --out runs/first --resume\n"
        "  mpirun -np 2 sluice run projects/regression.sluice --out runs/mpi\n"
        "  sluice run projects/regression.sluice --device cuda:0,1 --json > run.jsonl\n"
        "  sluice run projects/regression.sluice --device cuda:0 --replicas 4 --precision bf16\n"
        "  sluice run big.sluice --profile --seconds 30 --resident-budget 2G   # data larger than RAM: read ahead, 2 GiB resident\n"
        "  sluice run projects/classic-pipeline.sluice --profile --seconds 10\n"
        "  sluice run projects/classic-pipeline.sluice --profile --seconds 10 --consumer-ms 5   # is it input-bound under a 5 ms step?\n"
        "  sluice run projects/classic-pipeline.sluice --profile --seconds 5 --try-advice --trial-seconds 3 --rounds 5   # does the advice help?\n"
        "  sluice run projects/classic-pipeline.sluice --profile --node batch --threads 4 --seed 1 --ram-budget 2G --json --stats-interval 0.5");
    parser.addPositionalArgument("PROJECT", "The .sluice project file.");
    cli::addSetOption(parser);
    parser.addOption({"device", "Where to train: cpu (default), cuda (every GPU), cuda:0,1 (those GPUs, one replica each); "
                                "cuda:0 --replicas 4 makes four logical replicas on GPU 0. Without a GPU the run says so and trains on the CPU.", "DEVICE"});
    parser.addOption({"precision", "Matrix products on a GPU: fp32 (default), tf32 (tensor cores) or bf16 (mixed precision, fp32 master weights).",
                      "P"});
    parser.addOption({"replicas", "Mirrored replicas in this process (overrides training.replicas): CPU replicas, or logical replicas on "
                                  "the one GPU --device names.", "N"});
    parser.addOption({"out", "Folder for the run's files: events.jsonl, metrics.csv, weights.npz, checkpoints/, project.sluice.", "DIR"});
    parser.addOption({"resume", "Continue the run in --out DIR from its newest checkpoint."});
    parser.addOption({"profile", "Iterate the pipeline alone (a project with a model: its input pipeline, without training) and print "
                                 "the per-stage table and the bottleneck at the end."});
    parser.addOption({"epochs", "Epochs to train (overrides training.epochs); pipeline-only: passes over the pipeline (default 1).", "N"});
    parser.addOption({"seconds", "Stop after S seconds, starting new passes as needed.", "S"});
    parser.addOption({"try-advice", "Pipeline runs: after the profile, try the change its advice names against the project as it is, "
                                    "alternately for --trial-seconds each over --rounds rounds, and report the measured speed-up with its "
                                    "spread (the project file is not changed)."});
    parser.addOption({"trial-seconds", "--try-advice: seconds each way per round (default 2).", "S"});
    parser.addOption({"rounds", "--try-advice: rounds of the project as it is and with the change (default 3).", "N"});
    parser.addOption({"consumer-ms", "Pipeline runs: a simulated training step of MS milliseconds per element (off the CPU, as a GPU "
                                     "step), the consumer the input-bound share is measured against (default: none, as fast as possible).",
                      "MS"});
    parser.addOption({"json", "One JSON object per line on stdout: periodic {\"event\": \"stats\"} and a final {\"event\": \"run_end\"}."});
    parser.addOption({"stats-interval", "Seconds between stats events (default 1).", "S"});
    parser.addOption({"node", "Run the pipeline up to this node (default: its output).", "ID"});
    cli::addPipelineOptions(parser);
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    auto project = cli::loadProjectArgument(parser, "run");
    if (!project)
        return cli::BadInput;
    // --profile on a project with a model profiles its input pipeline alone (no training).
    if (!project->model.is_null() && !parser.isSet("profile")) {
        for (const char *option : {"seconds", "node", "stats-interval", "ram-budget", "resident-budget", "consumer-ms", "try-advice", "trial-seconds", "rounds"})
            if (parser.isSet(option)) {
                cli::printError(std::string("--") + option, "applies to pipeline runs (--profile); training takes --epochs");
                return cli::BadInput;
            }
        return runTraining(parser, std::move(*project));
    }
    for (const char *option : {"replicas", "resume", "out", "device", "precision"})
        if (parser.isSet(option)) {
            cli::printError(std::string("--") + option, project->model.is_null() ? "applies to projects with a model; this project has a pipeline only"
                                                                                  : "applies to training; --profile runs the pipeline alone");
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
    // The consumer the input-bound share is measured against: as fast as possible, or a simulated step.
    std::optional<double> stepMs;
    if (parser.isSet("consumer-ms")) {
        bool ok = false;
        const double ms = parser.value("consumer-ms").trimmed().toDouble(&ok);
        if (!ok || !(ms > 0) || !std::isfinite(ms)) {
            cli::printError("--consumer-ms", "'" + parser.value("consumer-ms").toStdString() + "' is not a positive number of milliseconds");
            return cli::BadInput;
        }
        stepMs = ms;
    }
    const nlohmann::json consumer = stepMs ? nlohmann::json{{"step_ms", *stepMs}} : nlohmann::json("as fast as possible");
    double trialSeconds = 2;
    std::uint64_t rounds = 3;
    if (parser.isSet("trial-seconds")) {
        auto s = cli::parseSeconds("trial-seconds", parser.value("trial-seconds"));
        if (!s)
            return cli::BadInput;
        trialSeconds = *s;
    }
    if (parser.isSet("rounds")) {
        auto n = cli::parseCount("rounds", parser.value("rounds"), 1);
        if (!n)
            return cli::BadInput;
        rounds = *n;
    }
    if ((parser.isSet("trial-seconds") || parser.isSet("rounds")) && !parser.isSet("try-advice")) {
        cli::printError(parser.isSet("rounds") ? "--rounds" : "--trial-seconds", "applies to --try-advice");
        return cli::BadInput;
    }
    if (parser.isSet("consumer-ms") && parser.isSet("try-advice")) {
        // The trials time the pipeline alone, as fast as it goes: a simulated step would not reach them.
        cli::printError("--consumer-ms", "does not apply to --try-advice's trials, which measure the pipeline alone; profile with "
                                         "--consumer-ms, then try the advice without it");
        return cli::BadInput;
    }
    if (parser.isSet("stats-interval") && !parser.isSet("json")) {
        cli::printError("--stats-interval", "applies to --json (the stats events' interval); the terminal's line is redrawn four times a second");
        return cli::BadInput;
    }
    if (!epochs && !seconds)
        epochs = 1;
    const bool json = parser.isSet("json");
    options->statsInterval = std::chrono::milliseconds(std::int64_t(interval * 1000));

    auto pipe = cli::buildPipeline(*project, *options);
    if (!pipe)
        return cli::BadInput;
    pipe->setConsumerAttached(true);
    if (json)
        pipe->sink().subscribe([consumer](const pipeline::PipelineSnapshot &s) { printJson(events::Stats{s, consumer}); });

    g_running = pipe.get();
    auto previous = std::signal(SIGINT, onRunInterrupt);
    const bool terminal = isatty(STDERR_FILENO);
    const auto start = std::chrono::steady_clock::now();
    auto lastLine = start;
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    using Status = events::RunEnd::Status;
    Status status = Status::Ok;
    std::string error;
    std::optional<Error> failure; // its fields go into run_end
    int pass = 1;
    std::uint64_t elements = 0;
    for (;;) {
        if (seconds && elapsed() >= *seconds)
            break;
        auto r = pipe->next();
        if (!r.ok()) {
            status = pipe->cancelled() && r.error().isCancelled() ? Status::Cancelled : Status::Failed;
            error = r.error().message();
            failure = r.error();
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
        if (stepMs)
            std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(*stepMs));
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
    pipe.reset(); // its threads and buffers go before the trials build theirs
    std::optional<events::AdviceTrial> trialEvent;
    auto printTable = [&] {
        std::fputs(cli::statsTable(snapshot).c_str(), stdout);
        std::printf("consumer: %s\n", stepMs ? ("a simulated step of " + std::to_string(*stepMs) + " ms per element").c_str()
                                                : "as fast as possible (--consumer-ms simulates a training step)");
    };
    if (parser.isSet("try-advice") && status == Status::Ok) {
        if (!json)
            printTable();
        g_running = nullptr;
        previous = std::signal(SIGINT, onRunInterrupt);
        auto trial = tryTheAdvice(*project, *options, snapshot, trialSeconds, int(std::min<std::uint64_t>(rounds, 1000)), json);
        std::signal(SIGINT, previous);
        if (trial) {
            trialEvent = *trial;
        } else {
            status = trial.error().isCancelled() ? Status::Cancelled : Status::Failed;
            error = trial.error().message();
            failure = trial.error();
        }
    }
    if (json) {
        if (trialEvent)
            printJson(*trialEvent);
        events::RunEnd end;
        end.status = status;
        end.passes = pass;
        end.elements = elements;
        end.seconds = elapsed();
        end.stats = events::Stats{snapshot, consumer};
        if (failure && status == Status::Failed)
            end.error = *failure;
        printJson(end);
    } else if (trialEvent) {
        // The table and the trial are printed already.
    } else if (parser.isSet("profile") || status != Status::Ok) {
        printTable();
    } else {
        std::printf("%s: %llu elements in %d pass%s, %.2f s\n", project->name.c_str(), (unsigned long long)elements, pass,
                    pass == 1 ? "" : "es", elapsed());
    }
    if (status == Status::Failed) {
        cli::printError("run", error);
        return cli::RunFailed;
    }
    if (status == Status::Cancelled) {
        cli::printError("run", "cancelled");
        return cli::RunFailed;
    }
    return cli::Success;
}

} // namespace sluice::commands
