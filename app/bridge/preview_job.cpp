#include "bridge/preview_job.h"

#include <QMetaObject>

#include <algorithm>
#include <exception>

namespace sluice::bridge {

PreviewJob::PreviewJob(QObject *parent) : QObject(parent) {}

PreviewJob::~PreviewJob()
{
    for (std::thread &t : m_threads)
        if (t.joinable())
            t.join();
}

quint64 PreviewJob::request(const Project &project, const QString &node, int elements)
{
    const quint64 id = ++m_lastId;
    ++m_running;
    m_threads.emplace_back([this, project, node = node.toStdString(), elements, id] {
        std::shared_ptr<Result<pipeline::StagePreview>> result;
        try {
            result = std::make_shared<Result<pipeline::StagePreview>>(pipeline::previewStage(project, node, std::size_t(std::max(1, elements))));
        } catch (const std::exception &e) {
            result = std::make_shared<Result<pipeline::StagePreview>>(Error::invalid("preview", e.what()));
        }
        const std::thread::id self = std::this_thread::get_id();
        // Runs in the owner's thread; the destructor joins this thread before `this` goes.
        QMetaObject::invokeMethod(this, [this, id, self, result] { deliver(id, self, result); }, Qt::QueuedConnection);
    });
    return id;
}

void PreviewJob::deliver(quint64 id, std::thread::id thread, std::shared_ptr<Result<pipeline::StagePreview>> result)
{
    auto it = std::find_if(m_threads.begin(), m_threads.end(), [&](const std::thread &t) { return t.get_id() == thread; });
    if (it != m_threads.end()) {
        it->join();
        m_threads.erase(it);
    }
    --m_running;
    if (id != m_lastId)
        return; // superseded by a newer request
    if (result->ok())
        Q_EMIT ready(id, result->value());
    else
        Q_EMIT failed(id, QString::fromStdString(result->error().message()));
}

} // namespace sluice::bridge
