#include "cli/cli_support.h"

#include <cmath>
#include <cstdio>

namespace sluice::cli {

void printError(const std::string &what, const std::string &why)
{
    std::fprintf(stderr, "sluice: %s%s%s\n", what.c_str(), what.empty() ? "" : ": ", why.c_str());
}

void printError(const Error &error) { printError(error.what, error.reason); }

std::optional<int> parseOrExit(QCommandLineParser &parser, const QStringList &arguments)
{
    const QCommandLineOption help({"h", "help"}, "Show this help.");
    parser.addOption(help);
    if (!parser.parse(arguments)) {
        printError(arguments.value(0).toStdString(), parser.errorText().toStdString());
        return BadInput;
    }
    if (parser.isSet(help)) {
        std::fputs(parser.helpText().toStdString().c_str(), stdout);
        return Success;
    }
    return std::nullopt;
}

std::optional<std::uint64_t> parseCount(const QString &option, const QString &text, std::uint64_t minimum)
{
    bool ok = false;
    const qulonglong v = text.trimmed().toULongLong(&ok);
    if (!ok || v < minimum) {
        printError("--" + option.toStdString(), "'" + text.toStdString() + "' is not a whole number" +
                                                    (minimum > 0 ? " >= " + std::to_string(minimum) : std::string()));
        return std::nullopt;
    }
    return v;
}

std::optional<double> parseSeconds(const QString &option, const QString &text)
{
    bool ok = false;
    const double v = text.trimmed().toDouble(&ok);
    if (!ok || !(v > 0) || !std::isfinite(v)) {
        printError("--" + option.toStdString(), "'" + text.toStdString() + "' is not a positive number of seconds");
        return std::nullopt;
    }
    return v;
}

std::optional<std::uint64_t> parseByteSize(const QString &option, const QString &text)
{
    QString t = text.trimmed().toUpper();
    if (t.endsWith("IB"))
        t.chop(2);
    else if (t.endsWith('B'))
        t.chop(1);
    double scale = 1;
    if (!t.isEmpty()) {
        const QChar unit = t.back();
        const QString units = "KMGT";
        if (const qsizetype i = units.indexOf(unit); i >= 0) {
            scale = std::pow(1024.0, double(i + 1));
            t.chop(1);
        }
    }
    bool ok = false;
    const double v = t.toDouble(&ok);
    if (!ok || !(v > 0) || !std::isfinite(v * scale) || v * scale > 1.8e19) {
        printError("--" + option.toStdString(), "'" + text.toStdString() + "' is not a size (examples: 2G, 512M, 1000000)");
        return std::nullopt;
    }
    return std::uint64_t(v * scale);
}



} // namespace sluice::cli
