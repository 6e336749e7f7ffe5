// The `sluice` executable: picks a headless command or the workbench before anything else is
// built, so that commands never need a display (docs/architecture.md, headless before GUI).
#ifdef SLUICE_EMBED_PYTHON
#include "embedded_python.h"
#endif
#include "cli/cli_support.h"
#include "commands/commands.h"
#include "gui/workbench.h"
#include "sluice_commit.h"
#include "train/gpu/device_query.h"

#include <QCoreApplication>
#include <QFileInfo>

#include <cstdio>
#include <exception>
#include <new>
#include <map>
#include <string>
#include <vector>

namespace {

void printUsage()
{
    std::fputs("Sluice " SLUICE_VERSION " - a workbench for machine-learning input pipelines and data-parallel training\n"
               "\n"
               "Usage:\n"
               "  sluice [PROJECT] [--run] [--screenshot FILE [--wait S]]\n"
               "                                              the workbench (needs a display); --run starts the project's run,\n"
               "                                              --screenshot saves the window after S seconds and quits\n"
               "  sluice inspect [--stats] [--json] FILE...   what is inside .npy, .npz, TFRecord and CSV files\n"
               "  sluice gen KIND --out DIR --rows N ...      synthetic datasets of any size, streamed to disk\n"
               "  sluice run PROJECT [--replicas N] [--out DIR] [--json] [--resume] [--set K=V]\n"
               "                                              trains a project's model (mirrored replicas; mpirun for processes)\n"
               "  sluice run PROJECT --profile [--seconds S]  iterates a pipeline-only project; per-stage table and bottleneck\n"
               "  sluice preview PROJECT [--node ID] [--out DIR]  what a stage emits (printed, or as .npz batches)\n"
               "  sluice predict PROJECT --weights W --out DIR [--node ID]\n"
               "                                              a model's outputs over a node's batches, as .npy\n"
               "  sluice import MODEL [--weights W.h5] --into PROJECT [--replace]\n"
               "                                              a Keras 3 model (.keras, or to_json + .weights.h5) into a project\n"
               "  sluice export WEIGHTS --project P --format safetensors --out FILE\n"
               "                                              a trained model as safetensors + model.py for PyTorch\n"
               "  sluice ops [--markdown]                     every pipeline op and its parameters\n"
               "  sluice convert IN... --to tfrecord|npy --out DIR [--shards N]\n"
               "                                              CSV, TFRecord, .npy, Parquet or pictures into shards load reads\n"
               "  sluice bench read FILE [options]            batch-gather throughput against memcpy\n"
               "  sluice bench pipeline FILE [options]        the classic pipeline's samples/s and per-element overhead\n"
               "  sluice bench train [options]                MLP training samples/s, CPU or GPU\n"
               "  sluice bench storage FILE [options]         the device's random read rate, remembered for profiles\n"
               "  sluice --version                            version, commit, features built in and GPUs found\n"
               "  sluice --help                               this text\n"
               "\n"
               "Examples:\n"
               "    sluice projects/regression.sluice\n"
               "    sluice projects/regression.sluice --run --screenshot window.png --wait 5\n"
               "    sluice gen regression --out data --rows 100000 --feature x:32 --target y:4\n"
               "    sluice inspect --stats data/x.npy\n"
               "    sluice run projects/regression.sluice --replicas 2 --out runs/first\n"
               "\n"
               "Run 'sluice COMMAND --help' for a command's options and examples; 'man sluice' has them all.\n"
               "Exit codes: 0 success, 1 the run failed, 2 bad input.\n",
               stdout);
}

// The version, the commit and what this binary can use: the optional parts compiled in, then
// what this machine offers them (a CUDA build still runs, on the CPU, where there is no GPU).
void printVersion()
{
    const sluice::DeviceQuery q = sluice::queryGpuDevices();
    std::printf("sluice %s (commit %s)\n", SLUICE_VERSION, SLUICE_GIT_COMMIT);
    if (q.builtWithCuda)
        std::printf("CUDA: built in (runtime %d.%d, linked statically; architectures %s; cuBLAS loaded at run time)\n",
                    q.runtimeVersion / 1000, q.runtimeVersion % 1000 / 10, SLUICE_CUDA_ARCHITECTURES_TEXT);
    else
        std::printf("CUDA: not built\n");
    std::printf("NCCL: %s\nMPI: %s\nBLAS: %s\n", SLUICE_NCCL_TEXT, SLUICE_MPI_TEXT, SLUICE_BLAS_TEXT);
    if (q.builtWithCuda && q.driverVersion > 0)
        std::printf("CUDA driver: %d.%d\n", q.driverVersion / 1000, q.driverVersion % 1000 / 10);
    for (const auto &d : q.devices)
        std::printf("GPU %d: %s, compute %d.%d, %.1f GiB\n", d.index, d.name.c_str(), d.computeMajor, d.computeMinor,
                    double(d.memoryBytes) / (1u << 30));
    if (q.devices.empty())
        std::printf("GPUs: none (%s)\n", q.reason.c_str());
}

// Anything that is not a command (or --help / --version) opens the workbench:
// `sluice`, `sluice PROJECT.sluice`, `sluice PROJECT --run --screenshot FILE`.
bool wantsWorkbench(int argc, char **argv)
{
    if (argc == 1)
        return true;
    // A project file or a workbench option; anything else stays a (possibly mistyped) command.
    const QString first = QString::fromLocal8Bit(argv[1]);
    static const QStringList options{"--run", "--screenshot", "--wait"};
    return !sluice::commands::allCommands().count(first) &&
           (options.contains(first) || first.endsWith(QLatin1String(".sluice")) || QFileInfo(first).isFile());
}

} // namespace

