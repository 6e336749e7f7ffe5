// DType names, numpy descr strings, float16 conversion and byte swapping.
#include "io/dtype.h"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace sluice;

class TestDType : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void descrRoundTrips_data()
    {
        QTest::addColumn<QString>("descr");
        for (const char *d : {"|b1", "|i1", "|u1", "<i2", ">i2", "<i4", ">i4", "<i8", ">i8", "<u2", ">u2", "<u4", ">u4",
                              "<u8", ">u8", "<f2", ">f2", "<f4", ">f4", "<f8", ">f8"})
            QTest::newRow(d) << QString(d);
    }
    void descrRoundTrips()
    {
        QFETCH(QString, descr);
        const auto d = parseDescr(descr.toStdString());
        QVERIFY(d.has_value());
        QCOMPARE(QString::fromStdString(d->str()), descr);
    }

    void descrAcceptsNumpySpellings()
    {
        QCOMPARE(parseDescr("=f4")->type, DType::Float32);
        QCOMPARE(parseDescr("=f4")->order, nativeByteOrder());
        QCOMPARE(parseDescr("b1")->type, DType::Bool);
        QCOMPARE(parseDescr(">u8")->order, ByteOrder::Big);
    }

    void descrRefusesWhatSluiceDoesNotRead()
    {
        for (const char *d : {"|O", "<U10", "|S5", "<c8", "<M8[ns]", "|V8", "<f3", "<i16", "", "<", "f", "<f4x"})
            QVERIFY2(!parseDescr(d).has_value(), d);
    }

    void namesAndSizes()
    {
        QCOMPARE(itemSize(DType::Float16), std::size_t(2));
        QCOMPARE(itemSize(DType::UInt64), std::size_t(8));
        QCOMPARE(dtypeFromName("float32"), std::optional<DType>(DType::Float32));
        QCOMPARE(dtypeFromName("int128"), std::optional<DType>());
        QCOMPARE(QString::fromStdString(std::string(dtypeName(DType::Bool))), QString("bool"));
    }

    void float16KnownValues()
    {
        // Bit patterns from IEEE 754 binary16 (numpy agrees: np.float16(x).view(np.uint16)).
        QCOMPARE(float(Float16{0x3c00}), 1.0f);
        QCOMPARE(float(Float16{0xc000}), -2.0f);
        QCOMPARE(float(Float16{0x7bff}), 65504.0f);
        QCOMPARE(float(Float16{0x0001}), std::ldexp(1.0f, -24)); // smallest subnormal
        QCOMPARE(float(Float16{0x0400}), std::ldexp(1.0f, -14)); // smallest normal
        QVERIFY(std::isinf(float(Float16{0x7c00})));
        QVERIFY(std::isnan(float(Float16{0x7e00})));
        QCOMPARE(Float16::fromFloat(1.0f).bits, std::uint16_t(0x3c00));
        QCOMPARE(Float16::fromFloat(65504.0f).bits, std::uint16_t(0x7bff));
        QCOMPARE(Float16::fromFloat(1e6f).bits, std::uint16_t(0x7c00));
        QCOMPARE(Float16::fromFloat(std::ldexp(1.0f, -24)).bits, std::uint16_t(0x0001));
        QVERIFY(std::isnan(float(Float16::fromFloat(std::numeric_limits<float>::quiet_NaN()))));
    }

    void float16RoundTripsEveryHalf()
    {
        for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
            const Float16 h{std::uint16_t(bits)};
            const float f = h;
            if (std::isnan(f))
                continue;
            QCOMPARE(Float16::fromFloat(f).bits, h.bits);
        }
    }

    void byteSwapAndLoad()
    {
        std::uint32_t v[2] = {0x01020304u, 0xa0b0c0d0u};
        byteSwapInPlace(v, 2, 4);
        QCOMPARE(v[0], 0x04030201u);
        QCOMPARE(v[1], 0xd0c0b0a0u);
        const unsigned char bigOne[4] = {0x3f, 0x80, 0, 0}; // 1.0f big-endian
        QCOMPARE(loadAsDouble(reinterpret_cast<const std::byte *>(bigOne), {DType::Float32, ByteOrder::Big}), 1.0);
    }
};

QTEST_GUILESS_MAIN(TestDType)
#include "tst_dtype.moc"
