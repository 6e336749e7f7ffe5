// The run family of commands: running projects: training, profiling, predicting.
#include "commands/commands.h"

namespace sluice::commands {

void addRunCommands(CommandTable &table)
{
    table["run"] = run;
    table["predict"] = predict;
}

} // namespace sluice::commands
