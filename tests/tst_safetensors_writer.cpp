// safetensors files as the format's specification lays them out: the 8-byte little-endian
// header length, a JSON header padded to 8 bytes, tensors back to back at the offsets the
// header gives; and the names and sizes that must be refused. The Python suite
// (tests/python/test_export.py) reads the files with the safetensors package itself.
#include "io/writers/safetensors_writer.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

using namespace sluice;

namespace {

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestSafetensorsWriter : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void laysOutHeaderAndTensors()
    {
        QTemporaryDir dir;
        const std::vector<float> kernel{1, 2, 3, 4, 5, 6}, bias{-0.5f, 0.25f, 1e-30f};
        const std::vector<SafetensorsTensor> tensors{{"dense/kernel", {2, 3}, kernel}, {"dense/bias", {3}, bias}};
        const QString path = dir.filePath("w.safetensors");
        auto s = writeSafetensors(path.toStdString(), tensors, {{"format", "sluice"}});
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().message().c_str());

        const QByteArray bytes = readAll(path);
        QVERIFY(bytes.size() > 8);
        std::uint64_t length = 0;
        for (int i = 7; i >= 0; --i)
            length = (length << 8) | std::uint8_t(bytes[i]);
        QCOMPARE(length % 8, std::uint64_t(0)); // padded, so that the tensors are aligned
        QCOMPARE(std::uint64_t(bytes.size()), 8 + length + (kernel.size() + bias.size()) * sizeof(float));
        const auto header = nlohmann::json::parse(bytes.mid(8, qsizetype(length)).toStdString());
        QCOMPARE(header["__metadata__"]["format"].get<std::string>(), std::string("sluice"));
        QCOMPARE(header["dense/kernel"]["dtype"].get<std::string>(), std::string("F32"));
        QCOMPARE(header["dense/kernel"]["shape"], nlohmann::json({2, 3}));
        QCOMPARE(header["dense/kernel"]["data_offsets"], nlohmann::json({0, 24}));
        QCOMPARE(header["dense/bias"]["data_offsets"], nlohmann::json({24, 36}));
        const char *data = bytes.constData() + 8 + length;
        QVERIFY(std::memcmp(data, kernel.data(), 24) == 0);
        QVERIFY(std::memcmp(data + 24, bias.data(), 12) == 0);
    }

    void scalarsAndEmptyTensors()
    {
        const std::vector<float> one{7.0f};
        const std::vector<SafetensorsTensor> tensors{{"s", {}, one}, {"e", {0, 4}, {}}};
        auto header = safetensorsHeader(tensors, {});
        QVERIFY(header.ok());
        const auto json = nlohmann::json::parse(*header);
        QVERIFY(!json.contains("__metadata__"));
        QCOMPARE(json["s"]["data_offsets"], nlohmann::json({0, 4}));
        QCOMPARE(json["e"]["data_offsets"], nlohmann::json({4, 4}));
    }

    void refusesWhatTheFormatCannotHold_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("named");
        QTest::newRow("repeated name") << 0 << "appears twice";
        QTest::newRow("count disagrees with shape") << 1 << "holds 6 values, but 5";
        QTest::newRow("reserved name") << 2 << "__metadata__";
        QTest::newRow("empty name") << 3 << "not a usable tensor name";
    }
    void refusesWhatTheFormatCannotHold()
    {
        QFETCH(int, which);
        QFETCH(QString, named);
        const std::vector<float> six(6, 1.0f), five(5, 1.0f);
        std::vector<SafetensorsTensor> tensors;
        switch (which) {
        case 0: tensors = {{"a", {6}, six}, {"a", {6}, six}}; break;
        case 1: tensors = {{"a", {2, 3}, five}}; break;
        case 2: tensors = {{"__metadata__", {6}, six}}; break;
        default: tensors = {{"", {6}, six}}; break;
        }
        QTemporaryDir dir;
        const QString path = dir.filePath("bad.safetensors");
        auto s = writeSafetensors(path.toStdString(), tensors);
        QVERIFY(!s.ok());
        QVERIFY2(QString::fromStdString(s.error().message()).contains(named), s.error().message().c_str());
        QVERIFY(!QFile::exists(path)); // nothing written, not even a half file
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 0);
    }

    void unwritableFolderIsAnError()
    {
        const std::vector<float> one{1.0f};
        auto s = writeSafetensors("/nonexistent-folder/x.safetensors", std::vector<SafetensorsTensor>{{"a", {1}, one}});
        QVERIFY(!s.ok());
        QVERIFY(QString::fromStdString(s.error().message()).contains("nonexistent-folder"));
    }
};

QTEST_GUILESS_MAIN(TestSafetensorsWriter)
#include "tst_safetensors_writer.moc"