int main(int argc, char **argv)
{
#ifdef SLUICE_EMBED_PYTHON
    sluice::app::offerEmbeddedPython();
#endif
    if (wantsWorkbench(argc, argv)) {
        QStringList arguments;
        for (int i = 1; i < argc; ++i)
            arguments << QString::fromLocal8Bit(argv[i]);
        QString error;
        const auto options = sluice::gui::parseWorkbenchArguments(arguments, &error);
        if (!options) {
            sluice::cli::printError("workbench", error.toStdString());
            return sluice::cli::BadInput;
        }
        if (!sluice::gui::displayAvailable() && arguments.isEmpty()) {
            printUsage(); // a terminal without a display: say what the commands are
            return sluice::cli::Success;
        }
        if (!sluice::gui::displayAvailable()) {
            sluice::cli::printError("workbench", "no display (neither DISPLAY nor WAYLAND_DISPLAY is set); run a project headless with "
                                                 "'sluice run PROJECT', or see 'sluice --help'");
            return sluice::cli::BadInput;
        }
        return sluice::gui::runWorkbench(argc, argv, *options);
    }
    // Qt's --help prints argv[0] as the program in its "Usage:" line: make it the command
    // ("sluice inspect [options] FILE..."), whatever path the binary was started by.
    std::string program = std::string("sluice ") + argv[1];
    std::vector<char *> qtArgv(argv, argv + argc + 1);
    qtArgv[0] = program.data();
    QCoreApplication app(argc, qtArgv.data());
    QCoreApplication::setApplicationName("sluice");
    QCoreApplication::setApplicationVersion(SLUICE_VERSION);
    QStringList args = QCoreApplication::arguments();
    args.removeFirst();

    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        printUsage();
        return sluice::cli::Success;
    }
    if (args[0] == "--version" || args[0] == "-v") {
        printVersion();
        return sluice::cli::Success;
    }
    const auto it = sluice::commands::allCommands().find(args[0]);
    if (it == sluice::commands::allCommands().end()) {
        sluice::cli::printError(args[0].toStdString(), "unknown command (known: inspect, gen, run, preview, predict, import, export, ops, convert, bench; see 'sluice --help')");
        return sluice::cli::BadInput;
    }
    try {
        return it->second(args);
    } catch (const std::bad_alloc &) {
        sluice::cli::printError(args[0].toStdString(), "out of memory");
    } catch (const std::exception &e) {
        sluice::cli::printError(args[0].toStdString(), std::string("internal error: ") + e.what());
    }
    return sluice::cli::RunFailed;
}
