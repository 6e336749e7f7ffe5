// `sluice run` on projects with a model: JSON events, the run folder, --set, exit codes,
// kill -9 then --resume, Ctrl-C, and several processes under mpirun.
#include "events/run_events.h"
#include "io/formats/npz_file.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"
#include "support/train_test_support.h"
#include "train/gpu/device_query.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>

using namespace sluice;
using namespace sluice::test;

namespace {

// Every array of a weights .npz, by name, as floats.
std::map<std::string, std::vector<float>> readWeights(const std::string &path)
{
    std::map<std::string, std::vector<float>> arrays;
    auto npz = NpzFile::open(path);
    if (!npz)
        return arrays;
    for (const auto &m : npz->members()) {
        auto a = npz->load(m);
        if (!a)
            continue;
        const float *p = reinterpret_cast<const float *>(a->data().data());
        arrays[m.name] = std::vector<float>(p, p + a->count());
    }
    return arrays;
}

double weightsDifference(const std::map<std::string, std::vector<float>> &a, const std::map<std::string, std::vector<float>> &b)
{
    if (a.size() != b.size() || a.empty())
        return INFINITY;
    double worst = 0;
    for (const auto &[name, values] : a) {
        auto it = b.find(name);
        if (it == b.end())
            return INFINITY;
        worst = std::max(worst, maxRelativeDifference(values, it->second));
    }
    return worst;
}

} // namespace

