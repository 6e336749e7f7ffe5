#include "commands/commands.h"

namespace sluice::commands {

const CommandTable &allCommands()
{
    static const CommandTable table = [] {
        CommandTable all;
        addDataCommands(all);
        addRunCommands(all);
        addModelCommands(all);
        addBenchCommands(all);
        return all;
    }();
    return table;
}

} // namespace sluice::commands
