// The bench family of commands: the measured figures of BENCHMARKS.md.
#include "commands/commands.h"

namespace sluice::commands {

void addBenchCommands(CommandTable &table)
{
    table["bench"] = bench;
}

} // namespace sluice::commands
