// The packages users install, made from this build folder by scripts/package.sh: the .deb
// (what it holds, what it depends on, its binary run from a scratch root, its man page and
// desktop entry) and the relocatable .tar.gz (nothing but glibc taken from the machine, and
// `inspect` and a profiled `run` working from an unpacked copy with an environment stripped
// of the build's library paths).
#include "support/reference.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Result
{
    int exitCode = -1;
    QString out, err;
};

Result run(const QString &program, const QStringList &args, const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    Result r;
    if (!p.waitForFinished(15 * 60 * 1000) || p.exitStatus() != QProcess::NormalExit)
        return r;
    r.exitCode = p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// The header and rows of a float32 (rows, 4) .npy, numpy's version 1.0 layout.
QByteArray npy(int rows)
{
    QByteArray header = QStringLiteral("{'descr': '<f4', 'fortran_order': False, 'shape': (%1, 4), }").arg(rows).toLatin1();
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    QByteArray bytes("\x93NUMPY\x01\x00", 8);
    bytes += char(header.size() & 0xff);
    bytes += char(header.size() >> 8);
    bytes += header;
    for (int i = 0; i < rows * 4; ++i) {
        const float v = float(i) * 0.5f;
        bytes.append(reinterpret_cast<const char *>(&v), sizeof v);
    }
    return bytes;
}

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

} // namespace

class TestPackages : public QObject
{
    Q_OBJECT

    QTemporaryDir m_work;
    QString m_deb, m_tgz, m_debRoot, m_tgzRoot;

    // What a user's shell has: no LD_LIBRARY_PATH, no Qt variables (env -i PATH=/usr/bin:/bin HOME=...).
    // The sanitizer options pass through: CI packages its sanitizer build, and they name no library.
    QProcessEnvironment strippedEnvironment() const
    {
        QProcessEnvironment env;
        env.insert("PATH", "/usr/bin:/bin");
        env.insert("HOME", m_work.filePath("home"));
        for (const char *name : {"ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"})
            if (qEnvironmentVariableIsSet(name))
                env.insert(name, qEnvironmentVariable(name));
        return env;
    }

