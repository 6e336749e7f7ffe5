// sluice bench train: training throughput of an MLP on the CPU backend or a GPU (samples/s, step
// time, TFLOP/s), the figures of BENCHMARKS.md's training sections. The measuring is in
// bench_train.cpp (oneTBB, kept out of this Qt translation unit).
#include "commands/bench/bench_train.h"
#include "commands/commands.h"

#include "cli/cli_support.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <cstdio>

namespace sluice::commands {

int benchTrain(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Training throughput of an MLP (Dense layers, the given activation between them) on the CPU backend\n"
        "or a GPU: warm-up steps, then timed steps of forward, backward, all-reduce over the replicas and\n"
        "optimizer update, over batches generated before timing. On a GPU (--device cuda) the step is the\n"
        "Trainer's GPU engine and includes the batch's host-to-device copy (staged through pinned memory).\n"
        "With --run, the whole `sluice run` path instead: the Trainer on a from_npy -> global_shuffle ->\n"
        "batch -> prefetch pipeline over generated .npy files, one warm-up epoch of --steps batches, then\n"
        "one timed epoch; --data DIR trains on DIR/x.npy and DIR/y.npy instead (an epoch: --steps batches). With\n"
        "--cold, the larger-than-RAM mode: the files are dropped from the page cache, the pipeline is timed alone\n"
        "for --steps batches, dropped again, then one epoch of training is timed, and their ratio is reported.\n"
        "TFLOP/s: 6 x the Dense layers' kernel weights x samples/s (forward 2, backward 4).\n\n"
        "Examples:\n  sluice bench train --widths 784,512,512,10 --batch 256 --steps 50 --threads 2 --json\n"
        "  sluice bench train --replicas 2 --warmup 5 --optimizer sgd --learning-rate 0.01 --activation tanh --seed 3\n"
        "  sluice bench train --widths 64,64,1 --loss mse --run\n"
        "  sluice bench train --run --cold --data big --widths 256,256,1 --loss mse --batch 1024 --steps 500   # larger than RAM\n"
        "  sluice bench train --widths 4096,4096,4096,4096,4096 --batch 8192 --device cuda:0 --precision bf16 --json\n"
        "  sluice bench train --model bench/models/image_cnn.json --input-shape 48x48x3 --widths 6912,5 --batch 64 --steps 20 --threads 2\n"
        "  sluice bench train --model bench/models/embedding.json --ids 1000000 --input-shape 8 --widths 8,1 --loss mse --batch 1024\n"
        "  sluice bench train --model bench/models/embedding.json --ids 1000000 --ids-zipf 0.9 --input-shape 8 --widths 8,1 --loss mse");
    parser.addPositionalArgument("train", "The benchmark name.");
    parser.addOption({"widths", "Layer widths, input first (default 128,256,10).", "LIST", "128,256,10"});
    parser.addOption({"batch", "Global batch (default 64).", "N", "64"});
    parser.addOption({"steps", "Timed steps (default 100).", "N", "100"});
    parser.addOption({"warmup", "Untimed steps before them (default 10).", "N", "10"});
    parser.addOption({"replicas", "Mirrored replicas (default 1); with --device cuda:N, logical replicas on that GPU.", "N", "1"});
    parser.addOption({"threads", "Training arena threads (default: all cores).", "N", "0"});
    parser.addOption({"optimizer", "adam, sgd, adamw or rmsprop (default adam).", "NAME", "adam"});
    parser.addOption({"learning-rate", "Learning rate (default 0.001).", "LR", "0.001"});
    parser.addOption({"activation", "Activation of the hidden layers (default relu).", "NAME", "relu"});
    parser.addOption({"loss", "sparse_categorical_crossentropy (from logits, the default) or mse.", "NAME",
                      "sparse_categorical_crossentropy"});
    parser.addOption({"seed", "Seed of the weights and data (default 1).", "S", "1"});
    parser.addOption({"device", "cpu (the default), cuda (every GPU, one replica each) or cuda:N.", "DEVICE", "cpu"});
    parser.addOption({"precision", "Matrix products on a GPU: fp32 (the default), tf32 or bf16 (mixed precision).", "NAME", "fp32"});
    parser.addOption({"run", "Time the whole `sluice run` path (pipeline and Trainer) instead of the step."});
    parser.addOption({"data", "With --run: train on DIR/x.npy and DIR/y.npy (e.g. from `sluice gen regression --feature x:W "
                              "--target y:K`) instead of generated files.", "DIR"});
    parser.addOption({"cold", "With --run: larger-than-RAM mode: drop the data from the page cache before timing the pipeline "
                              "alone, then one epoch of training."});
    parser.addOption({"model", "A model JSON (a project's \"model\" object whose input reads feature x and whose output's target is y) "
                               "instead of the MLP; the step benchmark on the CPU backend only. The classes (or mse width) are the "
                               "last of --widths.", "FILE"});
    parser.addOption({"input-shape", "With --model: x's per-sample shape, e.g. 48x48x3 (default: the first of --widths).", "SHAPE"});
    parser.addOption({"ids", "With --model: x holds whole-number ids drawn uniformly from [0, N) (for Embedding layers) instead of "
                             "N(0, 1) values.", "N"});
    parser.addOption({"ids-zipf", "With --ids: draw the ids with Zipf-like popularity of exponent S (rank k about (k + 1)^-S, "
                                  "popular ids spread over the range), as real interaction logs have, instead of uniformly.", "S"});
    parser.addOption({"json", "One JSON object on stdout."});
    if (auto exit = cli::parseOrExit(parser, arguments))
        return *exit;
    if (parser.positionalArguments() != QStringList{"train"}) {
        cli::printError("bench train", "usage: sluice bench train [options] (try 'sluice bench train --help')");
        return cli::BadInput;
    }

