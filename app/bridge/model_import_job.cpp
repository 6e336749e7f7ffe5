#include "bridge/model_import_job.h"

#include "bridge/model_import.h"

#include <QJsonDocument>
#include <QMetaObject>

#include <exception>
#include <memory>

namespace sluice::bridge {

ModelImportJob::ModelImportJob(QObject *parent) : QObject(parent) {}

ModelImportJob::~ModelImportJob()
{
    if (m_thread.joinable())
        m_thread.join();
}

bool ModelImportJob::start(const Project &project, const QString &modelFile, const QString &weightsH5, bool replace)
{
    if (isRunning())
        return false;
    m_thread = std::thread([this, project, model = modelFile.toStdString(), weights = weightsH5.toStdString(), replace] {
        std::shared_ptr<Result<ModelImport>> result;
        try {
            result = std::make_shared<Result<ModelImport>>(importKerasModel(project, model, weights, replace));
        } catch (const std::exception &e) { // out of memory for the weights: a failed import, not a crash
            result = std::make_shared<Result<ModelImport>>(Error::failed(model, e.what()));
        }
        // Runs in the owner's thread; the destructor joins this thread before `this` goes.
        QMetaObject::invokeMethod(this, [this, result] {
            if (m_thread.joinable())
                m_thread.join();
            if (!result->ok()) {
                Q_EMIT failed(QString::fromStdString(result->error().message()));
                return;
            }
            const ModelImport &done = result->value();
            QStringList notes;
            for (const auto &n : done.notes)
                notes << QString::fromStdString(n);
            const QJsonObject modelJson = QJsonDocument::fromJson(QByteArray::fromStdString(done.model.dump())).object();
            Q_EMIT finished(modelJson, QString::fromStdString(done.initialWeights), notes,
                            tr("%1 layers, %2 weights (%3 floats)").arg(done.layers).arg(done.arrays).arg(done.floats));
        }, Qt::QueuedConnection);
    });
    return true;
}

} // namespace sluice::bridge