    QString tgzSluice() const { return m_tgzRoot + "/bin/sluice"; }

private Q_SLOTS:
    void initTestCase()
    {
        QStringList missing;
        for (const char *tool : {"cpack", "dpkg-deb", "dpkg-shlibdeps", "patchelf", "ldd", "tar"})
            if (QStandardPaths::findExecutable(tool).isEmpty())
                missing << tool;
        if (!missing.isEmpty())
            SLUICE_REFERENCE_MISSING(qPrintable("cannot build the packages without " + missing.join(", ") + " (scripts/setup-debian.sh installs them)"));
        QVERIFY(m_work.isValid());
        QVERIFY(QDir().mkpath(m_work.filePath("home")));

        const Result r = run("bash", {SLUICE_SOURCE_DIR "/scripts/package.sh", SLUICE_BUILD_DIR, m_work.filePath("packages")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        for (const QString &line : r.out.split('\n', Qt::SkipEmptyParts)) {
            if (line.endsWith(".deb"))
                m_deb = line;
            if (line.endsWith(".tar.gz"))
                m_tgz = line;
        }
        QVERIFY2(QFileInfo(m_deb).isFile() && QFileInfo(m_tgz).isFile(), qPrintable("package.sh printed: " + r.out));

        m_debRoot = m_work.filePath("deb-root");
        QCOMPARE(run("dpkg-deb", {"-x", m_deb, m_debRoot}).exitCode, 0);
        const QString unpacked = m_work.filePath("anywhere");
        QVERIFY(QDir().mkpath(unpacked));
        QCOMPARE(run("tar", {"-xzf", m_tgz, "-C", unpacked}).exitCode, 0);
        const QStringList top = QDir(unpacked).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        QCOMPARE(top.size(), 1); // one folder, named after the version, to move anywhere
        m_tgzRoot = unpacked + "/" + top[0];
    }

    void debHoldsTheDesktopIntegration()
    {
        const QString usr = m_debRoot + "/usr";
        QStringList expected{"bin/sluice", "share/applications/sluice.desktop", "share/mime/packages/sluice.xml",
                             "share/icons/hicolor/scalable/apps/sluice.svg", "share/man/man1/sluice.1.gz",
                             "share/sluice/projects/README.md", "share/sluice/docs/getting-started.md",
                             "share/sluice/docs/images/workbench-1280x800-light.png"};
        for (int size : {16, 22, 24, 32, 48, 64, 128, 256})
            expected << QStringLiteral("share/icons/hicolor/%1x%1/apps/sluice.png").arg(size);
        for (const QString &file : expected)
            QVERIFY2(QFileInfo(usr + "/" + file).isFile(), qPrintable(file + " is not in the .deb"));
        QVERIFY(!QDir(usr + "/share/sluice/projects").entryList({"*.sluice"}).isEmpty());
        // The examples are project files only: their data is generated next to a copy.
        QVERIFY(!QFileInfo::exists(usr + "/share/sluice/projects/data"));
    }

    void debDeclaresItsDependencies()
    {
        const Result r = run("dpkg-deb", {"-f", m_deb, "Depends"});
        QCOMPARE(r.exitCode, 0);
        for (const char *package : {"libqt6core6", "libqt6widgets6", "libqt6svg6", "libtbb12", "libopenblas0", "libc6"})
            QVERIFY2(r.out.contains(package), qPrintable(QString(package) + " missing from Depends: " + r.out));
    }

    void debBinaryReportsVersionAndFeatures()
    {
        const Result r = run(m_debRoot + "/usr/bin/sluice", {"--version"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.startsWith("sluice " SLUICE_VERSION " (commit "), qPrintable(r.out));
        for (const char *line : {"\nCUDA: ", "\nNCCL: ", "\nMPI: ", "\nBLAS: "})
            QVERIFY2(r.out.contains(line), qPrintable(r.out));
    }

    void manPageHasEveryCommand()
    {
        const Result page = run("gzip", {"-dc", m_debRoot + "/usr/share/man/man1/sluice.1.gz"});
        QCOMPARE(page.exitCode, 0);
        QVERIFY(page.out.startsWith(".TH SLUICE 1"));
        for (const char *command : {"inspect", "gen", "run", "preview", "ops", "bench read", "bench pipeline", "bench train"})
            QVERIFY2(page.out.contains(QStringLiteral(".SS \"sluice %1\"").arg(command)), command);
        QVERIFY(page.out.contains("\\-\\-profile")); // an option of run, as roff writes it
        QVERIFY2(!page.out.contains(SLUICE_BUILD_DIR), "the man page names the build folder");
    }

    void desktopEntryIsValid()
    {
        const QString validate = QStandardPaths::findExecutable("desktop-file-validate");
        if (validate.isEmpty())
            SLUICE_REFERENCE_MISSING("desktop-file-validate is not installed (Debian desktop-file-utils; scripts/setup-debian.sh installs it)");
        const Result r = run(validate, {m_debRoot + "/usr/share/applications/sluice.desktop"});
        QVERIFY2(r.exitCode == 0 && r.out.isEmpty() && r.err.isEmpty(), qPrintable(r.out + r.err));
        // .sluice files open in Sluice: the entry handles the type the MIME package defines.
        QFile mime(m_debRoot + "/usr/share/mime/packages/sluice.xml");
        QVERIFY(mime.open(QIODevice::ReadOnly));
        QVERIFY(mime.readAll().contains("<mime-type type=\"application/x-sluice-project\">"));
        QFile entry(m_debRoot + "/usr/share/applications/sluice.desktop");
        QVERIFY(entry.open(QIODevice::ReadOnly));
        QVERIFY(entry.readAll().contains("MimeType=application/x-sluice-project;"));
    }

    // Every file's libraries resolve inside the package, except glibc's own: what lets it run on
    // another distribution with no Qt, oneTBB or OpenBLAS installed.
    void tgzTakesOnlyGlibcFromTheMachine()
    {
        QStringList files{tgzSluice()};
        for (const QFileInfo &f : QDir(m_tgzRoot + "/lib").entryInfoList(QDir::Files))
            files << f.filePath();
        for (const QString &category : QDir(m_tgzRoot + "/plugins").entryList(QDir::Dirs | QDir::NoDotAndDotDot))
            for (const QFileInfo &f : QDir(m_tgzRoot + "/plugins/" + category).entryInfoList({"*.so"}, QDir::Files))
                files << f.filePath();
        for (const QFileInfo &f : QDir(m_tgzRoot + "/lib/python3/dist-packages/sluice").entryInfoList({"*.so"}, QDir::Files))
            files << f.filePath();
        QVERIFY(files.size() > 20);
        QVERIFY(QFileInfo::exists(m_tgzRoot + "/plugins/platforms/libqoffscreen.so"));
        QVERIFY(QFileInfo::exists(m_tgzRoot + "/plugins/platforms/libqxcb.so"));
        QVERIFY(QFileInfo::exists(m_tgzRoot + "/bin/qt.conf"));
        const QRegularExpression glibc("^(linux-vdso|ld-linux|libc|libm|libmvec|libpthread|libdl|librt|libutil|libresolv)[.-]");
        const QRegularExpression resolved("^\\s*(\\S+) => (.*) \\(0x");
        for (const QString &file : files) {
            const Result r = run("ldd", {file}, strippedEnvironment());
            QVERIFY2(r.exitCode == 0, qPrintable(file + ": " + r.err));
            for (const QString &line : r.out.split('\n', Qt::SkipEmptyParts)) {
                QVERIFY2(!line.contains("not found"), qPrintable(file + ": " + line));
                const auto m = resolved.match(line);
                if (m.hasMatch() && !m.captured(2).startsWith(m_tgzRoot + "/"))
                    QVERIFY2(glibc.match(m.captured(1)).hasMatch(), qPrintable(file + " takes from the machine: " + line));
            }
        }
    }

    // Nothing in the package asks for a glibc newer than Debian 12's 2.36.
    void tgzNeedsNoGlibcAfter2_36()
    {
        const QString objdump = QStandardPaths::findExecutable("objdump");
        if (objdump.isEmpty())
            SLUICE_REFERENCE_MISSING("objdump is not installed (Debian binutils)");
        QStringList files{tgzSluice()};
        for (const QFileInfo &f : QDir(m_tgzRoot + "/lib").entryInfoList(QDir::Files))
            files << f.filePath();
        const QRegularExpression version("GLIBC_2\\.(\\d+)");
        for (const QString &file : files) {
            const Result r = run(objdump, {"-T", file});
            QCOMPARE(r.exitCode, 0);
            for (auto it = version.globalMatch(r.out); it.hasNext();) {
                const int minor = it.next().captured(1).toInt();
                QVERIFY2(minor <= 36, qPrintable(file + " needs GLIBC_2." + QString::number(minor)));
            }
        }
    }

    // `import sluice` from both packages: Debian's dist-packages in the .deb, and the relocatable
    // one's lib/python3/dist-packages, whose extension module finds its libraries in the package.
    void pythonPackageShipsInBoth()
    {
#ifndef SLUICE_PYTHON
        SLUICE_REFERENCE_MISSING("this build has no Python package (SLUICE_WITH_PYTHON)");
#else
        for (const QString &dir : {m_debRoot + "/usr/lib/python3/dist-packages/sluice", m_tgzRoot + "/lib/python3/dist-packages/sluice"}) {
            for (const char *file : {"__init__.py", "torch.py", "tf.py"})
                QVERIFY2(QFileInfo::exists(dir + "/" + file), qPrintable(dir + "/" + file));
            QCOMPARE(QDir(dir).entryList({"_sluice*.so"}, QDir::Files).size(), 1);
        }
        QProcessEnvironment env = strippedEnvironment();
        env.insert("PYTHONPATH", m_tgzRoot + "/lib/python3/dist-packages");
        env.insert("PYTHONDONTWRITEBYTECODE", "1");
        if (const QString preload = SLUICE_PYTHON_PRELOAD; !preload.isEmpty()) { // an instrumented module
            env.insert("LD_PRELOAD", preload);
            env.insert("ASAN_OPTIONS", "detect_leaks=0");
        }
        const Result r = run(SLUICE_PYTHON, {"-c", "import sluice; print(sluice.__file__); "
                                                   "print([int(b['value'].sum()) for b in sluice.range(stop=10).batch(5)])"},
                             env);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.startsWith(m_tgzRoot + "/lib/python3/dist-packages/sluice/__init__.py"), qPrintable(r.out));
        QVERIFY2(r.out.contains("[10, 35]"), qPrintable(r.out));
#endif
    }

    void tgzInspectsAndRunsFromAnywhere()
    {
        const QString data = m_work.filePath("data");
        QVERIFY(QDir().mkpath(data));
        QVERIFY(writeFile(data + "/x.npy", npy(256)));
        const Result inspect = run(tgzSluice(), {"inspect", data + "/x.npy"}, strippedEnvironment());
        QVERIFY2(inspect.exitCode == 0, qPrintable(inspect.err));
        QVERIFY2(inspect.out.contains("(256, 4)"), qPrintable(inspect.out));

        const QByteArray project = R"({"format": "sluice-project", "version": 1, "name": "tiny",
            "pipeline": {"nodes": [{"id": "src", "op": "from_npy", "params": {"features": {"x": "x.npy"}}},
                                   {"id": "batch", "op": "batch", "params": {"batch_size": 32}},
                                   {"id": "prefetch", "op": "prefetch", "params": {"buffer_size": "AUTOTUNE"}}],
                         "edges": [["src", "batch"], ["batch", "prefetch"]]}})";
        QVERIFY(writeFile(data + "/tiny.sluice", project));
        const Result r = run(tgzSluice(), {"run", data + "/tiny.sluice", "--profile", "--seconds", "1", "--threads", "2"},
                             strippedEnvironment());
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains("bottleneck: "), qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(TestPackages)
#include "tst_packages.moc"
