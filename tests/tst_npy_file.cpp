// Reading every .npy numpy writes (tests/data/npy, written by numpy; see make_fixtures.py)
// and comparing with what numpy says is inside (fixtures.json).
#include "io/formats/npy_file.h"
#include "support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace sluice;
using sluice::test::fixture;
using sluice::test::manifest;

namespace {

// Compares a converted (native, C-order) array element by element with numpy's values.
template <typename T>
void compareValues(const NdArray &a, const nlohmann::json &expected)
{
    const auto view = a.view<T>();
    QVERIFY2(view.ok(), view.ok() ? "" : view.error().message().c_str());
    QCOMPARE(view->size(), std::uint64_t(expected.size()));
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const auto &e = expected[i];
        if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Float16>) {
            const double got = double(float(view->flat(i)));
            const double want = e.is_string() ? (e == "nan" ? NAN : (e == "inf" ? INFINITY : -INFINITY)) : e.get<double>();
            if (std::isnan(want))
                QVERIFY(std::isnan(got));
            else if constexpr (std::is_same_v<T, double>)
                QCOMPARE(view->flat(i), want);
            else
                QCOMPARE(got, want); // numpy's tolist() widens exactly, so equality holds
        } else if constexpr (std::is_same_v<T, bool>) {
            QCOMPARE(view->flat(i), e.get<bool>());
        } else {
            QCOMPARE(view->flat(i), e.get<T>());
        }
    }
}

void compareAny(const NdArray &a, const nlohmann::json &values)
{
    switch (a.dtype()) {
    case DType::Bool: compareValues<bool>(a, values); break;
    case DType::Int8: compareValues<std::int8_t>(a, values); break;
    case DType::Int16: compareValues<std::int16_t>(a, values); break;
    case DType::Int32: compareValues<std::int32_t>(a, values); break;
    case DType::Int64: compareValues<std::int64_t>(a, values); break;
    case DType::UInt8: compareValues<std::uint8_t>(a, values); break;
    case DType::UInt16: compareValues<std::uint16_t>(a, values); break;
    case DType::UInt32: compareValues<std::uint32_t>(a, values); break;
    case DType::UInt64: compareValues<std::uint64_t>(a, values); break;
    case DType::Float16: compareValues<Float16>(a, values); break;
    case DType::Float32: compareValues<float>(a, values); break;
    case DType::Float64: compareValues<double>(a, values); break;
    }
}

} // namespace

