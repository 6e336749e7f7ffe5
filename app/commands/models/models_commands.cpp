// The models family of commands: models in and out: Keras import, safetensors export.
#include "commands/commands.h"

namespace sluice::commands {

void addModelCommands(CommandTable &table)
{
    table["import"] = importModel;
    table["export"] = exportModel;
}

} // namespace sluice::commands
