#pragma once
// What every command shares: the exit codes of docs/architecture.md, decision 9, error printing as
// "sluice: <what>: <why>", and parsing of option values with messages that name the option.

#include "io/error.h"
#include "io/text_format.h"

#include <QCommandLineParser>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <string>

namespace sluice::cli {

enum ExitCode { Success = 0, RunFailed = 1, BadInput = 2 };

// Prints "sluice: what: why" to stderr.
void printError(const std::string &what, const std::string &why);
void printError(const Error &error);

// Parses `arguments` (command name first) with `parser`; on a parse error or --help, prints
// and returns the exit code to end with, else nothing.
std::optional<int> parseOrExit(QCommandLineParser &parser, const QStringList &arguments);

// Option values, checked: nothing (after printing the error) when the text is not valid.
std::optional<std::uint64_t> parseCount(const QString &option, const QString &text, std::uint64_t minimum = 0);
std::optional<double> parseSeconds(const QString &option, const QString &text);
// "2G", "512M", "1.5GiB", "1000000": bytes with 1024-based suffixes.
std::optional<std::uint64_t> parseByteSize(const QString &option, const QString &text);

// "1.23 GB/s"-style human figures (1000-based, as bandwidth is usually quoted).
using sluice::humanBytes; // io/text_format.h: shared with the workbench's Profile dock
using sluice::humanRate;

} // namespace sluice::cli
