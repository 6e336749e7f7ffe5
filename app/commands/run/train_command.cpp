// sluice run on a project with a model: trains it headless (run_command.cpp parses the options
// and hands over here). Bad input exits 2 before training starts; a run that fails exits 1.
#include "commands/run/train_command.h"

#include "cli/cli_support.h"
#include "cli/run_output.h"
#include "telemetry/gpu_sampler.h"
#include "io/writers/atomic_file.h"
#include "train/distribute/mpi_reducer.h"
#include "train/loop/trainer.h"
#include "events/run_folder.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>

namespace sluice::commands {

namespace {

std::atomic<bool> g_cancel{false};

extern "C" void onTrainingInterrupt(int signal)
{
    // The first Ctrl-C asks for a clean stop (checkpoint, run_end); a second one ends at once.
    g_cancel.store(true);
    std::signal(signal, SIG_DFL);
}

// Ends the run; with several MPI processes, ends every rank (the others would wait forever in
// the next all-reduce).
int endWith(int code, int processes)
{
    if (processes > 1)
        train::abortAllRanks(code);
    train::finalizeMpi();
    return code;
}

} // namespace

int runTraining(const QCommandLineParser &parser, Project project)
{
    int processes = 1, rank = 0;
    std::unique_ptr<train::GradientReducer> reducer;
    if (train::launchedByMpi()) {
        auto r = train::makeMpiReducer();
        if (!r) {
            cli::printError(r.error());
            return cli::BadInput;
        }
        reducer = std::move(*r);
        processes = reducer->processCount();
        rank = reducer->processIndex();
    }
    auto report = [&](const Error &e) {
        if (processes > 1)
            cli::printError("rank " + std::to_string(rank) + ": " + e.what, e.reason);
        else
            cli::printError(e);
    };

    auto config = train::parseTrainingConfig(project);
    if (!config) {
        report(config.error());
        return endWith(cli::BadInput, processes);
    }
    if (parser.isSet("epochs")) {
        auto n = cli::parseCount("epochs", parser.value("epochs"), 1);
        if (!n)
            return endWith(cli::BadInput, processes);
        config->epochs = int(*n);
    }
    if (parser.isSet("replicas")) {
        auto n = cli::parseCount("replicas", parser.value("replicas"), 1);
        if (!n)
            return endWith(cli::BadInput, processes);
        config->replicas = int(std::min<std::uint64_t>(*n, 256));
        const auto &gpus = config->gpuDevices;
        if (!gpus.empty() && !parser.isSet("device")) {
            // training.devices names GPUs: logical replicas on its one GPU.
            if (gpus[0] < 0 || std::any_of(gpus.begin(), gpus.end(), [&](int g) { return g != gpus[0]; })) {
                report(Error::invalid("--replicas", "training.devices names several GPUs, which are the replicas; --replicas makes logical replicas on one GPU"));
                return endWith(cli::BadInput, processes);
            }
            config->gpuDevices.assign(std::size_t(config->replicas), gpus[0]);
            config->devices.assign(std::size_t(config->replicas), config->devices[0]);
        } else if (gpus.empty()) {
            config->devices.clear();
        }
        if (config->replicas > 1)
            config->strategy = "mirrored";
    }
    if (parser.isSet("device")) {
        // "cpu", "cuda", "cuda:0,1" (one replica per GPU), "cuda:0,0" (two logical replicas on GPU 0).
        const std::string device = parser.value("device").toStdString();
        std::vector<std::string> names;
        const bool gpu = device.rfind("cuda", 0) == 0 || device.rfind("gpu", 0) == 0;
        const std::size_t colon = device.find(':');
        if (gpu && colon != std::string::npos) {
            const std::string prefix = device.substr(0, colon + 1);
            for (const QString &index : QString::fromStdString(device.substr(colon + 1)).split(','))
                names.push_back(prefix + index.trimmed().toStdString());
        } else {
            names.push_back(device);
        }
        const int replicas = config->replicas;
        if (auto s = train::applyDevices(*config, names, "--device"); !s.ok()) {
            report(s.error());
            return endWith(cli::BadInput, processes);
        }
        if (device == "cpu") {
            config->devices.clear();
            config->replicas = parser.isSet("replicas") ? replicas : 1;
        } else if (parser.isSet("replicas")) {
            // --device cuda:0 --replicas 4: four logical replicas on GPU 0; several devices are the replicas.
            if (auto s = train::applyReplicaCount(*config, replicas, "--replicas"); !s.ok()) {
                report(s.error());
                return endWith(cli::BadInput, processes);
            }
        }
        if (config->replicas > 1)
            config->strategy = "mirrored";
    }
    if (parser.isSet("precision")) {
        const std::string precision = parser.value("precision").toStdString();
        if (precision != "fp32" && precision != "tf32" && precision != "bf16") {
            report(Error::invalid("--precision", "must be fp32, tf32 or bf16, got '" + precision + "'"));
            return endWith(cli::BadInput, processes);
        }
        config->precision = precision;
    }
    if (parser.isSet("threads")) {
        auto n = cli::parseCount("threads", parser.value("threads"), 1);
        if (!n)
            return endWith(cli::BadInput, processes);
        config->threads = int(std::min<std::uint64_t>(*n, 1024));
    }
    if (parser.isSet("seed")) {
        auto n = cli::parseCount("seed", parser.value("seed"), 0);
        if (!n)
            return endWith(cli::BadInput, processes);
        config->seed = *n;
    }
    const bool resume = parser.isSet("resume");
    const std::string outDir = parser.value("out").toStdString();
    if (resume && outDir.empty()) {
        report(Error::invalid("--resume", "needs --out DIR: the folder of the run to continue (its checkpoints/)"));
        return endWith(cli::BadInput, processes);
    }
    if (!resume && !outDir.empty() && runfolder::holdsRun(outDir)) {
        // Never overwrite a run's record (nor mix its checkpoints with a new run's).
        report(Error::invalid("--out " + outDir, "holds an earlier run (events.jsonl, checkpoints/): continue it with --resume, or choose another folder"));
        return endWith(cli::BadInput, processes);
    }

    cli::RunOutput::Options outputOptions;
    outputOptions.json = parser.isSet("json");
    outputOptions.quiet = rank != 0;
    outputOptions.outDir = rank == 0 ? outDir : std::string();
    outputOptions.resume = resume;
    outputOptions.epochs = config->epochs;
    cli::RunOutput output(outputOptions);

    train::TrainerOptions options;
    options.checkpointDir = outDir.empty() ? std::string() : runfolder::path(outDir, runfolder::kCheckpoints);
    options.resume = resume;
    options.reducer = reducer.get();
    options.cancelFlag = &g_cancel;
    std::unique_ptr<telemetry::GpuSampler> gpus;
    options.onEvent = [&output, &gpus](const events::Event &e) {
        if (gpus && events::as<events::RunEnd>(e))
            gpus.reset(); // run_end stays the stream's last event
        output.onEvent(e);
    };
    auto trainer = train::Trainer::create(project, *config, options);
    if (!trainer) {
        report(trainer.error());
        return endWith(cli::BadInput, processes);
    }
    if (auto problem = output.open()) {
        cli::printError("--out", *problem);
        return endWith(cli::BadInput, processes);
    }
    if (rank == 0 && !outDir.empty() && !resume) {
        // The project as run (with --set applied), so the run can be repeated.
        if (auto file = AtomicFile::create(runfolder::path(outDir, runfolder::kProject)); file.ok())
            if (file->write(project.toJson().dump(2) + "\n").ok())
                (void)file->commit();
    }

    // GPU telemetry into the same stream (~10 samples a second) where NVML finds a GPU; rank 0
    // only, as it alone prints and writes.
    if (rank == 0)
        gpus = std::make_unique<telemetry::GpuSampler>([&output](const telemetry::GpuSnapshot &s) { output.onEvent(s); });

    g_cancel = false;
    auto previousInt = std::signal(SIGINT, onTrainingInterrupt);
    auto previousTerm = std::signal(SIGTERM, onTrainingInterrupt);
    const train::RunOutcome outcome = (*trainer)->run();
    std::signal(SIGINT, previousInt);
    std::signal(SIGTERM, previousTerm);
    gpus.reset(); // no samples after the run's last event

    if (rank == 0 && !outDir.empty() && outcome.status != train::RunStatus::Failed) {
        if (auto s = (*trainer)->model().saveWeights(runfolder::path(outDir, runfolder::kWeights), (*trainer)->weights()); !s.ok()) {
            report(s.error());
            return endWith(cli::RunFailed, processes);
        }
    }
    switch (outcome.status) {
    case train::RunStatus::Ok:
        train::finalizeMpi();
        return cli::Success;
    case train::RunStatus::Cancelled:
        if (rank == 0)
            cli::printError("run", "cancelled at step " + std::to_string(outcome.steps) +
                                       (outDir.empty() ? std::string() : "; continue with --resume --out " + outDir));
        train::finalizeMpi();
        return cli::RunFailed;
    case train::RunStatus::Failed:
        report(*outcome.error);
        return endWith(cli::RunFailed, processes);
    }
    return cli::RunFailed;
}

} // namespace sluice::commands
