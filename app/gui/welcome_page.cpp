#include "gui/welcome_page.h"

#include "gui/recent_projects.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QFile>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace sluice::gui {

namespace {

QString description(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("description")).toString();
}

// The first sentence-ish of a description: cut at a word boundary, with an ellipsis.
QString brief(const QString &text, int limit = 160)
{
    if (text.size() <= limit)
        return text;
    const int space = text.lastIndexOf(QLatin1Char(' '), limit);
    return text.left(space > limit / 2 ? space : limit) + QStringLiteral("…");
}

QListWidget *projectList(QWidget *parent)
{
    auto *list = new QListWidget(parent);
    list->setWordWrap(true);
    list->setAlternatingRowColors(true);
    list->setSpacing(2);
    return list;
}

} // namespace

QString WelcomePage::examplesFolder()
{
    const QString fromEnv = qEnvironmentVariable("SLUICE_EXAMPLES_DIR");
    if (!fromEnv.isEmpty() && QFileInfo(fromEnv).isDir())
        return fromEnv;
    const QDir exe(QCoreApplication::applicationDirPath());
    for (const QString &candidate : {exe.filePath(QStringLiteral("../share/sluice/projects")), QStringLiteral(SLUICE_SOURCE_PROJECTS_DIR)})
        if (QFileInfo(candidate).isDir())
            return QFileInfo(candidate).canonicalFilePath();
    return {};
}

WelcomePage::WelcomePage(QWidget *parent) : QWidget(parent)
{
    auto *title = new QLabel(tr("<h1>Sluice</h1><p>Build an input pipeline on the canvas, see which stage holds it back, "
                                "and train a model mirrored over every device.</p>"),
                             this);
    title->setWordWrap(true);
    auto *newButton = new QPushButton(tr("New Project"), this);
    auto *openButton = new QPushButton(tr("Open…"), this);
    newButton->setToolTip(tr("An empty project: drag stages from the palette or drop data files on the canvas (Ctrl+N)"));
    openButton->setToolTip(tr("Open a .sluice project file (Ctrl+O)"));
    connect(newButton, &QPushButton::clicked, this, &WelcomePage::newProjectRequested);
    connect(openButton, &QPushButton::clicked, this, &WelcomePage::openRequested);

    m_examples = projectList(this);
    m_recent = projectList(this);
    connect(m_examples, &QListWidget::itemActivated, this, [this](QListWidgetItem *item) { Q_EMIT openExampleRequested(item->data(Qt::UserRole).toString()); });
    connect(m_recent, &QListWidget::itemActivated, this, [this](QListWidgetItem *item) { Q_EMIT openPathRequested(item->data(Qt::UserRole).toString()); });

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(newButton);
    buttons->addWidget(openButton);
    buttons->addStretch();
    auto *lists = new QHBoxLayout;
    auto *left = new QVBoxLayout;
    left->addWidget(new QLabel(tr("<b>Example projects</b>"), this));
    left->addWidget(m_examples);
    auto *right = new QVBoxLayout;
    right->addWidget(new QLabel(tr("<b>Recent projects</b>"), this));
    right->addWidget(m_recent);
    lists->addLayout(left, 3);
    lists->addLayout(right, 2);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(32, 24, 32, 24);
    layout->addWidget(title);
    layout->addLayout(buttons);
    layout->addSpacing(12);
    layout->addLayout(lists, 1);
    refresh();
}

void WelcomePage::refresh()
{
    m_examples->clear();
    const QString folder = examplesFolder();
    if (!folder.isEmpty()) {
        for (const QFileInfo &info : QDir(folder).entryInfoList({QStringLiteral("*.sluice")}, QDir::Files, QDir::Name)) {
            const QString about = description(info.absoluteFilePath());
            auto *item = new QListWidgetItem(QStringLiteral("%1\n%2").arg(info.completeBaseName(), brief(about)), m_examples);
            item->setData(Qt::UserRole, info.absoluteFilePath());
            item->setToolTip(about);
        }
    }
    m_recent->clear();
    for (const QString &path : RecentProjects::list()) {
        auto *item = new QListWidgetItem(QStringLiteral("%1\n%2").arg(QFileInfo(path).completeBaseName(), QFileInfo(path).absolutePath()), m_recent);
        item->setData(Qt::UserRole, path);
        item->setToolTip(path);
    }
}

} // namespace sluice::gui
