#include "bridge/advice_trial_job.h"

#include <QJsonDocument>
#include <QMetaObject>

#include <exception>

namespace sluice::bridge {

AdviceTrialJob::AdviceTrialJob(QObject *parent) : QObject(parent) {}

AdviceTrialJob::~AdviceTrialJob()
{
    m_cancel = true;
    if (m_thread.joinable())
        m_thread.join();
}

bool AdviceTrialJob::start(const Project &project, const pipeline::PipelineOptions &options, const pipeline::AdviceChange &change,
                           double secondsEach, int rounds)
{
    if (isRunning())
        return false;
    m_cancel = false;
    m_thread = std::thread([this, project, options, change, secondsEach, rounds] {
        std::shared_ptr<Result<pipeline::AdviceTrial>> result;
        try {
            result = std::make_shared<Result<pipeline::AdviceTrial>>(pipeline::tryAdvice(project, options, change, secondsEach, rounds, &m_cancel));
        } catch (const std::exception &e) { // out of memory in a pipeline: a failed trial, not a crash
            result = std::make_shared<Result<pipeline::AdviceTrial>>(Error::io("trial", e.what()));
        }
        // Runs in the owner's thread; the destructor joins this thread before `this` goes.
        QMetaObject::invokeMethod(this, [this, result, change] { deliver(result, change); }, Qt::QueuedConnection);
    });
    return true;
}

void AdviceTrialJob::cancel() { m_cancel = true; }

void AdviceTrialJob::deliver(std::shared_ptr<Result<pipeline::AdviceTrial>> result, const pipeline::AdviceChange &change)
{
    if (m_thread.joinable())
        m_thread.join();
    auto toQt = [](const nlohmann::json &j) { return QJsonDocument::fromJson(QByteArray::fromStdString(j.dump())).object(); };
    if (!result->ok()) {
        Q_EMIT failed(toQt(change.toJson()), QString::fromStdString(result->error().message()));
        return;
    }
    const pipeline::AdviceTrial &trial = result->value();
    Q_EMIT finished(toQt(change.toJson()), QString::fromStdString(trial.summary()), toQt(trial.toJson()), trial.helps);
}

} // namespace sluice::bridge
