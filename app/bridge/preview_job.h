#pragma once
// Previews a stage off the GUI thread: builds the project's pipeline up to a node, takes its
// first elements (pipeline::previewStage) and hands the table back as a signal.
//
// Threading contract: request(), the destructor and the signals belong to the owner's (GUI)
// thread. Each request runs on its own std::thread; a newer request supersedes older ones,
// whose results are dropped (style.md, stale results). The destructor joins every thread,
// waiting for elements being taken.

#include "pipeline/preview.h"

#include <QObject>
#include <QString>

#include <memory>
#include <thread>
#include <vector>

namespace sluice::bridge {

class PreviewJob : public QObject
{
    Q_OBJECT
public:
    explicit PreviewJob(QObject *parent = nullptr);
    ~PreviewJob() override;

    // Starts a preview of `node`; returns its id (ids grow from 1).
    quint64 request(const Project &project, const QString &node, int elements);
    bool isBusy() const { return m_running > 0; }

Q_SIGNALS:
    void ready(quint64 id, const sluice::pipeline::StagePreview &preview);
    void failed(quint64 id, const QString &message);

private:
    void deliver(quint64 id, std::thread::id thread, std::shared_ptr<Result<pipeline::StagePreview>> result);

    std::vector<std::thread> m_threads;
    quint64 m_lastId = 0;
    int m_running = 0;
};

} // namespace sluice::bridge
