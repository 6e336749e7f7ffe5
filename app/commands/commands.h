#pragma once
// The headless commands of the `sluice` executable. Each takes its arguments with the
// command name first and returns the process exit code (cli::ExitCode).

#include <QStringList>

namespace sluice::commands {

int inspect(const QStringList &arguments);
int gen(const QStringList &arguments);
int bench(const QStringList &arguments);

} // namespace sluice::commands