    TrainBenchOptions o;
    o.widths.clear();
    for (const QString &w : parser.value("widths").split(',')) {
        const auto n = cli::parseCount("widths", w, 1);
        if (!n)
            return cli::BadInput;
        o.widths.push_back(std::int64_t(*n));
    }
    if (o.widths.size() < 2) {
        cli::printError("--widths", "needs at least two widths (input and output), e.g. 128,256,10");
        return cli::BadInput;
    }
    const auto batch = cli::parseCount("batch", parser.value("batch"), 1);
    const auto steps = cli::parseCount("steps", parser.value("steps"), 1);
    const auto warmup = cli::parseCount("warmup", parser.value("warmup"));
    const auto replicas = cli::parseCount("replicas", parser.value("replicas"), 1);
    const auto threads = cli::parseCount("threads", parser.value("threads"));
    const auto seed = cli::parseCount("seed", parser.value("seed"));
    if (!batch || !steps || !warmup || !replicas || !threads || !seed)
        return cli::BadInput;
    bool lrOk = false;
    o.learningRate = parser.value("learning-rate").toDouble(&lrOk);
    if (!lrOk || !(o.learningRate >= 0)) {
        cli::printError("--learning-rate", "'" + parser.value("learning-rate").toStdString() + "' is not a non-negative number");
        return cli::BadInput;
    }
    if (*replicas > std::uint64_t(*batch)) {
        cli::printError("--replicas", "more replicas than rows in the batch");
        return cli::BadInput;
    }
    o.batch = std::int64_t(*batch);
    o.steps = std::int64_t(*steps);
    o.warmup = std::int64_t(*warmup);
    o.replicas = int(std::min<std::uint64_t>(*replicas, 256));
    o.threads = int(std::min<std::uint64_t>(*threads, 1024));
    o.seed = *seed;
    o.optimizer = parser.value("optimizer").toStdString();
    o.activation = parser.value("activation").toStdString();
    o.loss = parser.value("loss").toStdString();
    if (o.loss != "mse" && o.loss != "sparse_categorical_crossentropy") {
        cli::printError("--loss", "'" + o.loss + "' is not sparse_categorical_crossentropy or mse");
        return cli::BadInput;
    }

