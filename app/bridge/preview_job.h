#pragma once
// Previews a stage off the GUI thread: builds the project's pipeline up to a node, takes its
// first elements (pipeline::previewStage) and hands the table back as a signal.
//
// Threading contract: request(), the destructor and the signals belong to the owner's (GUI)
// thread. One worker std::thread runs one preview at a time; a request made while it works
// replaces any waiting one, so however fast the user clicks there is at most one preview
// running and one waiting, and only the newest request's result is emitted (docs/architecture.md, stale
// results). The destructor waits for the preview being taken and drops the waiting one.

#include "pipeline/engine/preview.h"

#include <QObject>
#include <QString>

#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace sluice::bridge {

class PreviewJob : public QObject
{
    Q_OBJECT
public:
    explicit PreviewJob(QObject *parent = nullptr);
    ~PreviewJob() override;

    // Asks for a preview of `node`; returns its id (ids grow from 1).
    quint64 request(const Project &project, const QString &node, int elements);
    bool isBusy() const { return m_worker.joinable() || m_waiting.has_value(); }
    // Previews actually taken since construction (superseded waiting requests are not).
    int previewsTaken() const { return m_taken; }

Q_SIGNALS:
    void ready(quint64 id, const sluice::pipeline::StagePreview &preview);
    void failed(quint64 id, const QString &message);

private:
    struct Request
    {
        Project project;
        std::string node;
        int elements = 1;
        quint64 id = 0;
    };
    void startNext();
    void finish(quint64 id, std::shared_ptr<Result<pipeline::StagePreview>> result);

    std::thread m_worker;
    std::optional<Request> m_waiting;
    quint64 m_lastId = 0;
    int m_taken = 0;
};

} // namespace sluice::bridge
