// The mapping's own promises, against what the kernel says: resident() is true only when every
// page of the range is in the page cache (a range with one page missing in its middle is not),
// the page size is the system's, and the pages a range touches are counted in it.
#include "io/storage/mapped_file.h"
#include "io/storage/page_cache.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <fstream>
#include <unistd.h>
#include <vector>

using namespace sluice;

class TestMappedFile : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void thePageSizeIsTheSystems()
    {
        QCOMPARE(MappedFile::pageSize(), std::size_t(sysconf(_SC_PAGESIZE)));
        const std::size_t page = MappedFile::pageSize();
        QCOMPARE(MappedFile::pagesSpanned(0, 0), std::size_t(0));
        QCOMPARE(MappedFile::pagesSpanned(0, 1), std::size_t(1));
        QCOMPARE(MappedFile::pagesSpanned(0, page), std::size_t(1));
        QCOMPARE(MappedFile::pagesSpanned(page - 1, 2), std::size_t(2));
        QCOMPARE(MappedFile::pagesSpanned(3, 2 * page), std::size_t(3));
        QCOMPARE(MappedFile::pagesSpanned(page, 2 * page), std::size_t(2));
    }

    // 300 pages (more than one mincore window), all cached but one in the middle.
    void aRangeWithOneMissingPageIsNotResident()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("pages.bin").toStdString();
        const std::size_t page = MappedFile::pageSize(), pages = 300, hole = 150;
        {
            std::ofstream out(path, std::ios::binary);
            const std::vector<char> bytes(page * pages, 'x');
            out.write(bytes.data(), std::streamsize(bytes.size()));
        }
        // The file dropped from the page cache, then every page but the hole read back, without
        // read-ahead (which would bring the hole in with its neighbours).
        auto evicted = evictFromPageCache(path);
        QVERIFY(evicted.ok());
        if (*evicted > 0.5)
            QSKIP("this file system keeps files in memory (tmpfs): no page can be missing");
        const int fd = ::open(path.c_str(), O_RDONLY);
        QVERIFY(fd >= 0);
        QCOMPARE(::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
        std::vector<char> buffer(page);
        for (std::size_t p = 0; p < pages; ++p)
            if (p != hole)
                QCOMPARE(::pread(fd, buffer.data(), page, off_t(p * page)), ssize_t(page));
        ::close(fd);

        auto file = MappedFile::open(path);
        QVERIFY(file.ok());
        const auto &mapped = **file;
        if (mapped.resident(hole * page, 1))
            QSKIP("the kernel read the hole in with its neighbours: this test needs a file system that honours POSIX_FADV_RANDOM");
        QVERIFY(mapped.resident(0, page));
        QVERIFY(mapped.resident((pages - 1) * page, page));
        QVERIFY(mapped.resident(0, hole * page)); // everything before the hole
        QVERIFY(mapped.resident((hole + 1) * page, (pages - hole - 1) * page));
        QVERIFY(!mapped.resident(hole * page, 1));
        QVERIFY2(!mapped.resident(0, pages * page), "the whole file counts as resident while a page in its middle is not");
        QVERIFY(!mapped.resident(page / 2, pages * page - page)); // from inside the first page to inside the last
        QVERIFY(!mapped.resident(pages * page, 1));               // past the end: nothing there
    }
};

QTEST_MAIN(TestMappedFile)
#include "tst_mapped_file.moc"
