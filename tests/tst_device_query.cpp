// The CUDA device query: on a machine without a GPU or driver (CI) it must answer "none"
// with a reason instead of failing; on a GPU machine it lists real devices.
#include "train/gpu/device_query.h"

#include <QtTest>

using namespace sluice;

class TestDeviceQuery : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void answersWithDevicesOrAReason()
    {
        const DeviceQuery q = queryGpuDevices();
#ifdef SLUICE_HAVE_CUDA
        QVERIFY(q.builtWithCuda);
        QVERIFY(q.runtimeVersion > 0);
#else
        QVERIFY(!q.builtWithCuda);
#endif
        if (q.devices.empty()) {
            QVERIFY2(!q.reason.empty(), "no devices must come with a reason for the user");
            QSKIP(qPrintable("no GPU on this machine: " + QString::fromStdString(q.reason)));
        }
        for (const GpuDevice &d : q.devices) {
            QVERIFY(!d.name.empty());
            QVERIFY(d.memoryBytes > 0);
            QVERIFY(d.computeMajor >= 3);
        }
    }

    void repeatedQueriesAgree()
    {
        const DeviceQuery a = queryGpuDevices(), b = queryGpuDevices();
        QCOMPARE(a.devices.size(), b.devices.size());
        QCOMPARE(a.reason, b.reason);
    }
};

QTEST_GUILESS_MAIN(TestDeviceQuery)
#include "tst_device_query.moc"
