// sluice inspect [--stats] [--json] FILE...: what is inside .npy and .npz files.
#include "commands/commands.h"

#include "cli/cli_support.h"
#include "io/array_report.h"

#include <cstdio>
#include <string>

namespace sluice::commands {
namespace {

std::string shapeText(const nlohmann::json &shape)
{
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i].get<std::uint64_t>());
    return s + (shape.size() == 1 ? ",)" : ")");
}

std::string valueText(const nlohmann::json &v)
{
    if (v.is_null())
        return "-";
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_number_float()) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.6g", v.get<double>());
        return buf;
    }
    return v.dump();
}

void printArray(const nlohmann::json &a, const char *indent)
{
    std::printf("%sformat         .npy %s\n", indent, a["format_version"].get<std::string>().c_str());
    std::printf("%sdtype          %s\n", indent, a["dtype"].get<std::string>().c_str());
    std::printf("%sshape          %s\n", indent, shapeText(a["shape"]).c_str());
    std::printf("%sfortran_order  %s\n", indent, a["fortran_order"].get<bool>() ? "True" : "False");
    std::printf("%ssize           %s bytes (%s)\n", indent, std::to_string(a["nbytes"].get<std::uint64_t>()).c_str(),
                cli::humanBytes(a["nbytes"].get<double>()).c_str());
    std::printf("%sstorage        %s%s\n", indent, a["storage"].get<std::string>().c_str(),
                a.contains("compressed") ? (a["compressed"].get<bool>() ? " (deflated member)" : " (stored member)") : "");
    if (a.contains("stats")) {
        const auto &s = a["stats"];
        std::printf("%smin %s  max %s  sum %s  mean %s  nan_count %s\n", indent, valueText(s["min"]).c_str(),
                    valueText(s["max"]).c_str(), valueText(s["sum"]).c_str(), valueText(s["mean"]).c_str(),
                    valueText(s["nan_count"]).c_str());
    }
}

void printText(const nlohmann::json &j)
{
    std::printf("%s\n", j["file"].get<std::string>().c_str());
    if (j["format"] == "npy") {
        printArray(j, "  ");
        return;
    }
    if (j["format"] == "csv") {
        std::printf("  CSV, %s rows, %zu columns, %s\n", std::to_string(j["rows"].get<std::uint64_t>()).c_str(), j["columns"].size(),
                    cli::humanBytes(j["nbytes"].get<double>()).c_str());
        for (const auto &c : j["columns"]) {
            std::printf("  %-20s %-8s", c["name"].get<std::string>().c_str(), c["dtype"].get<std::string>().c_str());
            if (c["empty"].get<std::uint64_t>() > 0)
                std::printf("  %s empty", std::to_string(c["empty"].get<std::uint64_t>()).c_str());
            if (c.contains("stats")) {
                const auto &s = c["stats"];
                std::printf("  min %s  max %s  mean %s  nan_count %s", valueText(s["min"]).c_str(), valueText(s["max"]).c_str(),
                            valueText(s["mean"]).c_str(), valueText(s["nan_count"]).c_str());
            }
            std::printf("\n");
        }
        return;
    }
    if (j["format"] == "tfrecord") {
        std::printf("  TFRecord%s, %s records of tf.train.Example, %s\n", j["compression"] == "GZIP" ? " (GZIP)" : "",
                    std::to_string(j["records"].get<std::uint64_t>()).c_str(), cli::humanBytes(j["nbytes"].get<double>()).c_str());
        for (const auto &[name, f] : j["features"].items()) {
            const auto lo = f["min_length"].get<std::uint64_t>(), hi = f["max_length"].get<std::uint64_t>();
            std::printf("  %-20s %-8s length %s\n", name.c_str(), f["dtype"].get<std::string>().c_str(),
                        lo == hi ? std::to_string(lo).c_str() : (std::to_string(lo) + ".." + std::to_string(hi)).c_str());
        }
        return;
    }
    std::printf("  .npz archive, %zu arrays, %s\n", j["arrays"].size(), cli::humanBytes(j["nbytes"].get<double>()).c_str());
    for (const auto &[name, a] : j["arrays"].items()) {
        std::printf("  %s\n", name.c_str());
        printArray(a, "    ");
    }
}

} // namespace

int inspect(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription("What is inside .npy, .npz, TFRecord and CSV files: format version, dtype, shape, order,\n"
                                     "size; with --stats, min, max, sum, mean and NaN count from one parallel pass.\n"
                                     "TFRecord files: record count (CRCs checked) and each tf.train.Example feature.\n"
                                     "CSV (.csv, .tsv): rows and each column's inferred dtype (with --stats, its summary).\n\n"
                                     "Examples:\n"
                                     "  sluice inspect data/x.npy data/train.npz data/part-0.tfrecord data/dump.csv\n"
                                     "  sluice inspect --stats --threads 4 data/x.npy\n"
                                     "  sluice inspect --stats --json data/*.npy > summary.jsonl");
    const QCommandLineOption stats("stats", "Compute min, max, sum, mean (float64, NaNs excluded) and nan_count.");
    const QCommandLineOption json("json", "Print one JSON object per file.");
    const QCommandLineOption threads("threads", "Threads for --stats (default: all cores).", "N", "0");
    parser.addOptions({stats, json, threads});
    parser.addPositionalArgument("FILE", "A .npy, .npz, TFRecord, .csv or .tsv file.", "FILE...");
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    const QStringList files = parser.positionalArguments();
    if (files.isEmpty()) {
        cli::printError("inspect", "no FILE given (try 'sluice inspect --help')");
        return cli::BadInput;
    }
    const auto threadCount = cli::parseCount("threads", parser.value(threads));
    if (!threadCount)
        return cli::BadInput;
    if (parser.isSet(threads) && !parser.isSet(stats)) {
        cli::printError("--threads", "applies to --stats (listing a file reads only its header)");
        return cli::BadInput;
    }

    InspectOptions options{parser.isSet(stats), int(*threadCount)};
    int exitCode = cli::Success;
    for (const QString &file : files) {
        auto report = inspectFile(file.toStdString(), options);
        if (!report) {
            cli::printError(report.error()); // and go on: every other file is still reported
            exitCode = cli::BadInput;
            continue;
        }
        // Options that do not act on this kind of file are said, not dropped.
        const std::string format = report->value("format", "");
        if (parser.isSet(stats) && format == "tfrecord")
            std::fprintf(stderr, "sluice: note: %s: --stats computes no statistics for TFRecord features (they are listed with their types)\n",
                         file.toStdString().c_str());
        else if (parser.isSet(threads) && format == "csv")
            std::fprintf(stderr, "sluice: note: %s: --threads has no effect on CSV: its statistics take one pass in order\n", file.toStdString().c_str());
        if (parser.isSet(json))
            std::printf("%s\n", report->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        else
            printText(*report);
        std::fflush(stdout);
    }
    return exitCode;
}

} // namespace sluice::commands
