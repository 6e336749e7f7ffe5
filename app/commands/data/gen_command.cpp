// sluice gen regression|classification|sensors: synthetic datasets of any size, streamed to disk.
#include "commands/commands.h"

#include "cli/cli_support.h"
#include "cli/progress_bar.h"
#include "io/synthetic/synthetic_dataset.h"

#include <atomic>
#include <csignal>
#include <cstdio>

namespace sluice::commands {
namespace {

// Ctrl-C while writing: stop between chunks so the writers remove their temporary files
// instead of leaving half a dataset behind.
std::atomic<bool> g_interrupted{false};
extern "C" void onInterrupt(int) { g_interrupted = true; }

// "NAME:SHAPE[:DTYPE]" with SHAPE "256", "28x28" or "1"; "scalar" or "" for one value per row.
std::optional<SyntheticColumn> parseColumn(const QString &option, const QString &text, DType defaultType, int *classes)
{
    const QStringList parts = text.split(':');
    auto bad = [&](const std::string &why) {
        cli::printError("--" + option.toStdString() + " " + text.toStdString(), why);
        return std::nullopt;
    };
    if (parts.size() < 2 || parts.size() > 3 || parts[0].isEmpty())
        return bad("expected NAME:SHAPE[:DTYPE], e.g. image:28x28:uint8 or x:256");
    SyntheticColumn c;
    c.name = parts[0].toStdString();
    c.dtype = defaultType;
    if (parts.size() == 3) {
        const auto t = dtypeFromName(parts[2].toStdString());
        if (!t)
            return bad("unknown dtype '" + parts[2].toStdString() +
                       "' (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64)");
        c.dtype = *t;
    }
    if (classes) { // classification target: SHAPE is the number of classes, one label per row
        bool ok = false;
        *classes = parts[1].toInt(&ok);
        if (!ok || *classes < 2)
            return bad("a classification target is NAME:CLASSES[:DTYPE] with at least 2 classes");
        return c;
    }
    if (parts[1] != "scalar") {
        for (const QString &d : parts[1].split('x')) {
            bool ok = false;
            const qulonglong v = d.toULongLong(&ok);
            if (!ok || v == 0)
                return bad("shape '" + parts[1].toStdString() + "' is not like 256 or 28x28");
            c.rowShape.push_back(v);
        }
    }
    return c;
}

} // namespace

int gen(const QStringList &arguments)
{
    // Pictures and interaction logs have options of their own: the first word that is not an
    // option picks them.
    for (const QString &a : arguments.mid(1)) {
        if (a.startsWith('-'))
            continue;
        if (a == "images")
            return genImages(arguments);
        if (a == "interactions")
            return genInteractions(arguments);
        break;
    }
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Writes a synthetic dataset, one .npy per feature and target, streamed to disk.\n\n"
        "Examples:\n"
        "  sluice gen regression --out data --rows 1000 --seed 7 --noise 0.5 --threads 2   # x.npy (1000, 16), y.npy (1000, 1)\n"
        "  sluice gen regression --out data --rows 1000000 --feature x:256 --feature meta:8:float16 --target y:4\n"
        "  sluice gen classification --out data --size 2G --feature image:28x28:uint8 --target label:10\n"
        "  sluice gen classification --out data --rows 60000 --feature x:20 --target label:3 --imbalance 0.9\n"
        "  sluice gen sensors --out data --rows 20000 --timesteps 24 --channels 4 --anomalies 0.05\n"
        "  sluice gen images --out data/shapes --classes 5 --rows 5000 --size 64x64 --format jpeg   # see gen images --help\n"
        "  sluice gen interactions --out data/recommender --rows 200000 --users 5000 --items 1000   # see gen interactions --help\n\n"
        "regression, classification: features are ~N(0,1) (floats), uniform in [0,100) (integers) or\n"
        "coin flips (bool); targets are a fixed random linear map of every feature plus noise (the\n"
        "argmax of it for classes). --imbalance P gives class 0 the share P of the rows and the other\n"
        "classes even shares of the rest (each class's score gets an offset fitted to that end).\n"
        "sensors: signal.npy, float32 windows (rows, timesteps, channels), each channel a smooth sum of\n"
        "two sines with the window's own random frequency and phases, plus --noise; with --anomalies P,\n"
        "that share of windows is distorted (noise burst, level shift or stuck channel) and\n"
        "anomaly.npy (int64) flags them.");
    const QCommandLineOption out({"o", "out"}, "Folder to write into (created if missing).", "DIR");
    const QCommandLineOption rows("rows", "Number of rows.", "N");
    const QCommandLineOption size("size", "Total size instead of --rows, e.g. 2G or 512M.", "BYTES");
    const QCommandLineOption feature("feature", "A feature NAME:SHAPE[:DTYPE] (repeatable; default x:16).", "SPEC");
    const QCommandLineOption target("target", "A target NAME:SHAPE[:DTYPE], or NAME:CLASSES[:DTYPE] for classification "
                                              "(repeatable; default y:1 or label:10).", "SPEC");
    const QCommandLineOption seed("seed", "Random seed (same seed, same files).", "S", "0");
    const QCommandLineOption noise("noise", "Standard deviation of the target noise (sensors: of every reading).", "X", "0.1");
    const QCommandLineOption threads("threads", "Threads (default: all cores).", "N", "0");
    const QCommandLineOption imbalance("imbalance", "classification: the share of rows in class 0, e.g. 0.9.", "P");
    const QCommandLineOption timesteps("timesteps", "sensors: time steps a window.", "T", "24");
    const QCommandLineOption channels("channels", "sensors: channels a window (one per sensor).", "C", "4");
    const QCommandLineOption anomalies("anomalies", "sensors: the share of distorted windows, flagged in anomaly.npy, e.g. 0.05.", "P");
    parser.addOptions({out, rows, size, feature, target, seed, noise, threads, imbalance, timesteps, channels, anomalies});
    parser.addPositionalArgument("KIND", "regression, classification, sensors, images or interactions.");
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;

    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1 || (positional[0] != "regression" && positional[0] != "classification" && positional[0] != "sensors")) {
        cli::printError("gen", "KIND must be 'regression', 'classification', 'sensors', 'images' or 'interactions' (try 'sluice gen --help')");
        return cli::BadInput;
    }
    if (!parser.isSet(out)) {
        cli::printError("gen", "--out DIR is required");
        return cli::BadInput;
    }
    if (parser.isSet(rows) == parser.isSet(size)) {
        cli::printError("gen", "give exactly one of --rows and --size");
        return cli::BadInput;
    }

    const bool sensors = positional[0] == "sensors";
    for (const QCommandLineOption *o : {&imbalance, &timesteps, &channels, &anomalies, &feature, &target}) {
        const bool forSensors = o == &timesteps || o == &channels || o == &anomalies;
        const bool forClassification = o == &imbalance;
        if (parser.isSet(*o) && (forSensors != sensors || (forClassification && positional[0] != "classification"))) {
            cli::printError("--" + o->names().constLast().toStdString(), "does not apply to 'gen " + positional[0].toStdString() + "'");
            return cli::BadInput;
        }
    }
    // The number an option holds; nullopt after printing the problem.
    auto share = [&](const QCommandLineOption &o) -> std::optional<double> {
        bool ok = false;
        const double v = parser.value(o).toDouble(&ok);
        if (!ok) {
            cli::printError("--" + o.names().constLast().toStdString(), "'" + parser.value(o).toStdString() + "' is not a number");
            return std::nullopt;
        }
        return v;
    };

    SyntheticSpec spec;
    if (sensors) {
        const auto t = cli::parseCount("timesteps", parser.value(timesteps), 2), c = cli::parseCount("channels", parser.value(channels), 1);
        if (!t || !c)
            return cli::BadInput;
        std::optional<double> p = 0.0;
        if (parser.isSet(anomalies) && !(p = share(anomalies)))
            return cli::BadInput;
        spec = sensorSpec(0, *t, *c, *p);
    } else {
        spec.task = positional[0] == "classification" ? SyntheticSpec::Task::Classification : SyntheticSpec::Task::Regression;
        const bool classification = spec.task == SyntheticSpec::Task::Classification;
        QStringList featureSpecs = parser.values(feature), targetSpecs = parser.values(target);
        if (featureSpecs.isEmpty())
            featureSpecs << "x:16";
        if (targetSpecs.isEmpty())
            targetSpecs << (classification ? "label:10" : "y:1");
        for (const QString &f : featureSpecs) {
            auto c = parseColumn("feature", f, DType::Float32, nullptr);
            if (!c)
                return cli::BadInput;
            spec.features.push_back(*c);
        }
        for (const QString &t : targetSpecs) {
            int classes = 0;
            auto c = parseColumn("target", t, classification ? DType::Int64 : DType::Float32, classification ? &classes : nullptr);
            if (!c)
                return cli::BadInput;
            spec.targets.push_back(*c);
            if (classification)
                spec.classes.push_back(classes);
        }
        if (parser.isSet(imbalance)) {
            const auto p = share(imbalance);
            if (!p)
                return cli::BadInput;
            if (!(*p > 0 && *p < 1)) {
                cli::printError("--imbalance", "the share of class 0 must be between 0 and 1 (exclusive), e.g. 0.9; got " +
                                                   parser.value(imbalance).toStdString());
                return cli::BadInput;
            }
            spec.imbalance = *p;
        }
    }
    const auto seedValue = cli::parseCount("seed", parser.value(seed));
    const auto threadCount = cli::parseCount("threads", parser.value(threads));
    bool noiseOk = false;
    spec.noise = parser.value(noise).toDouble(&noiseOk);
    if (!seedValue || !threadCount)
        return cli::BadInput;
    if (!noiseOk) {
        cli::printError("--noise", "'" + parser.value(noise).toStdString() + "' is not a number");
        return cli::BadInput;
    }
    spec.seed = *seedValue;
    if (parser.isSet(rows)) {
        const auto n = cli::parseCount("rows", parser.value(rows), 1);
        if (!n)
            return cli::BadInput;
        spec.rows = *n;
    } else {
        const auto bytes = cli::parseByteSize("size", parser.value(size));
        if (!bytes)
            return cli::BadInput;
        spec.rows = 1;
        const std::uint64_t rowBytes = totalBytes(spec);
        spec.rows = std::max<std::uint64_t>(1, *bytes / std::max<std::uint64_t>(1, rowBytes));
    }
    if (auto s = validate(spec); !s) {
        cli::printError(s.error());
        return cli::BadInput;
    }

    const std::string folder = parser.value(out).toStdString();
    const std::uint64_t bytes = totalBytes(spec);
    cli::ProgressBar bar("gen " + folder, bytes);
    const std::uint64_t bytesPerRow = bytes / spec.rows;
    auto previousInt = std::signal(SIGINT, onInterrupt);
    auto previousTerm = std::signal(SIGTERM, onInterrupt);
    const Status written = writeSyntheticDataset(
        spec, folder, int(*threadCount), [&](std::uint64_t done) { bar.update(done * bytesPerRow); }, &g_interrupted);
    std::signal(SIGINT, previousInt);
    std::signal(SIGTERM, previousTerm);
    bar.finish();
    if (!written) {
        if (g_interrupted) {
            cli::printError(folder, "interrupted; no files were written");
            return cli::RunFailed;
        }
        cli::printError(written.error());
        return written.error().kind == Error::Kind::InvalidArgument ? cli::BadInput : cli::RunFailed;
    }
    std::printf("wrote %llu rows (%s) to %s:", static_cast<unsigned long long>(spec.rows), cli::humanBytes(double(bytes)).c_str(),
                folder.c_str());
    for (const auto *list : {&spec.features, &spec.targets})
        for (const auto &c : *list)
            std::printf(" %s.npy", c.name.c_str());
    std::printf("\n");
    return cli::Success;
}

} // namespace sluice::commands
