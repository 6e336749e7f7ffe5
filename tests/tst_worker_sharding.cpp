// How an MPI worker's share of the data is cut (train/worker_sharding), without MPI: by file
// when every file-list source has a file for each worker (worker w keeps files w, w+W, ...), else
// by element (a shard stage right before the batch); the global batch divided by the workers, and
// refused when it does not divide.
#include "io/formats/image_codec.h"
#include "project/project.h"
#include "support/pipeline_test_support.h"
#include "support/test_support.h"
#include "train/distribute/worker_sharding.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace sluice;
using namespace sluice::test;

class TestWorkerSharding : public QObject
{
    Q_OBJECT

    Project csvProject(int files, int batchSize)
    {
        std::vector<std::string> names;
        for (int f = 0; f < files; ++f) {
            names.push_back("part-" + std::to_string(f) + ".csv");
            writeFile(m_dir.filePath(QString::fromStdString(names.back())).toStdString(), "a,b\n1,2\n");
        }
        auto p = Project::fromText(projectText(chain({op("src", "from_csv", {{"filenames", names}, {"columns", {"a", "b"}}}),
                                                       op("batch", "batch", {{"batch_size", batchSize}})})),
                                   m_dir.path().toStdString());
        if (!p)
            qFatal("%s", p.error().message().c_str());
        return *p;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void enoughFilesShardByFile()
    {
        Project project = csvProject(5, 8);
        auto plan = train::shardForWorker(project, "batch", 2, 1);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().message().c_str());
        QCOMPARE(plan->policy, std::string("file"));
        QCOMPARE(plan->globalBatch, std::int64_t(8));
        QCOMPARE(plan->workerBatch, std::int64_t(4));
        const auto files = project.findNode("src")->params["filenames"];
        QCOMPARE(files.size(), std::size_t(2)); // files 1 and 3 of 0..4
        QVERIFY(files[0].get<std::string>().ends_with("part-1.csv"));
        QVERIFY(files[1].get<std::string>().ends_with("part-3.csv"));
        QCOMPARE(project.findNode("batch")->params["batch_size"].get<int>(), 4);
        QCOMPARE(project.nodes.size(), std::size_t(2)); // no shard stage
    }

    // Parquet files are dealt to workers as CSV files are (the files are only listed here: the
    // rewrite happens before anything is opened).
    void parquetFilesShardByFile()
    {
        auto p = Project::fromText(projectText(chain({op("src", "from_parquet", {{"filenames", {"a.parquet", "b.parquet", "c.parquet"}}}),
                                                       op("batch", "batch", {{"batch_size", 6}})})),
                                   m_dir.path().toStdString());
        QVERIFY(p.ok());
        for (const char *name : {"a.parquet", "b.parquet", "c.parquet"})
            writeFile(m_dir.filePath(name).toStdString(), "PAR1");
        auto plan = train::shardForWorker(*p, "batch", 3, 2);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().message().c_str());
        QCOMPARE(plan->policy, std::string("file"));
        const auto files = p->findNode("src")->params["filenames"];
        QCOMPARE(files.size(), std::size_t(1));
        QVERIFY(files[0].get<std::string>().ends_with("c.parquet"));
        QCOMPARE(p->findNode("batch")->params["batch_size"].get<int>(), 2);
    }

    // from_files decodes a file per element: each worker's shard comes right after the source,
    // before the decoding, so that no worker reads or decodes another's pictures.
    void pictureFilesAreShardedAtTheSource()
    {
        QDir(m_dir.path()).mkpath("pictures/a");
        const std::uint8_t px[3] = {1, 2, 3};
        for (int k = 0; k < 6; ++k)
            writeFile(m_dir.filePath(QString("pictures/a/%1.png").arg(k)).toStdString(), encodePng(px, 1, 1, 3, "test").value());
        const auto workerLabels = [&](int index) {
            auto p = Project::fromText(projectText(chain({op("src", "from_files", {{"directory", "pictures"}, {"labels", {0, 1, 2, 3, 4, 5}}}),
                                                          op("dec", "map", {{"function", "decode_image"}, {"features", "image"}}),
                                                          op("batch", "batch", {{"batch_size", 4}})})),
                                       m_dir.path().toStdString());
            if (!p)
                qFatal("%s", p.error().message().c_str());
            auto plan = train::shardForWorker(*p, "batch", 2, index);
            if (!plan)
                qFatal("%s", plan.error().message().c_str());
            // The shard reads the source and feeds the decoding.
            if (p->inputsOf("dec") != std::vector<std::string>{"__worker_shard_src"} || p->inputsOf("__worker_shard_src") != std::vector<std::string>{"src"})
                qFatal("the shard is not between the source and the decoding");
            auto built = pipeline::Pipeline::build(*p);
            if (!built)
                qFatal("%s", built.error().message().c_str());
            return collect(**built, "label").flat();
        };
        QCOMPARE(workerLabels(0), (std::vector<double>{0, 2, 4}));
        QCOMPARE(workerLabels(1), (std::vector<double>{1, 3, 5}));
    }

    void fewerFilesThanWorkersShardByElement()
    {
        Project project = csvProject(3, 8);
        auto plan = train::shardForWorker(project, "batch", 4, 2);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().message().c_str());
        QCOMPARE(plan->policy, std::string("data"));
        QCOMPARE(plan->workerBatch, std::int64_t(2));
        const PipelineNode *shard = nullptr;
        for (const auto &n : project.nodes)
            if (n.op == "shard")
                shard = &n;
        QVERIFY(shard);
        QCOMPARE(shard->params["num_shards"].get<int>(), 4);
        QCOMPARE(shard->params["index"].get<int>(), 2);
        QCOMPARE(project.findNode("src")->params["filenames"].size(), std::size_t(3)); // every file, every worker
    }

    void aGlobalBatchThatDoesNotDivideIsRefused()
    {
        Project project = csvProject(6, 10);
        auto plan = train::shardForWorker(project, "batch", 3, 0);
        QVERIFY(!plan.ok());
        QVERIFY2(plan.error().message().find("does not divide evenly over 3 workers") != std::string::npos, plan.error().message().c_str());
    }

private:
    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestWorkerSharding)
#include "tst_worker_sharding.moc"
