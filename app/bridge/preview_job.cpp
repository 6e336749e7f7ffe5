#include "bridge/preview_job.h"

#include <QMetaObject>

#include <algorithm>
#include <exception>

namespace sluice::bridge {

PreviewJob::PreviewJob(QObject *parent) : QObject(parent) {}

PreviewJob::~PreviewJob()
{
    m_waiting.reset();
    if (m_worker.joinable())
        m_worker.join();
}

quint64 PreviewJob::request(const Project &project, const QString &node, int elements)
{
    const quint64 id = ++m_lastId;
    m_waiting = Request{project, node.toStdString(), std::max(1, elements), id};
    if (!m_worker.joinable())
        startNext();
    return id;
}

void PreviewJob::startNext()
{
    if (!m_waiting)
        return;
    Request next = std::move(*m_waiting);
    m_waiting.reset();
    ++m_taken;
    m_worker = std::thread([this, next = std::move(next)] {
        std::shared_ptr<Result<pipeline::StagePreview>> result;
        try {
            result = std::make_shared<Result<pipeline::StagePreview>>(pipeline::previewStage(next.project, next.node, std::size_t(next.elements)));
        } catch (const std::exception &e) {
            result = std::make_shared<Result<pipeline::StagePreview>>(Error::invalid("preview", e.what()));
        }
        // Runs in the owner's thread; the destructor joins this thread before `this` goes.
        QMetaObject::invokeMethod(this, [this, id = next.id, result] { finish(id, result); }, Qt::QueuedConnection);
    });
}

void PreviewJob::finish(quint64 id, std::shared_ptr<Result<pipeline::StagePreview>> result)
{
    if (m_worker.joinable())
        m_worker.join();
    if (id == m_lastId) { // else superseded by a newer request: dropped
        if (result->ok())
            Q_EMIT ready(id, result->value());
        else
            Q_EMIT failed(id, QString::fromStdString(result->error().message()));
    }
    startNext();
}

} // namespace sluice::bridge
