#include "gui/user_guide.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QSplitter>
#include <QTextBrowser>

namespace sluice::gui {

namespace {

// Users' guides first, in the order a new user reads them; the design notes last.
const QStringList kOrder{QStringLiteral("getting-started.md"), QStringLiteral("from-tf-data.md"), QStringLiteral("pipeline-ops.md"),
                         QStringLiteral("training.md"),        QStringLiteral("profiling.md"),   QStringLiteral("python.md"),
                         QStringLiteral("models.md"),
                         QStringLiteral("reference.md"),       QStringLiteral("architecture.md")};

// The guide's first heading ("# Getting started" → "Getting started").
QString titleOf(const QString &path)
{
    QFile file(path);
    if (file.open(QIODevice::ReadOnly | QIODevice::Text))
        while (!file.atEnd()) {
            const QString line = QString::fromUtf8(file.readLine()).trimmed();
            if (line.startsWith(QLatin1String("# ")))
                return line.mid(2);
        }
    return QFileInfo(path).completeBaseName();
}

} // namespace

QString UserGuide::docsFolder()
{
    const QString fromEnv = qEnvironmentVariable("SLUICE_DOCS_DIR");
    if (!fromEnv.isEmpty() && QFileInfo(fromEnv + QStringLiteral("/getting-started.md")).isFile())
        return fromEnv;
    const QDir exe(QCoreApplication::applicationDirPath());
    for (const QString &candidate : {exe.filePath(QStringLiteral("../share/sluice/docs")), QStringLiteral(SLUICE_SOURCE_DOCS_DIR)})
        if (QFileInfo(candidate + QStringLiteral("/getting-started.md")).isFile())
            return QFileInfo(candidate).canonicalFilePath();
    return {};
}

UserGuide::UserGuide(QWidget *parent) : QDialog(parent)
{
    setObjectName(QStringLiteral("userGuide"));
    setWindowTitle(tr("Sluice User Guide"));
    m_guides = new QListWidget(this);
    m_guides->setObjectName(QStringLiteral("guideList"));
    m_browser = new QTextBrowser(this);
    m_browser->setObjectName(QStringLiteral("guideBrowser"));
    m_browser->setOpenExternalLinks(true); // http(s) links go to the browser; .md links stay here

    const QString folder = docsFolder();
    QStringList files = QDir(folder).entryList({QStringLiteral("*.md")}, QDir::Files, QDir::Name);
    std::stable_sort(files.begin(), files.end(), [](const QString &a, const QString &b) {
        const auto rank = [](const QString &f) { return kOrder.contains(f) ? kOrder.indexOf(f) : kOrder.size(); };
        return rank(a) < rank(b);
    });
    for (const QString &file : files) {
        auto *item = new QListWidgetItem(titleOf(QDir(folder).filePath(file)), m_guides);
        item->setData(Qt::UserRole, file);
    }
    m_browser->setSearchPaths({folder});
    connect(m_guides, &QListWidget::currentItemChanged, this, [this](QListWidgetItem *item) {
        if (item && item->data(Qt::UserRole).toString() != shownGuide())
            m_browser->setSource(QUrl::fromLocalFile(QDir(docsFolder()).filePath(item->data(Qt::UserRole).toString())),
                                 QTextDocument::MarkdownResource);
    });
    // A link followed inside the text selects its guide in the list. The signal's URL, not
    // source(): QTextBrowser records the new source in its history only after emitting it.
    connect(m_browser, &QTextBrowser::sourceChanged, this, [this](const QUrl &url) {
        const QString shown = QFileInfo(url.path()).fileName();
        for (int i = 0; i < m_guides->count(); ++i)
            if (m_guides->item(i)->data(Qt::UserRole).toString() == shown)
                m_guides->setCurrentRow(i);
    });

    auto *splitter = new QSplitter(this);
    splitter->addWidget(m_guides);
    splitter->addWidget(m_browser);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({200, 700});
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    if (folder.isEmpty()) {
        auto *missing = new QLabel(tr("The user guides are not installed with this copy of Sluice: they are the docs/ folder of its "
                                      "sources, and the packages install them in share/sluice/docs."),
                                   this);
        missing->setWordWrap(true);
        layout->addWidget(missing);
        splitter->hide();
    }
    layout->addWidget(splitter);
    resize(1000, 700);
    if (!folder.isEmpty())
        showGuide(QStringLiteral("getting-started.md"));
}

bool UserGuide::showGuide(const QString &fileName)
{
    for (int i = 0; i < m_guides->count(); ++i)
        if (m_guides->item(i)->data(Qt::UserRole).toString() == fileName) {
            m_guides->setCurrentRow(i);
            return true;
        }
    return false;
}

QString UserGuide::shownGuide() const { return QFileInfo(m_browser->source().path()).fileName(); }

} // namespace sluice::gui
