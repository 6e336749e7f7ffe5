// `sluice gen images`: a folder of labelled JPEG or PNG pictures, one sub-folder per class, as
// from_files and Keras's image_dataset_from_directory read them (io/synthetic/synthetic_images.h).
#include "cli/cli_support.h"
#include "cli/progress_bar.h"
#include "commands/commands.h"

#include "io/synthetic/synthetic_images.h"

#include <QCommandLineParser>

#include <atomic>
#include <csignal>
#include <cstdio>

namespace sluice::commands {
namespace {
std::atomic<bool> g_interrupted{false};
extern "C" void onGenImagesInterrupt(int) { g_interrupted = true; }
} // namespace

int genImages(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Writes labelled pictures, DIR/<class>/<class>_<n>.jpg (or .png), one sub-folder per class.\n\n"
        "Examples:\n"
        "  sluice gen images --out data/shapes --classes 5 --rows 5000 --size 64x64 --format jpeg\n"
        "  sluice gen images --out data/shapes-png --classes 8 --rows 800 --size 32x48 --format png --seed 3 --noise 20 --threads 2\n"
        "  sluice gen images --out data/shapes-q --classes 3 --rows 300 --quality 75\n\n"
        "Each class is a shape (circle, square, triangle, cross, ring, stripes, diamond, dots, in that\n"
        "order) drawn at a random place, size, tilt and colour on a random background, with pixel\n"
        "noise: a small CNN can learn the classes, and colour alone says nothing. The same seed gives\n"
        "the same files; images are spread evenly over the classes.");
    const QCommandLineOption out({"o", "out"}, "Folder to write into (created if missing).", "DIR");
    const QCommandLineOption rows("rows", "Number of images in all.", "N");
    const QCommandLineOption classes("classes", "Number of classes, 2 to 8.", "K", "5");
    const QCommandLineOption size("size", "HEIGHTxWIDTH of every image.", "HxW", "64x64");
    const QCommandLineOption format("format", "jpeg or png.", "FORMAT", "jpeg");
    const QCommandLineOption quality("quality", "JPEG quality, 1 to 100.", "Q", "90");
    const QCommandLineOption noise("noise", "Standard deviation of the pixel noise, in levels of 255.", "X", "12");
    const QCommandLineOption seed("seed", "Random seed (same seed, same files).", "S", "0");
    const QCommandLineOption threads("threads", "Threads (default: all cores).", "N", "0");
    parser.addOptions({out, rows, classes, size, format, quality, noise, seed, threads});
    parser.addPositionalArgument("images", "The kind of dataset: images.");
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    if (!parser.isSet(out) || !parser.isSet(rows)) {
        cli::printError("gen images", "--out DIR and --rows N are required");
        return cli::BadInput;
    }
    SyntheticImagesSpec spec;
    const auto rowCount = cli::parseCount("rows", parser.value(rows), 1);
    const auto classCount = cli::parseCount("classes", parser.value(classes), 2);
    const auto q = cli::parseCount("quality", parser.value(quality), 1);
    const auto seedValue = cli::parseCount("seed", parser.value(seed));
    const auto threadCount = cli::parseCount("threads", parser.value(threads));
    if (!rowCount || !classCount || !q || !seedValue || !threadCount)
        return cli::BadInput;
    spec.rows = *rowCount;
    spec.classes = int(std::min<std::uint64_t>(*classCount, 1000));
    spec.quality = int(std::min<std::uint64_t>(*q, 1000));
    spec.seed = *seedValue;
    const QStringList sides = parser.value(size).split('x');
    bool okH = false, okW = false;
    if (sides.size() == 2) {
        spec.height = sides[0].toInt(&okH);
        spec.width = sides[1].toInt(&okW);
    }
    if (!okH || !okW) {
        cli::printError("--size", "'" + parser.value(size).toStdString() + "' is not like 64x64");
        return cli::BadInput;
    }
    if (parser.value(format) != "jpeg" && parser.value(format) != "png") {
        cli::printError("--format", "'" + parser.value(format).toStdString() + "' is not jpeg or png");
        return cli::BadInput;
    }
    spec.format = parser.value(format) == "png" ? SyntheticImagesSpec::Format::Png : SyntheticImagesSpec::Format::Jpeg;
    bool noiseOk = false;
    spec.noise = parser.value(noise).toDouble(&noiseOk);
    if (!noiseOk) {
        cli::printError("--noise", "'" + parser.value(noise).toStdString() + "' is not a number");
        return cli::BadInput;
    }
    if (auto s = validate(spec); !s) {
        cli::printError(s.error());
        return cli::BadInput;
    }

    const std::string folder = parser.value(out).toStdString();
    cli::ProgressBar bar("gen images " + folder, spec.rows, "images");
    auto previousInt = std::signal(SIGINT, onGenImagesInterrupt);
    auto previousTerm = std::signal(SIGTERM, onGenImagesInterrupt);
    const Status written = writeSyntheticImages(spec, folder, int(*threadCount), [&](std::uint64_t done) { bar.update(done); }, &g_interrupted);
    std::signal(SIGINT, previousInt);
    std::signal(SIGTERM, previousTerm);
    bar.finish();
    if (!written) {
        cli::printError(g_interrupted ? Error::failed(folder, "interrupted; the images written so far are whole") : written.error());
        return cli::RunFailed;
    }
    std::printf("wrote %llu images in %d classes to %s:", static_cast<unsigned long long>(spec.rows), spec.classes, folder.c_str());
    for (int k = 0; k < spec.classes; ++k)
        std::printf(" %s/", syntheticImageClasses()[std::size_t(k)].c_str());
    std::printf("\n");
    return cli::Success;
}

} // namespace sluice::commands