class TestNpyFile : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void readsEveryNumpyFixture_data()
    {
        QTest::addColumn<QString>("name");
        for (const auto &[name, entry] : manifest().items())
            if (name.ends_with(".npy"))
                QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }
    void readsEveryNumpyFixture()
    {
        QFETCH(QString, name);
        const auto &m = manifest()[name.toStdString()];
        auto a = openNpy(fixture(name.toStdString()));
        QVERIFY2(a.ok(), a.ok() ? "" : a.error().message().c_str());
        QCOMPARE(QString::fromStdString(a->descr().str()), QString::fromStdString(m["descr"]));
        QCOMPARE(a->shape(), m["shape"].get<std::vector<std::uint64_t>>());
        QCOMPARE(a->header().fortranOrder, m["fortran_order"].get<bool>());
        QCOMPARE(QString::fromStdString(a->header().versionString()), QString::fromStdString(m["version"]));
        QCOMPARE(a->storage(), Storage::Mapped);

        const NdArray native = a->toNative();
        const bool needsConversion = !a->descr().isNativeOrder() || !a->isRowContiguous();
        QCOMPARE(a->isViewable(), !needsConversion);
        QCOMPARE(native.storage(), needsConversion ? Storage::Converted : Storage::Mapped);
        if (needsConversion) {
            QVERIFY(!a->conversionReason().empty());
            QVERIFY(!a->view<float>().ok() || a->dtype() != DType::Float32);
        }
        compareAny(native, m["values"]);
    }

    void zeroCopyViewPointsIntoTheFile()
    {
        auto a = openNpy(fixture("float32_le.npy"));
        QVERIFY(a.ok());
        QVERIFY(a->isZeroCopy());
        const MappedFile *mapping = a->mapping();
        QVERIFY(mapping);
        const auto view = a->view<float>();
        QVERIFY(view.ok());
        const auto *begin = reinterpret_cast<const std::byte *>(view->data());
        QVERIFY(begin >= mapping->bytes().data() && begin < mapping->bytes().data() + mapping->size());
        QCOMPARE(std::uint64_t(begin - mapping->bytes().data()), a->header().dataOffset);
        // Row ranges are views too.
        QCOMPARE(view->rows(1, 3).data(), view->data() + 3);
        QCOMPARE(view->rows(1, 3).size(), std::size_t(6));
        QCOMPARE(view->at({2, 1}), view->flat(7));
    }

    void fortranOrderElementAccess()
    {
        // numpy: np.asfortranarray(np.arange(24, dtype='>i4').reshape(2, 3, 4)); a[1, 2, 3] == 23
        auto a = openNpy(fixture("fortran_be_i4_3d.npy"));
        QVERIFY(a.ok());
        QVERIFY(!a->isRowContiguous());
        QCOMPARE(QString::fromStdString(a->conversionReason()), QString("big-endian, Fortran order"));
        QVERIFY(!a->view<std::int32_t>().ok());
        const NdArray c = a->toNative();
        const auto v = c.view<std::int32_t>();
        QVERIFY(v.ok());
        for (std::int32_t i = 0; i < 24; ++i)
            QCOMPARE(v->flat(std::uint64_t(i)), i);
        QCOMPARE(v->at({1, 2, 3}), 23);
        QCOMPARE(v->at({0, 1, 2}), 6);
    }

    void rowsOfScalarAndEmpty()
    {
        auto s = openNpy(fixture("scalar_f8.npy"));
        QVERIFY(s.ok());
        QCOMPARE(s->ndim(), std::size_t(0));
        QCOMPARE(s->rowCount(), std::uint64_t(1));
        QCOMPARE(s->view<double>()->flat(0), 3.25);
        auto e = openNpy(fixture("empty_f4.npy"));
        QVERIFY(e.ok());
        QCOMPARE(e->rowCount(), std::uint64_t(0));
        QCOMPARE(e->rowBytes(), std::uint64_t(20));
        QCOMPARE(e->nbytes(), std::uint64_t(0));
        QVERIFY(e->view<float>().ok());
    }

    void typedViewChecksTheDtype()
    {
        auto a = openNpy(fixture("int64_le.npy"));
        QVERIFY(a.ok());
        const auto wrong = a->view<float>();
        QVERIFY(!wrong.ok());
        QVERIFY(QString::fromStdString(wrong.error().message()).contains("float32"));
    }

    void refusesWhatNumpyWritesButSluiceDoesNotRead_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("reason");
        QTest::newRow("object") << "object.npy" << "object dtype";
        QTest::newRow("structured") << "structured.npy" << "structured dtype";
        QTest::newRow("unicode") << "unicode.npy" << "string dtype";
    }
    void refusesWhatNumpyWritesButSluiceDoesNotRead()
    {
        QFETCH(QString, name);
        QFETCH(QString, reason);
        const std::string path = fixture(name.toStdString());
        auto a = openNpy(path);
        QVERIFY(!a.ok());
        QCOMPARE(a.error().what, path);
        QVERIFY2(QString::fromStdString(a.error().reason).contains(reason), a.error().reason.c_str());
    }

    void missingEmptyAndDirectory()
    {
        QTemporaryDir dir;
        const std::string missing = dir.filePath("nope.npy").toStdString();
        auto a = openNpy(missing);
        QVERIFY(!a.ok());
        QCOMPARE(a.error().kind, Error::Kind::NotFound);
        QCOMPARE(QString::fromStdString(a.error().message()), QString::fromStdString(missing + ": no such file"));

        const std::string empty = dir.filePath("empty.npy").toStdString();
        test::writeFile(empty, "");
        a = openNpy(empty);
        QVERIFY(!a.ok());
        QCOMPARE(QString::fromStdString(a.error().reason), QString("file is empty"));

        a = openNpy(dir.path().toStdString());
        QVERIFY(!a.ok());
        QVERIFY(QString::fromStdString(a.error().reason).contains("directory"));
    }

    void truncatedNumpyFileNamesTheShortfall()
    {
        QTemporaryDir dir;
        const std::string whole = test::readFile(fixture("float64_le.npy"));
        const std::string cut = dir.filePath("cut.npy").toStdString();
        test::writeFile(cut, whole.substr(0, whole.size() - 5));
        auto a = openNpy(cut);
        QVERIFY(!a.ok());
        QVERIFY2(QString::fromStdString(a.error().reason).contains("data is shorter than the shape needs: 96 bytes expected, 91 present"),
                 a.error().reason.c_str());
    }
};

QTEST_GUILESS_MAIN(TestNpyFile)
#include "tst_npy_file.moc"