    o.device = parser.value("device").toStdString();
    o.precision = parser.value("precision").toStdString();
    if (o.precision != "fp32" && o.precision != "tf32" && o.precision != "bf16") {
        cli::printError("--precision", "'" + o.precision + "' is not fp32, tf32 or bf16");
        return cli::BadInput;
    }
    if (o.device == "cpu" && o.precision != "fp32") {
        cli::printError("--precision", o.precision + " needs a GPU (--device cuda): the CPU backend computes in fp32");
        return cli::BadInput;
    }
    if (auto s = resolveBenchDevices(o); !s.ok()) { // a bad name, no GPU, no such GPU
        cli::printError(s.error());
        return cli::BadInput;
    }

    if (parser.isSet("warmup") && parser.isSet("run")) {
        cli::printError("--warmup", "applies to the step benchmark: with --run the first epoch is the warm-up (--cold times it instead)");
        return cli::BadInput;
    }
    if ((parser.isSet("data") || parser.isSet("cold")) && !parser.isSet("run")) {
        cli::printError(parser.isSet("data") ? "--data" : "--cold", "only applies with --run (the training step alone reads no files)");
        return cli::BadInput;
    }
    if (parser.isSet("data")) {
        const QFileInfo dir(parser.value("data"));
        if (!dir.isDir()) {
            cli::printError("--data", "'" + parser.value("data").toStdString() + "' is not a folder (it should hold x.npy and y.npy)");
            return cli::BadInput;
        }
        o.dataDir = dir.absoluteFilePath().toStdString();
    }
    o.cold = parser.isSet("cold");
    if (parser.isSet("input-shape") && !parser.isSet("model")) {
        cli::printError("--input-shape", "only applies with --model");
        return cli::BadInput;
    }
    if (parser.isSet("ids") && !parser.isSet("model")) {
        cli::printError("--ids", "only applies with --model");
        return cli::BadInput;
    }
    if (parser.isSet("ids-zipf")) {
        bool ok = false;
        o.idZipf = parser.value("ids-zipf").toDouble(&ok);
        if (!parser.isSet("ids") || !ok || !(o.idZipf > 0) || o.idZipf == 1.0) {
            cli::printError("--ids-zipf", parser.isSet("ids") ? "expected an exponent > 0 other than 1, got '" + parser.value("ids-zipf").toStdString() + "'"
                                                              : std::string("only applies with --ids"));
            return cli::BadInput;
        }
    }
    if (parser.isSet("ids")) {
        const auto n = cli::parseCount("ids", parser.value("ids"), 1);
        if (!n)
            return cli::BadInput;
        o.idRange = std::int64_t(*n);
    }
    if (parser.isSet("model")) {
        if (parser.isSet("run") || !o.gpuDevices.empty()) {
            cli::printError("--model", "times the training step on the CPU backend only (no --run, no --device cuda)");
            return cli::BadInput;
        }
        QFile file(parser.value("model"));
        if (!file.open(QIODevice::ReadOnly)) {
            cli::printError("--model", "cannot read '" + parser.value("model").toStdString() + "': " + file.errorString().toStdString());
            return cli::BadInput;
        }
        o.model = nlohmann::json::parse(file.readAll().toStdString(), nullptr, false);
        if (!o.model.is_object()) {
            cli::printError("--model", "'" + parser.value("model").toStdString() + "' is not a JSON object");
            return cli::BadInput;
        }
        o.inputShape = {o.widths.front()};
        if (parser.isSet("input-shape")) {
            o.inputShape.clear();
            for (const QString &d : parser.value("input-shape").split('x')) {
                const auto n = cli::parseCount("input-shape", d, 1);
                if (!n)
                    return cli::BadInput;
                o.inputShape.push_back(std::int64_t(*n));
            }
        }
        std::int64_t values = 1;
        for (auto d : o.inputShape)
            values *= d;
        o.widths = {values, o.widths.back()};
    }

    Result<TrainBenchResult> result = Error::invalid("bench train", "not run");
    if (parser.isSet("run")) {
        QTemporaryDir folder;
        if (!folder.isValid()) {
            cli::printError("bench train", "cannot create a temporary folder: " + folder.errorString().toStdString());
            return cli::RunFailed;
        }
        result = benchTrainingRun(o, folder.path().toStdString());
    } else {
        result = benchTrainingStep(o);
    }
    if (!result) {
        cli::printError(result.error());
        return result.error().kind == Error::Kind::InvalidArgument ? int(cli::BadInput) : int(cli::RunFailed);
    }
    const TrainBenchResult &r = *result;
    std::string widths;
    for (auto w : o.widths)
        widths += (widths.empty() ? "" : ",") + std::to_string(w);

