// Parameter tables of the model and training objects. Defaults and docs follow docs/training.md
// and the parsers in core/train (training_config.cpp, model.cpp, optimizers.cpp, schedules.cpp).
#include "model/model_specs.h"

#include "train/model/layer_registry.h"
#include "train/objectives/loss.h"
#include "train/objectives/metrics.h"
#include "train/objectives/optimizer.h"

#include <QObject>

namespace sluice::widgets::modelspecs {
namespace {

QStringList fromStd(const std::vector<std::string> &names)
{
    QStringList out;
    for (const auto &n : names)
        out << QString::fromStdString(n);
    return out;
}

ParamSpec spec(const char *name, const QString &type, const char *def, const QString &doc)
{
    ParamSpec s;
    s.name = QString::fromLatin1(name);
    s.type = type;
    s.defaultValue = QString::fromLatin1(def);
    s.doc = doc;
    return s;
}

ParamSpec spec(const char *name, const char *type, const char *def, const QString &doc)
{
    return spec(name, QString::fromLatin1(type), def, doc);
}

QString tr(const char *text)
{
    return QObject::tr(text);
}

} // namespace

QStringList layerClassNames()
{
    QStringList names;
    for (const auto &l : train::knownLayers())
        names << QString::fromStdString(l.className);
    return names;
}

QString layerClassDoc(const QString &className)
{
    for (const auto &l : train::knownLayers())
        if (QString::fromStdString(l.className) == className)
            return QString::fromStdString(l.doc);
    return {};
}

QStringList lossNames() { return fromStd(train::knownLosses()); }
QStringList metricNames() { return fromStd(train::knownMetrics()); }
QStringList optimizerNames() { return fromStd(train::knownOptimizers()); }

QStringList scheduleKinds()
{
    return {QStringLiteral("fixed"), QStringLiteral("constant"), QStringLiteral("step"), QStringLiteral("cosine"), QStringLiteral("warmup")};
}

QList<ParamSpec> inputSpecs(const QString &shapeText)
{
    ParamSpec shape = spec("shape", "readonly", "", tr("The per-sample shape: the feature's shape without the batch dimension (from the pipeline)."));
    shape.defaultValue = shapeText; // what the read-only row shows
    return {spec("name", "string", "", tr("The model input's name; layers list it in their inputs.")),
            spec("feature", "feature", "", tr("The pipeline feature fed to this input (default: the input's name).")), shape};
}

QList<ParamSpec> layerParamSpecs(const QString &className)
{
    QList<ParamSpec> specs;
    for (const auto &l : train::knownLayers())
        if (QString::fromStdString(l.className) == className)
            for (const auto &p : l.params)
                specs << toSpec(p);
    return specs;
}

QList<ParamSpec> layerSpecs(const QJsonObject &layer, int row, const QStringList &modelInputs, const QJsonArray &layers)
{
    QStringList sources = modelInputs;
    for (int i = 0; i < row && i < layers.size(); ++i)
        sources << layers.at(i).toObject().value(QStringLiteral("name")).toString();
    sources.removeAll(QString());
    QString classDoc;
    for (const auto &l : train::knownLayers())
        classDoc += QStringLiteral("%1: %2\n").arg(QString::fromStdString(l.className), QString::fromStdString(l.doc));
    QList<ParamSpec> specs{
        spec("name", "string", "", tr("The layer's name: its weights are <name>/kernel…, and later layers and outputs refer to it.")),
        spec("class_name", QStringLiteral("enum:") + layerClassNames().join(QLatin1Char('|')), "", classDoc.trimmed()),
        spec("inputs", QStringLiteral("multi:") + sources.join(QLatin1Char('|')), "previous layer",
             tr("Model inputs or earlier layers this layer takes, in order (Concatenate joins them in this order). None "
                "ticked: the previous layer (the first layer: the only model input).")),
    };
    return specs + layerParamSpecs(layer.value(QStringLiteral("class_name")).toString());
}

QList<ParamSpec> outputSpecs(const QJsonObject &output, const QStringList &layerNames)
{
    const QString crossentropies = QStringLiteral("binary_crossentropy|categorical_crossentropy|sparse_categorical_crossentropy");
    QList<ParamSpec> specs{
        spec("name", "string", "", tr("The output's name (default: its layer's); metrics are reported as <output>_<metric>.")),
        spec("layer", QStringLiteral("enum:") + layerNames.join(QLatin1Char('|')), "", tr("The layer that produces this output.")),
        spec("target", "feature", "", tr("The pipeline feature the output is scored against.")),
        output.value(QStringLiteral("loss")).isObject()
            ? spec("loss", "object", "", tr("The loss as an object {\"name\": \"huber\", \"delta\": 1.0}."))
            : spec("loss", QStringLiteral("enum:") + lossNames().join(QLatin1Char('|')), "",
                   tr("The loss (Keras names): mse, mae, huber, binary / categorical / sparse categorical cross-entropy.")),
        spec("loss_weight", "number", "1", tr("Weight of this output's loss in the model's loss (>= 0).")),
        spec("metrics", QStringLiteral("multi:") + metricNames().join(QLatin1Char('|')), "",
             tr("Metrics accumulated over each epoch (accuracy is resolved from the loss, as Keras does).")),
        spec("from_logits", "bool", "false", tr("Cross-entropy on logits (log-softmax / log-sigmoid) rather than probabilities.")),
        spec("delta", "number", "1.0", tr("huber: where the loss turns from quadratic to linear (> 0).")),
        spec("label_smoothing", "number", "0", tr("categorical_crossentropy: the label smoothing, in [0, 1].")),
    };
    specs[6].visibleWhenParam = specs[8].visibleWhenParam = specs[7].visibleWhenParam = QStringLiteral("loss");
    specs[6].visibleWhenValues = crossentropies.split(QLatin1Char('|'));
    specs[7].visibleWhenValues = {QStringLiteral("huber")};
    specs[8].visibleWhenValues = {QStringLiteral("categorical_crossentropy")};
    return specs;
}

QList<ParamSpec> runSpecs()
{
    return {spec("epochs", "int", "1", tr("Passes over the pipeline (sluice run --epochs overrides it).")),
            spec("steps_per_epoch", "int|null", "null", tr("End an epoch after this many steps (for repeating pipelines); null: one whole pass.")),
            spec("seed", "int", "0", tr("Seed of the initial weights, the dropout masks and the pipeline's random ops.")),
            spec("threads", "int", "0", tr("Size of the training arena; 0: all cores."))};
}

QList<ParamSpec> distributionSpecs()
{
    return {spec("strategy", "enum:mirrored|default", "mirrored",
                 tr("mirrored: synchronous data parallel over the replicas (gradients summed by an all-reduce); default: one replica.")),
            spec("replicas", "int", "1", tr("CPU replicas the global batch is split over (mirrored).")),
            spec("devices", "list", "",
                 tr("Devices to mirror over instead of a replica count: cpu:0, cpu:1; cuda (every GPU); cuda:0, cuda:1 (one replica per GPU); "
                    "cuda:0 twice for two logical replicas on one GPU. Without a GPU the run says so and trains on the CPU.")),
            spec("precision", "enum:fp32|tf32|bf16", "fp32",
                 tr("Matrix products on GPUs: fp32; tf32 (tensor cores, about 3e-4 relative error); bf16 (mixed precision with fp32 "
                    "master weights). The CPU backend computes in fp32.")),
            spec("drop_remainder", "bool", "false",
                 tr("Skip a last global batch smaller than the others (else it is split as evenly as possible)."))};
}

QList<ParamSpec> batchSpecs(int replicas)
{
    ParamSpec batch = spec("batch_size", "int", "",
                 QObject::tr("The global batch: the batch_size of the pipeline's batch stage, split evenly over the %n replica(s) (losses "
                    "are averaged over the global batch).",
                    nullptr, std::max(1, replicas)));
    batch.required = true;
    return {batch};
}

QList<ParamSpec> optimizerSpecs(const QString &type)
{
    QList<ParamSpec> specs{spec("type", QStringLiteral("enum:") + optimizerNames().join(QLatin1Char('|')), "adam",
                                tr("The optimizer, with Keras's update rules."))};
    const bool adam = type == QLatin1String("adam") || type == QLatin1String("adamw");
    if (type == QLatin1String("sgd"))
        specs << spec("momentum", "number", "0", tr("Momentum, in [0, 1].")) << spec("nesterov", "bool", "false", tr("Nesterov momentum."));
    if (adam)
        specs << spec("beta_1", "number", "0.9", tr("Decay of the first-moment estimates, in [0, 1).")) //
              << spec("beta_2", "number", "0.999", tr("Decay of the second-moment estimates, in [0, 1)."))
              << spec("epsilon", "number", "1e-07", tr("Added to the denominator for numerical stability."))
              << spec("amsgrad", "bool", "false", tr("Use the AMSGrad variant (the maximum of past second moments)."));
    if (type == QLatin1String("rmsprop"))
        specs << spec("rho", "number", "0.9", tr("Decay of the moving average of squared gradients, in [0, 1].")) //
              << spec("momentum", "number", "0", tr("Momentum, in [0, 1]."))
              << spec("epsilon", "number", "1e-07", tr("Added to the denominator for numerical stability."))
              << spec("centered", "bool", "false", tr("Normalise by the gradient's estimated variance."));
    specs << spec("weight_decay", "number", type == QLatin1String("adamw") ? "0.004" : "0",
                  tr("Decoupled weight decay applied with each update."))
          << spec("global_clipnorm", "number", "", tr("Scale the summed gradient down to this global L2 norm (> 0); not set: no clipping."));
    if (adam)
        specs[1].range = specs[2].range = ParamRange{0.0, 1.0, false, true};
    return specs;
}

QList<ParamSpec> scheduleSpecs(const QString &kind, const QString &optimizerType)
{
    const char *lrDefault = optimizerType == QLatin1String("sgd") ? "0.01" : "0.001";
    QList<ParamSpec> specs{spec("schedule", QStringLiteral("enum:") + scheduleKinds().join(QLatin1Char('|')), "fixed",
                                tr("fixed: one number; constant, step (decay by gamma every step_size steps), cosine (Keras CosineDecay "
                                   "with an optional warm-up), warmup (linear warm-up, then another schedule)."))};
    const QString lr = tr("The learning rate (>= 0).");
    const QString initial = tr("The learning rate at step 0 (>= 0).");
    if (kind == QLatin1String("fixed") || kind.isEmpty())
        specs << spec("learning_rate", "number", lrDefault, lr);
    else if (kind == QLatin1String("constant"))
        specs << spec("learning_rate", "number", "", lr);
    else if (kind == QLatin1String("step"))
        specs << spec("initial_learning_rate", "number", "", initial) << spec("step_size", "int", "", tr("Steps between decays (>= 1)."))
              << spec("gamma", "number", "0.1", tr("Factor applied every step_size steps."));
    else if (kind == QLatin1String("cosine"))
        specs << spec("initial_learning_rate", "number", "", initial) << spec("decay_steps", "int", "", tr("Steps to decay over (>= 1)."))
              << spec("alpha", "number", "0", tr("The floor, as a fraction of the initial rate."))
              << spec("warmup_steps", "int", "0", tr("Linear warm-up steps before the decay."))
              << spec("warmup_target", "number", "", tr("The rate reached at the end of the warm-up."));
    else if (kind == QLatin1String("warmup"))
        specs << spec("warmup_steps", "int", "", tr("Steps of the linear warm-up from 0.")) //
              << spec("after", "json", "", tr("The schedule after the warm-up: a number or {\"type\": \"cosine\", …}."));
    return specs;
}

QList<ParamSpec> checkpointSpecs()
{
    return {spec("every_epoch", "bool", "true", tr("Write a checkpoint at the end of each epoch (needs --out).")),
            spec("every_steps", "int", "0", tr("Also write one every this many steps; 0: not by steps.")),
            spec("keep", "int", "2", tr("Newest checkpoints kept (>= 1)."))};
}

QList<ParamSpec> validationSpecs()
{
    return {spec("split", "number", "",
                 tr("Hold out every round(1/split)-th batch and score it as it comes, in (0, 1). Setting it replaces node.")),
            spec("node", "string", "", tr("Another output node of the pipeline, evaluated in full at each epoch's end. Setting it replaces split.")),
            spec("steps", "int|null", "null", tr("Limit the validation node to this many batches."))};
}

QList<ParamSpec> weightingSpecs()
{
    return {spec("sample_weight", "feature", "", tr("A feature holding each sample's weight in the loss and the metrics.")),
            spec("class_weight", "object", "", tr("Weights by class index, e.g. {\"0\": 1.0, \"1\": 9.0} (one-output models).")),
            spec("initial_weights", "path", "", tr("An .npz with one array per weight, named <layer>/<weight>."))};
}

QStringList specNames(const QList<ParamSpec> &specs)
{
    QStringList names;
    for (const ParamSpec &s : specs)
        names << s.name;
    return names;
}

} // namespace sluice::widgets::modelspecs
