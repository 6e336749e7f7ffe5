#pragma once
// The parameter tables the model panel edits with: model inputs, layers (from core's layer
// registry), outputs (losses and metrics from core's lists), and the training object's sections.
// Optimizers and learning-rate schedules have no documented parameter table in core (only their
// parsers in core/train/objectives/optimizers.cpp and schedules.cpp), so theirs are written here, following
// those parsers and docs/training.md; a test checks that every optimizer core knows has one.
//
// Threading: pure; any thread.

#include "inspector/param_spec.h"

#include <QJsonArray>
#include <QJsonObject>

namespace sluice::widgets::modelspecs {

QStringList layerClassNames();
QString layerClassDoc(const QString &className); // empty for an unknown class
QStringList lossNames();
QStringList metricNames();
QStringList optimizerNames();
QStringList scheduleKinds(); // "fixed" (a number) and core's schedule types

QList<ParamSpec> inputSpecs(const QString &shapeText);
// The documented parameters of `className` (empty for an unknown class).
QList<ParamSpec> layerParamSpecs(const QString &className);
// name, class_name, inputs (the model's inputs and the layers before `row`), then the class's.
QList<ParamSpec> layerSpecs(const QJsonObject &layer, int row, const QStringList &modelInputs, const QJsonArray &layers);
QList<ParamSpec> outputSpecs(const QJsonObject &output, const QStringList &layerNames);

// Training sections, each over the training object or one of its members.
QList<ParamSpec> runSpecs();          // epochs, steps_per_epoch, seed, threads
QList<ParamSpec> distributionSpecs(); // strategy, replicas, devices, drop_remainder
QList<ParamSpec> batchSpecs(int replicas);
QList<ParamSpec> optimizerSpecs(const QString &type); // type and its hyper-parameters (not learning_rate)
QList<ParamSpec> scheduleSpecs(const QString &kind, const QString &optimizerType);
QList<ParamSpec> checkpointSpecs();
QList<ParamSpec> validationSpecs();
QList<ParamSpec> weightingSpecs(); // sample_weight, class_weight, initial_weights

// The keys a spec list documents, for dropping what belonged to a previous class or type.
QStringList specNames(const QList<ParamSpec> &specs);

} // namespace sluice::widgets::modelspecs
