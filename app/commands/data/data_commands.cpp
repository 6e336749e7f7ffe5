// The data family of commands: inspecting, generating, converting and previewing data.
#include "commands/commands.h"

namespace sluice::commands {

void addDataCommands(CommandTable &table)
{
    table["inspect"] = inspect;
    table["gen"] = gen;
    table["convert"] = convert;
    table["ops"] = ops;
    table["preview"] = preview;
}

} // namespace sluice::commands
