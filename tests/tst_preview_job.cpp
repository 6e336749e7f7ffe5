// Stage previews run on one bounded worker: a preview of a range stage gives its first values;
// twenty requests made at once run at most two previews (the one under way and the newest) and
// only the newest is answered; a node that does not exist fails with the reason; destroying
// the job while a preview is taken waits for it.
#include "bridge/preview_job.h"
#include "support/pipeline_test_support.h"

#include <QSignalSpy>
#include <QTest>

using namespace sluice;
using namespace sluice::test;
using bridge::PreviewJob;

Q_DECLARE_METATYPE(sluice::pipeline::StagePreview)

class TestPreviewJob : public QObject
{
    Q_OBJECT

    static Project rangeProject(int stop)
    {
        auto p = Project::fromJson(nlohmann::json::parse(projectText(chain({op("src", "range", {{"stop", stop}}), op("b", "batch", {{"batch_size", 2}})}))), "/");
        if (!p)
            qFatal("test project: %s", p.error().message().c_str());
        return std::move(*p);
    }

private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<sluice::pipeline::StagePreview>(); }

    void aPreviewGivesTheFirstElements()
    {
        PreviewJob job;
        QSignalSpy ready(&job, &PreviewJob::ready);
        const quint64 id = job.request(rangeProject(10), "b", 2);
        QVERIFY(ready.wait(20000));
        QCOMPARE(ready[0][0].toULongLong(), id);
        const auto preview = ready[0][1].value<pipeline::StagePreview>();
        QCOMPARE(preview.rows.size(), std::size_t(2));
        QCOMPARE(preview.rows[0][0].values, std::string("[0, 1]"));
        QCOMPARE(preview.rows[1][0].values, std::string("[2, 3]"));
        QVERIFY(!job.isBusy());
    }

    void manyRequestsRunOneAtATimeAndOnlyTheNewestAnswers()
    {
        PreviewJob job;
        QSignalSpy ready(&job, &PreviewJob::ready);
        QSignalSpy failed(&job, &PreviewJob::failed);
        quint64 last = 0;
        for (int i = 1; i <= 20; ++i)
            last = job.request(rangeProject(10 + i), "src", i);
        QTRY_VERIFY_WITH_TIMEOUT(!job.isBusy(), 20000);
        QCOMPARE(ready.size(), 1);
        QCOMPARE(failed.size(), 0);
        QCOMPARE(ready[0][0].toULongLong(), last);
        QCOMPARE(ready[0][1].value<pipeline::StagePreview>().rows.size(), std::size_t(20)); // the newest request's 20 elements
        QVERIFY2(job.previewsTaken() <= 2, qPrintable(QString::number(job.previewsTaken())));
    }

    void aMissingNodeFailsWithTheReason()
    {
        PreviewJob job;
        QSignalSpy failed(&job, &PreviewJob::failed);
        job.request(rangeProject(10), "nope", 1);
        QVERIFY(failed.wait(20000));
        QVERIFY2(failed[0][1].toString().contains("nope"), qPrintable(failed[0][1].toString()));
    }

    void destroyingTheJobWaitsForThePreview()
    {
        auto job = std::make_unique<PreviewJob>();
        job->request(rangeProject(1000), "b", 50);
        job->request(rangeProject(1000), "b", 50); // waiting: dropped
        job.reset(); // joins the worker; nothing is delivered to a job that is gone
        QCoreApplication::processEvents();
    }
};

QTEST_MAIN(TestPreviewJob)
#include "tst_preview_job.moc"
