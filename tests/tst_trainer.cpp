// The training engine end to end on the CPU backend: mirrored replicas give the weights of one
// replica on the global batch, a resumed run equals an uninterrupted one, gradients of whole
// models (fan-out, several inputs and outputs, sample and class weights) match finite
// differences, guards stop bad runs with messages that name what went wrong.
#include "pipeline/engine/pipeline.h"
#include "support/gradient_check.h"
#include "support/pipeline_test_support.h"
#include "support/train_test_support.h"
#include "train/loop/batch_slicer.h"
#include "train/loop/checkpoint.h"
#include "train/model/model.h"
#include "train/loop/replica.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>

using namespace sluice;
using namespace sluice::test;

class TestTrainer : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string dir() const { return m_dir.path().toStdString(); }

    static nlohmann::json sgd(double lr = 0.05) { return {{"type", "sgd"}, {"learning_rate", lr}, {"momentum", 0.9}}; }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        writeTrainingData(dir(), 100); // 100 rows: batches of 32 leave an uneven last batch of 4
    }

    // tf.distribute's contract: N replicas on a global batch = one replica on that batch.
    void replicasGiveTheWeightsOfOneReplica_data()
    {
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<double>("dropout");
        QTest::newRow("sgd, momentum") << "sgd" << 0.0;
        QTest::newRow("adam, dropout") << "adam" << 0.3;
    }
    void replicasGiveTheWeightsOfOneReplica()
    {
        QFETCH(QString, optimizer);
        QFETCH(double, dropout);
        const nlohmann::json opt = optimizer == "sgd" ? sgd() : nlohmann::json{{"type", "adam"}, {"learning_rate", 0.01}};
        std::vector<float> reference;
        for (int replicas : {1, 2, 3, 4}) {
            const auto doc = trainingProject(multiInputModel(dropout), {{"epochs", 2}, {"seed", 7}, {"optimizer", opt}, {"replicas", replicas}}, 32,
                                             {{{"id", "shuffle"}, {"op", "global_shuffle"}, {"params", {{"seed", 3}}}}});
            auto run = runTraining(doc, dir());
            QVERIFY2(run.error.empty(), run.error.c_str());
            QCOMPARE(run.outcome.steps, std::int64_t(8)); // 4 batches (the last one of 4 rows) x 2 epochs
            if (replicas == 1) {
                reference = run.weights;
                continue;
            }
            const double diff = maxRelativeDifference(run.weights, reference);
            QVERIFY2(diff < 1e-5, qPrintable(QString("%1 replicas: relative difference %2").arg(replicas).arg(diff)));
        }
    }

    // BatchNormalization with synchronized: true normalises over the global batch, so any number
    // of replicas trains as one (moving statistics included); without it each replica normalises
    // its own rows (Keras's default under MirroredStrategy) and the weights differ.
    void synchronizedBatchNormalizationTrainsAsOneReplica()
    {
        const auto model = [](bool synchronized) {
            return nlohmann::json{{"inputs", {{{"name", "x"}, {"feature", "x"}}}},
                                  {"layers",
                                   // No bias before the normalisation, as Keras users write it: its
                                   // gradient is zero up to rounding, which Adam would magnify.
                                   {{{"class_name", "Dense"}, {"name", "d1"}, {"units", 8}, {"use_bias", false}},
                                    {{"class_name", "BatchNormalization"}, {"name", "bn"}, {"momentum", 0.8}, {"synchronized", synchronized}},
                                    {{"class_name", "Activation"}, {"name", "relu"}, {"activation", "relu"}},
                                    {{"class_name", "Dense"}, {"name", "out"}, {"units", 2}}}},
                                  {"outputs", {{{"name", "y"}, {"layer", "out"}, {"target", "y"}, {"loss", "mse"}}}}};
        };
        const auto train = [&](bool synchronized, int replicas) {
            const auto doc = trainingProject(model(synchronized),
                                             {{"epochs", 2}, {"seed", 5}, {"optimizer", {{"type", "adam"}, {"learning_rate", 0.01}}}, {"replicas", replicas}},
                                             32, {{{"id", "shuffle"}, {"op", "global_shuffle"}, {"params", {{"seed", 3}}}}});
            auto run = runTraining(doc, dir());
            if (!run.error.empty())
                qFatal("%s", run.error.c_str());
            return run.weights;
        };
        const std::vector<float> one = train(true, 1);
        for (int replicas : {2, 3, 4}) {
            const double diff = maxRelativeDifference(train(true, replicas), one);
            QVERIFY2(diff < 1e-5, qPrintable(QString("%1 synchronized replicas: relative difference %2").arg(replicas).arg(diff)));
        }
        // The same model unsynchronized: one replica gives the same as synchronized, two do not.
        QVERIFY(maxRelativeDifference(train(false, 1), one) < 1e-6);
        const double apart = maxRelativeDifference(train(false, 2), one);
        QVERIFY2(apart > 1e-4, qPrintable(QString("per-replica statistics should differ: %1").arg(apart)));
    }

    void lossDecreasesOnTheRegression()
    {
        const auto doc = trainingProject(mlpModel(), {{"epochs", 6}, {"seed", 1}, {"optimizer", {{"type", "adam"}, {"learning_rate", 0.02}}}}, 20);
        auto run = runTraining(doc, dir());
        QVERIFY2(run.error.empty(), run.error.c_str());
        const auto epochs = run.eventsOf("epoch_end");
        QCOMPARE(epochs.size(), std::size_t(6));
        const double first = epochs.front()["loss"], last = epochs.back()["loss"];
        QVERIFY2(last < 0.6 * first, qPrintable(QString("loss %1 -> %2").arg(first).arg(last)));
        QVERIFY(epochs.back().contains("mae"));
        QCOMPARE(run.eventsOf("run_end").back()["status"].get<std::string>(), std::string("ok"));
    }

    // Gradients of a whole model (two inputs, fan-out to two outputs, layer norm, sample and
    // class weights folded into the loss) against central differences of its loss.
    void modelGradientsMatchFiniteDifferences_data()
    {
        QTest::addColumn<int>("kind");
        QTest::newRow("two-output regression, sample weights") << 0;
        QTest::newRow("classifier, class weights") << 1;
        QTest::newRow("one layer's output used three times") << 2;
    }
    void modelGradientsMatchFiniteDifferences()
    {
        QFETCH(int, kind);
        const bool classifier = kind == 1;
        const nlohmann::json reused = nlohmann::json::parse(R"({
              "inputs": [{"name": "x", "feature": "x"}],
              "layers": [{"class_name": "Dense", "name": "d", "units": 4, "activation": "tanh"},
                         {"class_name": "Concatenate", "name": "cat", "inputs": ["d", "d", "x", "d"]},
                         {"class_name": "Dense", "name": "y_head", "units": 2}],
              "outputs": [{"name": "y", "layer": "y_head", "target": "y", "loss": "mse"}]})");
        const nlohmann::json model = kind == 2 ? reused : classifier ? nlohmann::json::parse(R"({
              "inputs": [{"name": "x", "feature": "x"}],
              "layers": [{"class_name": "Dense", "name": "d1", "units": 8, "activation": "tanh"},
                         {"class_name": "Dense", "name": "logits", "units": 3}],
              "outputs": [{"name": "label", "layer": "logits", "target": "label", "loss": "sparse_categorical_crossentropy",
                           "from_logits": true, "metrics": ["accuracy"]}]})")
                                                : multiInputModel(0.0);
        auto project = Project::fromJson(trainingProject(model, {{"epochs", 1}}, 16), dir());
        QVERIFY(project.ok());
        auto pipe = pipeline::Pipeline::build(*project);
        QVERIFY(pipe.ok());
        auto built = train::Model::build(project->model, (*pipe)->elementSpec());
        QVERIFY2(built.ok(), built.ok() ? "" : built.error().message().c_str());
        const train::Model &m = **built;
        auto batch = (*pipe)->next();
        QVERIFY(batch.ok() && *batch);

        train::SampleWeighting weighting;
        if (classifier)
            weighting.classWeights = {{0, 0.5f}, {1, 4.0f}, {2, 2.0f}};
        else
            weighting.sampleWeightFeature = (*pipe)->elementSpec().find("w");
        train::BatchSlice slice;
        train::sliceBatch(m, **batch, weighting, 0, 16, slice);
        auto initial = m.initialWeights(11);
        QVERIFY(initial.ok());
        std::vector<float> weights = *initial;
        train::Replica replica(m);
        train::PassContext ctx;
        const float scale = 1.0f / 16.0f;
        auto lossOf = [&] {
            const auto r = replica.run(ctx, weights, slice, scale, false, false);
            double total = 0;
            for (std::size_t o = 0; o < r.outputLossSums.size(); ++o)
                total += double(m.outputs()[o].lossWeight) * r.outputLossSums[o] * double(scale);
            return total;
        };
        replica.run(ctx, weights, slice, scale, true, false);
        const std::vector<float> analytic = replica.gradients();
        for (const auto &p : m.parameters()) {
            auto check = checkGradient(std::span<float>(weights).subspan(p.offset, p.count), std::span<const float>(analytic).subspan(p.offset, p.count),
                                       lossOf, 1e-2f, 24);
            QVERIFY2(check.maxRelativeError < 2e-2, qPrintable(QString::fromStdString(p.name) + ": " + check.text()));
        }
    }

    // Killed mid-epoch (here: cancelled after step 5, as Ctrl-C does), resumed from the
    // checkpoint, the run ends with exactly the weights of one that was never interrupted —
    // shuffled orders, optimizer state and dropout masks included.
    void resumedRunEqualsUninterrupted()
    {
        const auto doc = trainingProject(multiInputModel(0.2),
                                         {{"epochs", 3},
                                          {"seed", 5},
                                          {"optimizer", {{"type", "adam"}, {"learning_rate", 0.01}}},
                                          {"replicas", 2},
                                          {"validation", {{"split", 0.25}}}, // the last batch of each epoch
                                          {"checkpoint", {{"every_steps", 2}, {"keep", 2}}}},
                                         32,
                                         {{{"id", "shuffle"}, {"op", "shuffle"}, {"params", {{"buffer_size", 40}}}}});
        train::TrainerOptions whole;
        whole.checkpointDir = dir() + "/whole";
        auto uninterrupted = runTraining(doc, dir(), whole);
        QVERIFY2(uninterrupted.error.empty(), uninterrupted.error.c_str());

        QCOMPARE(uninterrupted.outcome.steps, std::int64_t(9)); // 3 of 4 batches trained, 3 epochs
        for (int stopAt : {5, 3}) { // mid-epoch, and after an epoch's last step (before its held-out batch)
            train::TrainerOptions first;
            first.checkpointDir = dir() + "/interrupted" + std::to_string(stopAt);
            auto stopped = runTraining(doc, dir(), first, [stopAt](train::Trainer &t, const nlohmann::json &e) {
                if (e.value("event", "") == "step" && e.value("step", 0) == stopAt)
                    t.requestCancel();
            });
            QCOMPARE(int(stopped.outcome.status), int(train::RunStatus::Cancelled));
            QCOMPARE(stopped.outcome.steps, std::int64_t(stopAt));
            train::TrainerOptions again = first;
            again.resume = true;
            auto resumed = runTraining(doc, dir(), again);
            QVERIFY2(resumed.error.empty(), resumed.error.c_str());
            QCOMPARE(resumed.eventsOf("resumed").size(), std::size_t(1));
            QCOMPARE(resumed.outcome.steps, uninterrupted.outcome.steps);
            QVERIFY2(resumed.weights == uninterrupted.weights,
                     qPrintable(QString("stopped at %1: difference %2").arg(stopAt).arg(maxRelativeDifference(resumed.weights, uninterrupted.weights))));
            // The epochs the resumed run finishes report what the uninterrupted run reported,
            // the epoch that was cut in two included (its running totals and metric states).
            const auto expected = uninterrupted.eventsOf("epoch_end");
            for (auto e : resumed.eventsOf("epoch_end")) {
                auto want = expected.at(std::size_t(e["epoch"].get<int>() - 1));
                for (auto *j : {&e, &want})
                    for (const char *timing : {"seconds", "samples_per_s"})
                        j->erase(timing);
                QVERIFY2(e == want, qPrintable(QString::fromStdString(e.dump() + "\n" + want.dump())));
            }
        }
    }

    // A run that ended at an epoch's end (as one killed just after its epoch checkpoint), resumed
    // for more epochs, continues exactly as a run that went on.
    void resumeFromAnEpochCheckpoint()
    {
        auto doc = trainingProject(multiInputModel(0.2),
                                   {{"epochs", 3}, {"seed", 8}, {"optimizer", "adam"}, {"validation", {{"split", 0.25}}}}, 32,
                                   {{{"id", "shuffle"}, {"op", "global_shuffle"}, {"params", {{"seed", 4}}}}});
        auto uninterrupted = runTraining(doc, dir());
        QVERIFY2(uninterrupted.error.empty(), uninterrupted.error.c_str());
        train::TrainerOptions options;
        options.checkpointDir = dir() + "/epoch-checkpoint";
        doc["training"]["epochs"] = 1;
        auto first = runTraining(doc, dir(), options);
        QVERIFY2(first.error.empty(), first.error.c_str());
        doc["training"]["epochs"] = 3;
        options.resume = true;
        auto resumed = runTraining(doc, dir(), options);
        QVERIFY2(resumed.error.empty(), resumed.error.c_str());
        QVERIFY(resumed.weights == uninterrupted.weights);
        const auto ends = resumed.eventsOf("epoch_end");
        QCOMPARE(ends.size(), std::size_t(2));
        for (auto e : ends) {
            auto want = uninterrupted.eventsOf("epoch_end").at(std::size_t(e["epoch"].get<int>() - 1));
            for (auto *j : {&e, &want})
                for (const char *timing : {"seconds", "samples_per_s"})
                    j->erase(timing);
            QVERIFY2(e == want, qPrintable(QString::fromStdString(e.dump() + "\n" + want.dump())));
        }
    }

    // A checkpoint whose training state was damaged (a type changed by a hand edit or a bad
    // disk) is passed over, named, and the run resumes from the one before: to the same weights.
    void aDamagedCheckpointStateFallsBackToTheOneBefore()
    {
        const auto doc = trainingProject(mlpModel(), {{"epochs", 2}, {"seed", 3}, {"checkpoint", {{"every_steps", 1}, {"keep", 3}}}}, 32);
        auto uninterrupted = runTraining(doc, dir());
        QVERIFY2(uninterrupted.error.empty(), uninterrupted.error.c_str());
        train::TrainerOptions first;
        first.checkpointDir = dir() + "/damaged";
        auto stopped = runTraining(doc, dir(), first, [](train::Trainer &t, const nlohmann::json &e) {
            if (e.value("event", "") == "step" && e.value("step", 0) == 5)
                t.requestCancel();
        });
        QCOMPARE(stopped.outcome.steps, std::int64_t(5));
        int copy = 0;
        for (const char *damage : {R"("pass_counters": "three")", R"("metric_states": [[1, "x"]])", R"("step": -4)"}) {
            // Each damage on a copy of the interrupted run's checkpoints (3, 4 and 5).
            train::TrainerOptions again = first;
            again.checkpointDir = dir() + "/damaged-" + std::to_string(++copy);
            std::filesystem::copy(first.checkpointDir, again.checkpointDir);
            QVERIFY(rewriteCheckpointState(train::checkpointPath(again.checkpointDir, 5), damage));
            again.resume = true;
            auto resumed = runTraining(doc, dir(), again);
            QVERIFY2(resumed.error.empty(), resumed.error.c_str());
            const auto said = resumed.eventsOf("resumed");
            QCOMPARE(said.size(), std::size_t(1));
            QCOMPARE(said[0]["step"].get<int>(), 4);
            const std::string key = nlohmann::json::parse(std::string("{") + damage + "}").begin().key();
            QVERIFY2(contains(noticesOf(resumed), "ckpt-0000000005.npz") && contains(noticesOf(resumed), "\"" + key + "\""),
                     noticesOf(resumed).c_str());
            QVERIFY(resumed.weights == uninterrupted.weights);
        }
    }

    // A failure while the processes sum the epoch's metrics (a lost MPI peer) fails the run,
    // named, instead of reporting one process's metrics as everyone's.
    void aFailedMetricSumFailsTheRun()
    {
        // In-process sums, except the metric states (MeanAbsoluteError's two numbers: every
        // other sum of this one-output model has three).
        class FailingMetricSums final : public train::GradientReducer
        {
        public:
            std::string name() const override { return "failing"; }
            Status sumRanges(std::span<std::vector<float> *const> b, std::span<const train::FloatRange> r) override { return m_inner->sumRanges(b, r); }
            Status sumRows(std::span<std::vector<float> *const> b, std::size_t offset, std::size_t rowSize,
                           std::span<const std::vector<std::int64_t> *const> rows, std::vector<std::int64_t> &used) override
            {
                return m_inner->sumRows(b, offset, rowSize, rows, used);
            }
            Status sumAcrossProcesses(std::span<double> values) override
            {
                if (values.size() == 2)
                    return Error::failed("MPI_Allreduce", "process 1 is gone");
                return m_inner->sumAcrossProcesses(values);
            }
            Status broadcastFromFirst(std::span<float> values) override { return m_inner->broadcastFromFirst(values); }

        private:
            std::unique_ptr<train::GradientReducer> m_inner = train::makeInProcessReducer();
        } failing;
        train::TrainerOptions options;
        options.reducer = &failing;
        auto run = runTraining(trainingProject(mlpModel(), {{"epochs", 1}}, 32), dir(), options);
        QVERIFY2(contains(run.error, "MPI_Allreduce") && contains(run.error, "process 1 is gone"), run.error.c_str());
        QVERIFY(run.eventsOf("epoch_end").empty());
    }

    void checkpointsAreKeptAndPruned()
    {
        const auto doc = trainingProject(mlpModel(), {{"epochs", 2}, {"checkpoint", {{"every_steps", 1}, {"keep", 3}}}}, 32);
        train::TrainerOptions options;
        options.checkpointDir = dir() + "/pruned";
        auto run = runTraining(doc, dir(), options);
        QVERIFY2(run.error.empty(), run.error.c_str());
        std::vector<std::string> names;
        for (const auto &e : std::filesystem::directory_iterator(options.checkpointDir))
            names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        QCOMPARE(names, (std::vector<std::string>{"ckpt-0000000006.npz", "ckpt-0000000007.npz", "ckpt-0000000008.npz"}));
    }

    void resumeWithoutCheckpointIsAnError()
    {
        train::TrainerOptions options;
        options.checkpointDir = dir() + "/nothing-here";
        options.resume = true;
        auto run = runTraining(trainingProject(mlpModel(), {{"epochs", 1}}, 32), dir(), options);
        QVERIFY(contains(run.error, "no checkpoint to resume from"));
    }

    void dropRemainderSkipsThePartialBatch()
    {
        auto run = runTraining(trainingProject(mlpModel(), {{"epochs", 1}, {"drop_remainder", true}}, 32), dir());
        QVERIFY2(run.error.empty(), run.error.c_str());
        QCOMPARE(run.outcome.steps, std::int64_t(3));
    }

    void stepsPerEpochLimitsAnEpoch()
    {
        auto run = runTraining(trainingProject(mlpModel(), {{"epochs", 2}, {"steps_per_epoch", 2}}, 10), dir());
        QVERIFY2(run.error.empty(), run.error.c_str());
        QCOMPARE(run.outcome.steps, std::int64_t(4));
    }

    // training.sample_weight reaches the loss through a whole run: samples weighted 0 teach
    // nothing, so SGD leaves the weights as they started (a run with learning rate 0 shows them).
    void sampleWeightsOfZeroTeachNothing()
    {
        const nlohmann::json zeroWeights{{"id", "zero"}, {"op", "map"}, {"params", {{"function", "scale"}, {"features", "w"}, {"scale", 0}}}};
        auto weighted = runTraining(trainingProject(mlpModel(), {{"epochs", 1}, {"seed", 2}, {"sample_weight", "w"},
                                                                 {"optimizer", {{"type", "sgd"}, {"learning_rate", 0.1}}}}, 10, {zeroWeights}), dir());
        QVERIFY2(weighted.error.empty(), weighted.error.c_str());
        auto initial = runTraining(trainingProject(mlpModel(), {{"epochs", 1}, {"seed", 2}, {"optimizer", {{"type", "sgd"}, {"learning_rate", 0.0}}}}, 10), dir());
        QVERIFY2(initial.error.empty(), initial.error.c_str());
        QVERIFY(weighted.weights == initial.weights);
        auto unweighted = runTraining(trainingProject(mlpModel(), {{"epochs", 1}, {"seed", 2}, {"optimizer", {{"type", "sgd"}, {"learning_rate", 0.1}}}}, 10, {zeroWeights}), dir());
        QVERIFY(unweighted.weights != initial.weights); // the same run without the weights does learn
        // class_weight needs one output, as in Keras.
        auto twoOutputs = runTraining(trainingProject(multiInputModel(), {{"epochs", 1}, {"class_weight", {{"0", 1.0}}}}, 10), dir());
        QVERIFY2(contains(twoOutputs.error, "training.class_weight") && contains(twoOutputs.error, "one output"), twoOutputs.error.c_str());
    }

    // Settings a run cannot act on are said once, as "notice" events, never dropped in silence.
    void settingsWithoutEffectAreNoticed()
    {
        auto notices = [](const TrainingRun &run) {
            std::string all;
            for (const auto &e : run.eventsOf("notice"))
                all += e["message"].get<std::string>() + "\n";
            return all;
        };
        auto run = runTraining(trainingProject(mlpModel(), {{"epochs", 1}, {"checkpoint", {{"every_epoch", true}}}}, 10), dir());
        QVERIFY2(run.error.empty(), run.error.c_str());
        QVERIFY2(contains(notices(run), "training.checkpoint has no effect in this run"), notices(run).c_str());
        run = runTraining(trainingProject(mlpModel(), {{"epochs", 1}, {"validation", {{"split", 0.2}, {"steps", 2}}}}, 10), dir());
        QVERIFY2(run.error.empty(), run.error.c_str());
        QVERIFY2(contains(notices(run), "training.validation.steps has no effect with \"split\""), notices(run).c_str());
        // An epoch cut short by steps_per_epoch leaves a cache empty: said when the next epoch starts.
        run = runTraining(trainingProject(mlpModel(), {{"epochs", 2}, {"steps_per_epoch", 2}}, 10, {nlohmann::json{{"id", "c"}, {"op", "cache"}}}), dir());
        QVERIFY2(run.error.empty(), run.error.c_str());
        QVERIFY2(contains(notices(run), "cache 'c': a pass ended before its end, so nothing was cached"), notices(run).c_str());
        run = runTraining(trainingProject(mlpModel(), {{"epochs", 2}}, 10), dir());
        QVERIFY(run.eventsOf("notice").empty()); // nothing set that does nothing: nothing said
    }

    void validationIsEvaluatedEachEpoch()
    {
        // A split: every 4th batch is held out.
        auto split = runTraining(trainingProject(multiInputModel(), {{"epochs", 2}, {"validation", {{"split", 0.25}}}}, 10), dir());
        QVERIFY2(split.error.empty(), split.error.c_str());
        QCOMPARE(split.outcome.steps, std::int64_t(2 * 8)); // 10 batches, 2 held out
        for (const auto &e : split.eventsOf("epoch_end")) {
            QVERIFY(e.contains("val_loss") && e.contains("val_y_mae") && e.contains("val_y_loss"));
            QVERIFY(std::isfinite(e["val_loss"].get<double>()) && e["val_loss"].get<double>() > 0);
        }

        // A second pipeline output: the first 40 rows.
        auto doc = trainingProject(mlpModel(), {{"epochs", 1}, {"validation", {{"node", "val_batch"}}}}, 25);
        doc["pipeline"]["nodes"].push_back({{"id", "val_take"}, {"op", "take"}, {"params", {{"count", 40}}}});
        doc["pipeline"]["nodes"].push_back({{"id", "val_batch"}, {"op", "batch"}, {"params", {{"batch_size", 16}}}});
        doc["pipeline"]["edges"].push_back(std::vector<std::string>{"src", "val_take"});
        doc["pipeline"]["edges"].push_back(std::vector<std::string>{"val_take", "val_batch"});
        doc["pipeline"]["output"] = "batch";
        auto node = runTraining(doc, dir());
        QVERIFY2(node.error.empty(), node.error.c_str());
        const auto end = node.eventsOf("epoch_end").at(0);
        QVERIFY(end.contains("val_loss") && end.contains("val_mae"));

        // "steps" evaluates that many batches of the node: 1 batch of 16 rows scores as a node
        // that holds only those 16 rows.
        doc["training"]["validation"]["steps"] = 1;
        const auto oneStep = runTraining(doc, dir()).eventsOf("epoch_end").at(0);
        doc["training"]["validation"].erase("steps");
        doc["pipeline"]["nodes"][doc["pipeline"]["nodes"].size() - 2]["params"]["count"] = 16;
        const auto sixteenRows = runTraining(doc, dir()).eventsOf("epoch_end").at(0);
        QCOMPARE(oneStep["val_loss"].get<double>(), sixteenRows["val_loss"].get<double>());
        QVERIFY(oneStep["val_loss"].get<double>() != end["val_loss"].get<double>());
    }

    void nanLossStopsTheRun()
    {
        auto run = runTraining(trainingProject(mlpModel(), {{"epochs", 3}, {"optimizer", {{"type", "sgd"}, {"learning_rate", 1e6}}}}, 10), dir());
        QCOMPARE(int(run.outcome.status), int(train::RunStatus::Failed));
        QVERIFY2(contains(run.error, "NaN or infinite at step") && contains(run.error, "output y"), run.error.c_str());
        QCOMPARE(run.eventsOf("run_end").back()["status"].get<std::string>(), std::string("failed"));
    }

    // Shapes that do not fit are refused before training starts, naming the layer or output.
    void misfitsAreRefusedBeforeTraining_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("expected");
        QTest::newRow("target shape") << R"({"inputs": [{"name": "x"}], "layers": [{"class_name": "Dense", "name": "d", "units": 3}],
            "outputs": [{"layer": "d", "target": "y", "loss": "mse"}]})"
                                      << "output 'd'";
        QTest::newRow("sequence into Dense-only input") << R"({"inputs": [{"name": "x"}], "layers": [{"class_name": "GRU", "name": "rnn", "units": 3}],
            "outputs": [{"layer": "rnn", "target": "y", "loss": "mse"}]})"
                                                        << "layer 'rnn'";
        QTest::newRow("unknown layer") << R"({"inputs": [{"name": "x"}], "layers": [{"class_name": "Dense2", "name": "d", "units": 2}],
            "outputs": [{"layer": "d", "target": "y", "loss": "mse"}]})"
                                       << "Dense2";
        QTest::newRow("unknown feature") << R"({"inputs": [{"name": "image"}], "layers": [{"class_name": "Dense", "name": "d", "units": 2}],
            "outputs": [{"layer": "d", "target": "y", "loss": "mse"}]})"
                                         << "no feature 'image'";
        QTest::newRow("sparse labels vs units") << R"({"inputs": [{"name": "x"}], "layers": [{"class_name": "Dense", "name": "d", "units": 3}],
            "outputs": [{"layer": "d", "target": "y", "loss": "sparse_categorical_crossentropy"}]})"
                                                << "output 'd'";
        QTest::newRow("unknown loss") << R"({"inputs": [{"name": "x"}], "layers": [{"class_name": "Dense", "name": "d", "units": 2}],
            "outputs": [{"layer": "d", "target": "y", "loss": "msle2"}]})"
                                      << "msle2";
        QTest::newRow("layer input undefined") << R"({"inputs": [{"name": "x"}], "layers": [{"class_name": "Dense", "name": "d", "inputs": ["nope"], "units": 2}],
            "outputs": [{"layer": "d", "target": "y", "loss": "mse"}]})"
                                               << "input 'nope'";
    }
    void misfitsAreRefusedBeforeTraining()
    {
        QFETCH(QString, model);
        QFETCH(QString, expected);
        auto run = runTraining(trainingProject(nlohmann::json::parse(model.toStdString()), {{"epochs", 1}}, 10), dir());
        QVERIFY2(!run.error.empty(), "training started");
        QVERIFY2(run.events.empty(), "events before the error");
        QVERIFY2(contains(run.error, expected.toStdString()), run.error.c_str());
    }

    void unbatchedPipelineIsRefused()
    {
        auto doc = trainingProject(mlpModel(), {{"epochs", 1}}, 10);
        doc["pipeline"]["nodes"].erase(1); // the batch stage
        doc["pipeline"]["edges"] = nlohmann::json::array();
        auto run = runTraining(doc, dir());
        QVERIFY2(contains(run.error, "does not batch its elements"), run.error.c_str());
    }

    void badTrainingSettingsNameTheKey_data()
    {
        QTest::addColumn<QString>("training");
        QTest::addColumn<QString>("expected");
        QTest::newRow("epochs") << R"({"epochs": 0})" << "training.epochs";
        QTest::newRow("unknown key") << R"({"epoch": 2})" << "training.epoch";
        QTest::newRow("optimizer type") << R"({"optimizer": {"type": "adagrad9"}})" << "adagrad9";
        QTest::newRow("class weight key") << R"({"class_weight": {"one": 2}})" << "training.class_weight";
        QTest::newRow("devices") << R"({"devices": ["tpu:0"]})" << "training.devices";
        QTest::newRow("validation") << R"({"validation": {"split": 1.5}})" << "training.validation.split";
        QTest::newRow("sample weight") << R"({"sample_weight": "nope"})" << "training.sample_weight";
        QTest::newRow("schedule") << R"({"optimizer": {"type": "sgd", "learning_rate": {"type": "cosine"}}})" << "learning_rate.initial_learning_rate";
    }
    void badTrainingSettingsNameTheKey()
    {
        QFETCH(QString, training);
        QFETCH(QString, expected);
        auto run = runTraining(trainingProject(mlpModel(), nlohmann::json::parse(training.toStdString()), 10), dir());
        QVERIFY2(contains(run.error, expected.toStdString()), run.error.c_str());
    }

    void initialWeightsAreLoadedAndSaved()
    {
        auto project = Project::fromJson(trainingProject(mlpModel(), {{"epochs", 1}}, 10), dir());
        QVERIFY(project.ok());
        auto pipe = pipeline::Pipeline::build(*project);
        QVERIFY(pipe.ok());
        auto m = train::Model::build(project->model, (*pipe)->elementSpec());
        QVERIFY(m.ok());
        QCOMPARE((*m)->parameters().at(0).name, std::string("d1/kernel"));
        QCOMPARE((*m)->parameters().at(0).shape, (train::Shape{6, 16}));
        QCOMPARE((*m)->parameters().at(1).name, std::string("d1/bias"));
        auto w = (*m)->initialWeights(99);
        QVERIFY(w.ok());
        const std::string path = dir() + "/init.npz";
        QVERIFY((*m)->saveWeights(path, *w).ok());
        // A zero-epoch-like check: training from these weights starts from them.
        auto run = runTraining(trainingProject(mlpModel(), {{"epochs", 1}, {"initial_weights", "init.npz"}, {"optimizer", {{"type", "sgd"}, {"learning_rate", 0.0}}}}, 10),
                               dir());
        QVERIFY2(run.error.empty(), run.error.c_str());
        QCOMPARE(run.weights, *w);
        auto missing = runTraining(trainingProject(mlpModel(), {{"epochs", 1}, {"initial_weights", "nope.npz"}}, 10), dir());
        QVERIFY2(contains(missing.error, "training.initial_weights"), missing.error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTrainer)
#include "tst_trainer.moc"