    if (parser.isSet("json")) {
        nlohmann::json j{{"tool", "sluice"},
                         {"benchmark", "train"},
                         {"mode", r.mode},
                         {"widths", o.widths},
                         {"config", widths + "@" + std::to_string(o.batch)},
                         {"batch", o.batch},
                         {"activation", o.activation},
                         {"loss", o.loss},
                         {"optimizer", o.optimizer},
                         {"device", o.device},
                         {"device_name", r.deviceName},
                         {"precision", o.precision},
                         {"replicas", r.replicas},
                         {"threads", r.threads},
                         {"parameters", r.parameters},
                         {"dense_weights", denseWeightCount(o)},
                         {"warmup", r.warmup},
                         {"steps", r.steps},
                         {"seconds", r.seconds},
                         {"samples_per_s", r.samplesPerSecond},
                         {"step_ms", r.stepMsMedian},
                         {"step_ms_median", r.stepMsMedian},
                         {"step_ms_mean", r.stepMsMean},
                         {"tflops", r.tflops},
                         {"first_loss", r.firstLoss},
                         {"last_loss", r.lastLoss}};
        if (r.mode == "step" && o.gpuDevices.empty()) {
            j["forward_backward_ms"] = r.forwardBackwardMs;
            j["reduce_update_ms"] = r.reduceUpdateMs;
        } else if (r.mode == "step") {
            j["run_call_ms"] = r.runCallMs;
            j["update_call_ms"] = r.updateCallMs;
        }
        if (!o.model.is_null()) {
            j["model"] = QFileInfo(parser.value("model")).fileName().toStdString();
            j["input_shape"] = o.inputShape;
            if (o.idRange > 0)
                j["ids"] = o.idRange;
            if (o.idZipf > 0)
                j["ids_zipf"] = o.idZipf;
        }
        j.update(r.extra);
        std::printf("%s\n", j.dump().c_str());
        return cli::Success;
    }
    std::printf("bench train %s: %s %s (%s), %lld parameters, batch %lld, %s, %s, %d replica%s, %d threads\n",
                r.mode == "run" ? "(sluice run path)" : "(training step)", o.model.is_null() ? "MLP" : "model", widths.c_str(), o.activation.c_str(),
                (long long)r.parameters,
                (long long)o.batch, o.loss.c_str(), o.optimizer.c_str(), r.replicas, r.replicas == 1 ? "" : "s", r.threads);
    std::printf("  device           %s, %s\n", r.deviceName.c_str(), o.precision.c_str());
    std::printf("  samples/s        %.0f\n", r.samplesPerSecond);
    std::printf("  TFLOP/s          %.3f\n", r.tflops);
    std::printf("  step             %.3f ms median, %.3f ms mean over %lld steps%s\n", r.stepMsMedian, r.stepMsMean, (long long)r.steps,
                r.mode == "step" && !o.gpuDevices.empty() ? " (host-to-device copy included)" : "");
    if (r.mode == "step" && o.gpuDevices.empty())
        std::printf("    forward+backward %.3f ms, all-reduce+update %.3f ms (means)\n", r.forwardBackwardMs, r.reduceUpdateMs);
    else if (r.mode == "step")
        std::printf("    in run() %.3f ms (staging, copy, forward, backward, wait), in update() %.3f ms (queueing) (means)\n", r.runCallMs,
                    r.updateCallMs);
    std::printf("  loss             %.4f -> %.4f\n", r.firstLoss, r.lastLoss);
    if (o.cold)
        std::printf("  cold: pipeline alone %.0f samples/s; training %.0f%% of it (%.0f%% of the data left in the page cache)\n",
                    r.extra.value("pipeline_samples_per_s", 0.0), 100 * r.extra.value("of_pipeline", 0.0),
                    100 * r.extra.value("cached_after_eviction", 0.0));
    return cli::Success;
}

} // namespace sluice::commands