class TestCliTrain : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString dir() const { return m_dir.path(); }
    QString m_project;

    QString writeProject(const QString &name, const nlohmann::json &document)
    {
        const QString path = dir() + "/" + name;
        writeFile(path.toStdString(), document.dump(2));
        return path;
    }

    static QProcess *startSluice(const QStringList &args)
    {
        auto *p = new QProcess;
        p->setProgram(QString::fromUtf8(SLUICE_BINARY_PATH));
        p->setArguments(args);
        p->start();
        return p;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        writeTrainingData(dir().toStdString(), 120);
        m_project = writeProject("mlp.sluice", trainingProject(mlpModel(), {{"epochs", 2}, {"seed", 3}, {"optimizer", "adam"}}, 40));
    }

    void jsonEventsAndTheRunFolder()
    {
        const QString out = dir() + "/run1";
        auto r = runSluice({"run", m_project, "--json", "--out", out, "--replicas", "2"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto events = jsonLines(r.out);
        QVERIFY(events.size() >= 4);
        for (const auto &e : events) {
            // Every line is an event core's codec reads back as it was written.
            const auto decoded = events::fromJson(e);
            QVERIFY2(decoded.ok(), decoded.ok() ? "" : decoded.error().message().c_str());
            QCOMPARE(events::toJson(*decoded).dump(), e.dump());
        }
        QCOMPARE(events.front()["event"].get<std::string>(), std::string("run_start"));
        QCOMPARE(events.front()["replicas"].get<int>(), 2);
        QCOMPARE(events.back()["event"].get<std::string>(), std::string("run_end"));
        QCOMPARE(events.back()["status"].get<std::string>(), std::string("ok"));
        int epochs = 0, steps = 0;
        for (const auto &e : events) {
            if (e["event"] == "epoch_end") {
                ++epochs;
                QVERIFY(e.contains("loss") && e.contains("mae") && e.contains("samples_per_s"));
            }
            if (e["event"] == "step") {
                ++steps;
                for (const char *key : {"step", "epoch", "loss", "samples_per_s"})
                    QVERIFY2(e.contains(key), key);
            }
        }
        QCOMPARE(epochs, 2);
        QVERIFY(steps >= 1);

        for (const char *file : {"events.jsonl", "metrics.csv", "weights.npz", "project.sluice"})
            QVERIFY2(QFile::exists(out + "/" + file), file);
        QVERIFY(!QDir(out + "/checkpoints").entryList({"ckpt-*.npz"}).isEmpty());
        const auto csv = QString::fromStdString(readFile((out + "/metrics.csv").toStdString())).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(csv.size(), 3);
        QVERIFY2(csv[0].startsWith("epoch,step,loss"), qPrintable(csv[0]));
        QCOMPARE(jsonLines(QString::fromStdString(readFile((out + "/events.jsonl").toStdString()))).size(), events.size());
        const auto weights = readWeights((out + "/weights.npz").toStdString());
        QVERIFY(weights.count("d1/kernel") && weights.count("d1/bias") && weights.count("d2/kernel"));
        QCOMPARE(weights.at("d1/kernel").size(), std::size_t(6 * 16));
    }

    void setOverridesTheProject()
    {
        const QString out = dir() + "/set";
        auto r = runSluice({"run", m_project, "--json", "--out", out, "--set", "training.epochs=1", "--set", "nodes.batch.batch_size=60", "--set",
                            "training.optimizer.learning_rate=0.002"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto events = jsonLines(r.out);
        QCOMPARE(events.back()["step"].get<int>(), 2); // 120 rows in batches of 60, one epoch
        const auto asRun = nlohmann::json::parse(readFile((out + "/project.sluice").toStdString()));
        QCOMPARE(asRun["training"]["epochs"].get<int>(), 1);
        QCOMPARE(asRun["training"]["optimizer"]["learning_rate"].get<double>(), 0.002);
    }

    void badInputExitsWith2_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        QTest::newRow("--set without =") << QStringList{"--set", "training.epochs"} << "expected key=value";
        QTest::newRow("--set unknown node") << QStringList{"--set", "nodes.nope.batch_size=3"} << "no pipeline node 'nope'";
        QTest::newRow("bad setting value") << QStringList{"--set", "training.epochs=-1"} << "training.epochs";
        QTest::newRow("--resume without --out") << QStringList{"--resume"} << "--resume";
        QTest::newRow("unknown device") << QStringList{"--device", "tpu"} << "unknown device 'tpu'";
        QTest::newRow("bad GPU list") << QStringList{"--device", "cuda:0,x"} << "unknown device 'cuda:x'";
        QTest::newRow("replicas with GPUs") << QStringList{"--device", "cuda:0,1", "--replicas", "3"} << "--replicas: 3 replicas on 2 devices";
        // Never silently replaced: the project's replicas and devices must agree.
        QTest::newRow("replicas with devices in the project")
            << QStringList{"--set", "training.devices=[\"cpu:0\",\"cpu:1\"]", "--set", "training.replicas=3"} << "training.replicas: 3 replicas on 2 devices";
        QTest::newRow("resident budget on training") << QStringList{"--resident-budget", "1G"} << "--resident-budget: applies to pipeline runs";
        QTest::newRow("precision") << QStringList{"--precision", "fp8"} << "--precision";
        QTest::newRow("bf16 on the CPU") << QStringList{"--precision", "bf16"} << "bf16 needs a GPU";
        QTest::newRow("tf32 on the CPU, said in the project") << QStringList{"--set", "training.precision=tf32"} << "tf32 needs a GPU";
        QTest::newRow("zero replicas") << QStringList{"--replicas", "0"} << "replicas";
        QTest::newRow("pipeline option on training") << QStringList{"--seconds", "1"} << "--seconds: applies to pipeline runs";
        QTest::newRow("training option on --profile") << QStringList{"--profile", "--replicas", "2"} << "--replicas: applies to training";
        QTest::newRow("bad model") << QStringList{"--set", "model.layers=[{\"class_name\":\"Dense\",\"name\":\"d1\",\"units\":5}]"} << "output 'y'";
    }
    void badInputExitsWith2()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        auto r = runSluice(QStringList{"run", m_project} + args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(expected), qPrintable(r.err));
        QVERIFY2(r.err.startsWith("sluice: "), qPrintable(r.err));
    }

    // Checkpoints that cannot be written stop the run before its first step (exit 2, the folder
    // named), not at the end of the first epoch.
    void unwritableCheckpointsAreRefusedUpFront()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath("not-a-folder");
        writeFile(file.toStdString(), "a file");
        auto r = runSluice({"run", m_project, "--out", file + "/run", "--json"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("not-a-folder/run") && r.err.contains("cannot"), qPrintable(r.err));
        for (const auto &e : jsonLines(r.out))
            QVERIFY(e["event"] != "step");
    }

    // --device cuda on a machine without a GPU: one note on stderr saying why, then training on
    // the CPU (exit 0); --json carries the note as a "notice" event and run_start's device.
    void gpuRequestWithoutAGpuSaysSoAndTrains()
    {
        if (!queryGpuDevices().devices.empty())
            QSKIP("this machine has a GPU: the fallback is for machines without one");
        auto terminal = runSluice({"run", m_project, "--device", "cuda", "--epochs", "1"});
        QVERIFY2(terminal.exitCode == 0, qPrintable(terminal.err));
        QCOMPARE(terminal.err.count("sluice: note: "), 1);
        QVERIFY2(terminal.err.contains("CPU"), qPrintable(terminal.err));
        auto json = runSluice({"run", m_project, "--device", "cuda:0", "--replicas", "2", "--precision", "bf16", "--epochs", "1", "--json"});
        QVERIFY2(json.exitCode == 0, qPrintable(json.err));
        const auto events = jsonLines(json.out);
        int notices = 0;
        for (const auto &e : events) {
            if (e["event"] == "notice")
                ++notices;
            if (e["event"] == "run_start") {
                QCOMPARE(e["device"].get<std::string>(), std::string("cpu"));
                QCOMPARE(e["replicas"].get<int>(), 2); // the logical replicas asked for, as CPU replicas
            }
        }
        QCOMPARE(notices, 1);
        QCOMPARE(events.back()["status"].get<std::string>(), std::string("ok"));
    }

    // --profile on a training project iterates its input pipeline alone: stats and the
    // bottleneck, no training step.
    // bench train --run on the user's files in the larger-than-RAM mode: the files dropped from the
    // page cache, the pipeline timed alone, then one epoch of training, and their ratio.
    void benchTrainRunsColdOnTheUsersData()
    {
        QTemporaryDir dir;
        QCOMPARE(runSluice({"gen", "regression", "--out", dir.path(), "--rows", "4000", "--feature", "x:8", "--target", "y:1"}).exitCode, 0);
        const auto r = runSluice({"bench", "train", "--run", "--cold", "--data", dir.path(), "--widths", "8,16,1", "--loss", "mse",
                                  "--batch", "50", "--steps", "40", "--threads", "2", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto j = jsonLines(r.out).at(0);
        QCOMPARE(j["mode"].get<std::string>(), std::string("run"));
        QCOMPARE(j["cold"].get<bool>(), true);
        QCOMPARE(j["steps"].get<int>(), 40);
        QCOMPARE(j["epoch_rows"].get<int>(), 2000);
        QCOMPARE(j["data"].get<std::string>(), QFileInfo(dir.path()).absoluteFilePath().toStdString());
        QVERIFY(j["samples_per_s"].get<double>() > 0);
        QVERIFY(j["pipeline_samples_per_s"].get<double>() > 0);
        QCOMPARE(j["of_pipeline"].get<double>(), j["samples_per_s"].get<double>() / j["pipeline_samples_per_s"].get<double>());
        QVERIFY(std::isfinite(j["last_loss"].get<double>()));

        // Files that do not fit the MLP, or hold less than an epoch, are refused before anything runs.
        const auto narrow = runSluice({"bench", "train", "--run", "--data", dir.path(), "--widths", "4,1", "--loss", "mse"});
        QCOMPARE(narrow.exitCode, 2);
        QVERIFY2(narrow.err.contains("x.npy has shape (4000, 8), the MLP's input width is 4"), qPrintable(narrow.err));
        const auto few = runSluice({"bench", "train", "--run", "--data", dir.path(), "--widths", "8,1", "--loss", "mse", "--batch", "100",
                                    "--steps", "41"});
        QCOMPARE(few.exitCode, 2);
        QVERIFY2(few.err.contains("fewer than --batch x --steps (4100)"), qPrintable(few.err));
        const auto noRun = runSluice({"bench", "train", "--cold"});
        QCOMPARE(noRun.exitCode, 2);
        QVERIFY2(noRun.err.contains("--cold: only applies with --run"), qPrintable(noRun.err));
        const auto noFolder = runSluice({"bench", "train", "--run", "--data", dir.filePath("x.npy")});
        QCOMPARE(noFolder.exitCode, 2);
        QVERIFY2(noFolder.err.contains("is not a folder"), qPrintable(noFolder.err));
    }

    void profileRunsTheInputPipelineAlone()
    {
        auto r = runSluice({"run", m_project, "--profile", "--epochs", "2", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto events = jsonLines(r.out);
        QCOMPARE(events.back()["event"].get<std::string>(), std::string("run_end"));
        QCOMPARE(events.back()["status"].get<std::string>(), std::string("ok"));
        QCOMPARE(events.back()["passes"].get<int>(), 2);
        for (const auto &e : events)
            QVERIFY2(e["event"] != "step" && e["event"] != "epoch_end", e.dump().c_str());
    }

    void outFolderOfAnEarlierRunIsKept()
    {
        const QString out = dir() + "/kept";
        auto first = runSluice({"run", m_project, "--out", out, "--epochs", "1"});
        QVERIFY2(first.exitCode == 0, qPrintable(first.err));
        const std::string events = readFile((out + "/events.jsonl").toStdString());
        auto again = runSluice({"run", m_project, "--out", out});
        QCOMPARE(again.exitCode, 2);
        QVERIFY2(again.err.contains("holds an earlier run"), qPrintable(again.err));
        QCOMPARE(readFile((out + "/events.jsonl").toStdString()), events);
    }

    void failedRunExitsWith1()
    {
        auto r = runSluice({"run", m_project, "--set", "training.optimizer={\"type\":\"sgd\",\"learning_rate\":1e9}"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("NaN or infinite at step"), qPrintable(r.err));
    }

    // kill -9 in the middle of a run, then --resume: the same weights as a run never killed.
    void killedRunResumesToTheSameWeights()
    {
        const QString project = writeProject("long.sluice", trainingProject(mlpModel(),
                                                                            {{"epochs", 60},
                                                                             {"seed", 4},
                                                                             {"optimizer", {{"type", "adam"}, {"learning_rate", 0.003}}},
                                                                             {"checkpoint", {{"every_steps", 7}, {"keep", 2}}}},
                                                                            16, {{{"id", "shuffle"}, {"op", "global_shuffle"}, {"params", {{"seed", 2}}}}}));
        const QString whole = dir() + "/whole", killed = dir() + "/killed";
        auto reference = runSluice({"run", project, "--out", whole});
        QVERIFY2(reference.exitCode == 0, qPrintable(reference.err));

        std::unique_ptr<QProcess> p(startSluice({"run", project, "--out", killed}));
        QVERIFY(p->waitForStarted());
        // Wait for a few checkpoints, then kill without warning.
        QDir checkpoints(killed + "/checkpoints");
        for (int i = 0; i < 600 && checkpoints.entryList({"ckpt-*.npz"}).size() < 2 && p->state() == QProcess::Running; ++i)
            QThread::msleep(10);
        QVERIFY2(p->state() == QProcess::Running, "the run ended before it could be killed");
        ::kill(pid_t(p->processId()), SIGKILL);
        p->waitForFinished();
        QVERIFY(!QFile::exists(killed + "/weights.npz"));

        auto resumed = runSluice({"run", project, "--out", killed, "--resume"});
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err));
        QVERIFY2(resumed.out.contains("Resumed from"), qPrintable(resumed.out));
        const auto a = readWeights((whole + "/weights.npz").toStdString()), b = readWeights((killed + "/weights.npz").toStdString());
        QCOMPARE(weightsDifference(a, b), 0.0);
        const auto csv = QString::fromStdString(readFile((killed + "/metrics.csv").toStdString())).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(csv.size(), 61); // header and every epoch once
    }

    // The example projects users open first stay valid and train (one epoch on small copies of
    // their data, made by the same script that makes the real data).
    void exampleProjectsTrain()
    {
        const QString root = dir() + "/examples";
        const auto failed = writeExampleCopy(root, {"regression", "imbalanced", "sensors", "images", "recommender"},
                                             {"regression", "imbalanced-classifier", "sensor-autoencoder", "image-classifier", "recommender"},
                                             {{"SLUICE_EXAMPLE_ROWS", "1500"}});
        QVERIFY2(!failed, failed ? failed->c_str() : "");
        for (const char *name : {"regression", "imbalanced-classifier", "sensor-autoencoder", "image-classifier", "recommender"}) {
            const QString project = root + "/" + name + ".sluice";
            auto r = runSluice({"run", project, "--epochs", "1", "--json"});
            QVERIFY2(r.exitCode == 0, qPrintable(QString(name) + ": " + r.err));
            const auto events = jsonLines(r.out);
            QCOMPARE(events.back()["status"].get<std::string>(), std::string("ok"));
            bool sawEpoch = false;
            for (const auto &e : events)
                if (e["event"] == "epoch_end") {
                    sawEpoch = true;
                    QVERIFY2(std::isfinite(e["loss"].get<double>()) && e.contains("val_loss"), name);
                }
            QVERIFY2(sawEpoch, name);
        }
    }

    // Ctrl-C, and SIGTERM as a job scheduler sends it: a checkpoint, the weights, a cancelled end.
    void interruptSavesACheckpoint_data()
    {
        QTest::addColumn<int>("signal");
        QTest::newRow("SIGINT") << int(SIGINT);
        QTest::newRow("SIGTERM") << int(SIGTERM);
    }
    void interruptSavesACheckpoint()
    {
        QFETCH(int, signal);
        const QString project = writeProject("interrupt.sluice", trainingProject(mlpModel(), {{"epochs", 100000}}, 16));
        const QString out = dir() + "/interrupted-" + QString::number(signal);
        std::unique_ptr<QProcess> p(startSluice({"run", project, "--out", out, "--json"}));
        QVERIFY(p->waitForStarted());
        for (int i = 0; i < 600 && !p->readAllStandardOutput().contains("\"step\""); ++i)
            QThread::msleep(10);
        ::kill(pid_t(p->processId()), signal);
        QVERIFY(p->waitForFinished(20000));
        QCOMPARE(p->exitCode(), 1);
        QVERIFY2(p->readAllStandardError().contains("cancelled"), "no cancelled message");
        QVERIFY(!QDir(out + "/checkpoints").entryList({"ckpt-*.npz"}).isEmpty());
        QVERIFY(QFile::exists(out + "/weights.npz"));
        const auto events = jsonLines(QString::fromStdString(readFile((out + "/events.jsonl").toStdString())));
        QCOMPARE(events.back()["status"].get<std::string>(), std::string("cancelled"));
    }

    // Two processes under mpirun: the same weights as one process on the same global batches,
    // for the dense model and for convolutions and pooling over sequences.
    void mpiProcessesMatchOneProcess_data()
    {
        QTest::addColumn<QString>("model");
        QTest::newRow("dense") << "dense";
        QTest::newRow("conv1d") << "conv1d";
        QTest::newRow("synchronized batch normalization") << "syncbn";
        QTest::newRow("embedding") << "embedding";               // its gradient's used rows all-gathered over MPI
        QTest::newRow("embedding, sparse updates") << "lazyembedding"; // and only those rows updated
    }
    void mpiProcessesMatchOneProcess()
    {
        QFETCH(QString, model);
        const QString mpirun = QStandardPaths::findExecutable("mpirun");
        if (mpirun.isEmpty())
            QSKIP("mpirun is not installed");
        const nlohmann::json convModel = nlohmann::json::parse(R"({
          "inputs": [{"name": "seq", "feature": "seq"}],
          "layers": [{"class_name": "Conv1D", "name": "c1", "filters": 6, "kernel_size": 3, "padding": "same", "activation": "relu"},
                     {"class_name": "MaxPooling1D", "name": "p1", "pool_size": 2, "padding": "same"},
                     {"class_name": "Conv1D", "name": "c2", "filters": 4, "kernel_size": 2, "activation": "tanh"},
                     {"class_name": "GlobalAveragePooling1D", "name": "gap"},
                     {"class_name": "Dense", "name": "out", "units": 2}],
          "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse"}]})");
        nlohmann::json syncModel = convModel;
        syncModel["layers"].insert(syncModel["layers"].begin() + 1,
                                   nlohmann::json{{"class_name", "BatchNormalization"}, {"name", "bn"}, {"momentum", 0.5}, {"synchronized", true}});
        const nlohmann::json embeddingModel = nlohmann::json::parse(R"({
          "inputs": [{"name": "label", "feature": "label"}, {"name": "x", "feature": "x"}],
          "layers": [{"class_name": "Embedding", "name": "emb", "inputs": ["label"], "input_dim": 5, "output_dim": 4},
                     {"class_name": "Concatenate", "name": "cat", "inputs": ["emb", "x"]},
                     {"class_name": "Dense", "name": "out", "units": 2}],
          "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse"}]})");
        nlohmann::json lazyModel = embeddingModel;
        lazyModel["layers"][0]["sparse_updates"] = true;
        const nlohmann::json chosen = model == "dense"           ? multiInputModel(0.2)
                                      : model == "conv1d"        ? convModel
                                      : model == "syncbn"        ? syncModel
                                      : model == "embedding"     ? embeddingModel
                                                                 : lazyModel;
        const QString project = writeProject("mpi-" + model + ".sluice", trainingProject(chosen,
                                                                           {{"epochs", 2}, {"seed", 9}, {"optimizer", {{"type", "sgd"}, {"learning_rate", 0.05}, {"momentum", 0.9}}}},
                                                                           20, {{{"id", "shuffle"}, {"op", "global_shuffle"}, {"params", {{"seed", 1}}}}}));
        const QString oneOut = dir() + "/mpi-one-" + model, twoOut = dir() + "/mpi-two-" + model;
        auto one = runSluice({"run", project, "--out", oneOut});
        QVERIFY2(one.exitCode == 0, qPrintable(one.err));
        QProcess p;
        p.setProcessEnvironment(mpiEnvironment());
        p.start(mpirun, mpiArguments() + QStringList{QString::fromUtf8(SLUICE_BINARY_PATH), "run", project, "--out", twoOut, "--json"});
        QVERIFY(p.waitForFinished(120000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitCode() == 0, qPrintable(err));
        const auto events = jsonLines(QString::fromUtf8(p.readAllStandardOutput()));
        QVERIFY(!events.empty());
        QCOMPARE(events.front()["processes"].get<int>(), 2); // only rank 0 prints
        QCOMPARE(events.front()["sharding"].get<std::string>(), std::string("data"));
        const double diff = weightsDifference(readWeights((oneOut + "/weights.npz").toStdString()), readWeights((twoOut + "/weights.npz").toStdString()));
        QVERIFY2(diff < 1e-5, qPrintable(QString("relative difference %1").arg(diff)));
    }

    // A failure on one rank (its CSV file is broken) ends every rank with the error.
    void mpiFailureOnOneRankEndsAll()
    {
        const QString mpirun = QStandardPaths::findExecutable("mpirun");
        if (mpirun.isEmpty())
            QSKIP("mpirun is not installed");
        std::string good = "a,b,t\n", bad = "a,b,t\n";
        for (int i = 0; i < 400; ++i) {
            good += std::to_string(i % 7) + "," + std::to_string(i % 5) + "," + std::to_string(i % 3) + "\n";
            bad += i == 300 ? std::string("1,oops,2\n") : std::to_string(i % 7) + "," + std::to_string(i % 5) + "," + std::to_string(i % 3) + "\n";
        }
        writeFile((dir() + "/part-0.csv").toStdString(), good);
        writeFile((dir() + "/part-1.csv").toStdString(), bad);
        nlohmann::json doc = nlohmann::json::parse(R"({"format": "sluice-project", "version": 1, "name": "csv",
          "pipeline": {"nodes": [
             {"id": "src", "op": "from_csv", "params": {"filenames": ["part-0.csv", "part-1.csv"],
                "columns": {"a": "float32", "b": "float32", "t": "float32"}}},
             {"id": "ra", "op": "map", "params": {"function": "reshape", "features": "a", "shape": [1]}},
             {"id": "rb", "op": "map", "params": {"function": "reshape", "features": "b", "shape": [1]}},
             {"id": "stack", "op": "map", "params": {"function": "concat", "features": ["a", "b"], "name": "x"}},
             {"id": "batch", "op": "batch", "params": {"batch_size": 20}}],
           "edges": [["src", "ra"], ["ra", "rb"], ["rb", "stack"], ["stack", "batch"]]},
          "model": {"inputs": [{"name": "x"}], "layers": [{"class_name": "Dense", "name": "d", "units": 1}],
                    "outputs": [{"layer": "d", "target": "t", "loss": "mse"}]},
          "training": {"epochs": 50}})");
        const QString project = writeProject("csv.sluice", doc);
        auto single = runSluice({"run", project, "--epochs", "1"});
        QVERIFY2(single.exitCode == 1 && single.err.contains("part-1.csv"), qPrintable(single.err));
        QProcess p;
        p.setProcessEnvironment(mpiEnvironment());
        p.start(mpirun, mpiArguments() + QStringList{QString::fromUtf8(SLUICE_BINARY_PATH), "run", project});
        QVERIFY(p.waitForFinished(120000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitCode() != 0, qPrintable(err));
        QVERIFY2(err.contains("rank 1") && err.contains("part-1.csv"), qPrintable(err));
    }

    // Ctrl-C on one rank stops every rank cleanly, with a checkpoint; --resume under mpirun
    // continues from it to the end.
    void mpiInterruptOnOneRankThenResume()
    {
        const QString mpirun = QStandardPaths::findExecutable("mpirun");
        if (mpirun.isEmpty())
            QSKIP("mpirun is not installed");
        const QString project = writeProject("mpi-stop.sluice", trainingProject(mlpModel(), {{"epochs", 3}, {"seed", 5}}, 20));
        const QString out = dir() + "/mpi-stop";
        QProcess p;
        p.setProcessEnvironment(mpiEnvironment());
        p.start(mpirun, mpiArguments() + QStringList{QString::fromUtf8(SLUICE_BINARY_PATH), "run", project, "--out", out, "--json", "--epochs", "100000"});
        QVERIFY(p.waitForStarted());
        QByteArray seen;
        for (int i = 0; i < 3000 && !seen.contains("\"step\""); ++i) {
            p.waitForReadyRead(10);
            seen += p.readAllStandardOutput();
        }
        QVERIFY2(seen.contains("\"step\""), "no step under mpirun");
        // The ranks are mpirun's children on one machine: interrupt the last one only.
        QProcess children;
        children.start("pgrep", {"-P", QString::number(p.processId())});
        QVERIFY(children.waitForFinished(10000));
        const QStringList pids = QString::fromUtf8(children.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
        QVERIFY2(pids.size() >= 2, qPrintable(QString("ranks found: %1").arg(pids.join(' '))));
        QCOMPARE(::kill(pid_t(pids.last().toLongLong()), SIGINT), 0);
        QVERIFY(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitCode() == 1, qPrintable(err));
        QVERIFY(!QDir(out + "/checkpoints").entryList({"ckpt-*.npz"}).isEmpty());
        const auto stopped = jsonLines(QString::fromStdString(readFile((out + "/events.jsonl").toStdString())));
        QCOMPARE(stopped.back()["status"].get<std::string>(), std::string("cancelled"));

        QProcess resumed;
        resumed.setProcessEnvironment(mpiEnvironment());
        resumed.start(mpirun, mpiArguments() + QStringList{QString::fromUtf8(SLUICE_BINARY_PATH), "run", project, "--out", out, "--resume", "--json"});
        QVERIFY(resumed.waitForFinished(120000));
        QVERIFY2(resumed.exitCode() == 0, qPrintable(QString::fromUtf8(resumed.readAllStandardError())));
        const auto events = jsonLines(QString::fromUtf8(resumed.readAllStandardOutput()));
        bool sawResumed = false;
        for (const auto &e : events)
            sawResumed = sawResumed || e["event"] == "resumed";
        QVERIFY(sawResumed);
        QCOMPARE(events.back()["status"].get<std::string>(), std::string("ok"));
    }

private:
    static QProcessEnvironment mpiEnvironment()
    {
        auto env = QProcessEnvironment::systemEnvironment();
        // Test machines and containers often run as root; Open MPI refuses that unless told.
        env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
        env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        // MPI's own allocations are not ours to report under the sanitizer build.
        env.insert("ASAN_OPTIONS", "detect_leaks=0");
        return env;
    }
    static QStringList mpiArguments()
    {
        // One machine, more ranks than cores is fine; shared memory without the kernel's
        // cross-memory attach, which containers often forbid.
        return {"-np", "2", "--oversubscribe", "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"};
    }
};

QTEST_GUILESS_MAIN(TestCliTrain)
#include "tst_cli_train.moc"
