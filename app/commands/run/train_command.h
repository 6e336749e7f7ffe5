#pragma once
// Training half of `sluice run` (train_command.cpp).

#include "project/project.h"

#include <QCommandLineParser>

namespace sluice::commands {

// Options read: --epochs --replicas --device --threads --seed --out --json --resume.
int runTraining(const QCommandLineParser &parser, Project project);

} // namespace sluice::commands
