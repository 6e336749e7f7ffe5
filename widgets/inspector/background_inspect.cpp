#include "inspector/background_inspect.h"

#include "io/array_report.h"

#include <QThread>

#include <memory>

namespace sluice::widgets {

void inspectInBackground(QObject *receiver, const QString &path, InspectDone done)
{
    struct Outcome
    {
        nlohmann::json report = nlohmann::json::object();
        QString error;
    };
    auto outcome = std::make_shared<Outcome>();
    QThread *thread = QThread::create([outcome, file = path.toStdString()] {
        auto report = inspectFile(file, InspectOptions{});
        if (report)
            outcome->report = std::move(*report);
        else
            outcome->error = QString::fromStdString(report.error().message());
    });
    // Queued into the receiver's thread; dropped with the receiver (the connection goes with it).
    QObject::connect(thread, &QThread::finished, receiver, [outcome, done = std::move(done)] { done(outcome->report, outcome->error); });
    QObject::connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

} // namespace sluice::widgets
