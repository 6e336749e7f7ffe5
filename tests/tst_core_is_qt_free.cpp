// Blueprint decisions 1 and 2: nothing under core/ includes a Qt header, and core's headers
// never include oneTBB (Qt's `emit` macro breaks oneTBB's headers in Qt translation units).
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QtTest>

// Plain string literals, not raw ones: moc's tokenizer trips over quotes inside raw strings.
QString qtIncludePattern()
{
    return QStringLiteral("^\\s*#\\s*include\\s*[<\"](Q[A-Za-z]+|Qt[A-Za-z]*/[^>\"]*|qcustomplot\\.h)[>\"]");
}

class TestCoreIsQtFree : public QObject
{
    Q_OBJECT

private:
    static QStringList offenders(const QStringList &nameFilters, const QRegularExpression &pattern)
    {
        QStringList found;
        QDirIterator it(QString(SLUICE_SOURCE_DIR) + "/core", nameFilters, QDir::Files, QDirIterator::Subdirectories);
        int files = 0;
        while (it.hasNext()) {
            const QString path = it.next();
            ++files;
            QFile f(path);
            if (!f.open(QIODevice::ReadOnly))
                continue;
            int lineNo = 0;
            while (!f.atEnd()) {
                const QString line = QString::fromUtf8(f.readLine());
                ++lineNo;
                if (pattern.match(line).hasMatch())
                    found << QString("%1:%2: %3").arg(path).arg(lineNo).arg(line.trimmed());
            }
        }
        if (files == 0)
            found << "no source files found under core/ (wrong SLUICE_SOURCE_DIR?)";
        return found;
    }

private Q_SLOTS:
    void noQtIncludeInCore()
    {
        const QRegularExpression qtInclude(qtIncludePattern());
        const QStringList found = offenders({"*.h", "*.hpp", "*.cpp", "*.cu", "*.cuh"}, qtInclude);
        QVERIFY2(found.isEmpty(), qPrintable("core/ must not include Qt:\n" + found.join('\n')));
    }

    void detectsAQtInclude()
    {
        // The pattern itself must catch the usual spellings, or the check above proves nothing.
        const QRegularExpression qtInclude(qtIncludePattern());
        for (const char *line : {"#include <QString>", "#  include \"QObject\"", "#include <QtCore/qglobal.h>"})
            QVERIFY2(qtInclude.match(line).hasMatch(), line);
        QVERIFY(!qtInclude.match("#include <queue>").hasMatch());
    }

    void noTbbInCoreHeaders()
    {
        const QRegularExpression tbbInclude(QStringLiteral("^\\s*#\\s*include\\s*[<\"](oneapi/)?tbb/"));
        const QStringList found = offenders({"*.h", "*.hpp"}, tbbInclude);
        QVERIFY2(found.isEmpty(), qPrintable("core headers must not include oneTBB:\n" + found.join('\n')));
    }
};

QTEST_GUILESS_MAIN(TestCoreIsQtFree)
#include "tst_core_is_qt_free.moc"
