#pragma once
// The headless commands of the `sluice` executable. Each takes its arguments with the
// command name first and returns the process exit code (cli::ExitCode). The commands live in
// folders by family (data/, run/, models/, bench/); each family adds its own to the table
// (<family>_commands.cpp), and main.cpp looks a command up there.

#include <QString>
#include <QStringList>

#include <map>

namespace sluice::commands {

using Command = int (*)(const QStringList &arguments);
using CommandTable = std::map<QString, Command>;

// Every command by the name the user types.
const CommandTable &allCommands();
// Each family's share of the table.
void addDataCommands(CommandTable &table);   // inspect, gen, convert, ops, preview
void addRunCommands(CommandTable &table);    // run, predict
void addModelCommands(CommandTable &table);  // import, export
void addBenchCommands(CommandTable &table);  // bench (read, pipeline, train, storage)

int inspect(const QStringList &arguments);
int gen(const QStringList &arguments);
int genImages(const QStringList &arguments); // gen images: picture folders (gen_images_command.cpp)
int genInteractions(const QStringList &arguments); // gen interactions: a recommender log (gen_interactions_command.cpp)
int bench(const QStringList &arguments);
int run(const QStringList &arguments);
// `sluice bench pipeline` (bench_pipeline_command.cpp); bench() dispatches to it.
int benchPipeline(const QStringList &arguments);
// `sluice bench train` (bench_train_command.cpp); bench() dispatches to it.
int benchTrain(const QStringList &arguments);
// `sluice bench storage` (bench_storage_command.cpp); bench() dispatches to it.
int benchStorage(const QStringList &arguments);
int preview(const QStringList &arguments);
int predict(const QStringList &arguments); // predict_command.cpp: a model's outputs over a pipeline node
// `sluice export`: a trained model as safetensors + a PyTorch model.py (export_command.cpp).
int exportModel(const QStringList &arguments);
// `sluice import`: a Keras 3 model into a project (import_command.cpp).
int importModel(const QStringList &arguments);
int ops(const QStringList &arguments);
// `sluice convert`: datasets into save's sharded format (convert_command.cpp).
int convert(const QStringList &arguments);

} // namespace sluice::commands
