#include "bridge/model_export_job.h"

#include "bridge/model_export.h"

#include <QMetaObject>

#include <exception>
#include <memory>

namespace sluice::bridge {

ModelExportJob::ModelExportJob(QObject *parent) : QObject(parent) {}

ModelExportJob::~ModelExportJob()
{
    if (m_thread.joinable())
        m_thread.join();
}

bool ModelExportJob::start(const Project &project, const QString &weightsNpz, const QString &outFile, Format format)
{
    if (isRunning())
        return false;
    m_thread = std::thread([this, project, weights = weightsNpz.toStdString(), out = outFile.toStdString(), format] {
        std::shared_ptr<Result<ModelExport>> result;
        try {
            result = std::make_shared<Result<ModelExport>>(format == Format::Keras  ? exportKeras(project, weights, out)
                                                           : format == Format::Onnx ? exportOnnx(project, weights, out)
                                                                                    : exportSafetensors(project, weights, out));
        } catch (const std::exception &e) { // out of memory for the weights: a failed export, not a crash
            result = std::make_shared<Result<ModelExport>>(Error::failed("export", e.what()));
        }
        // Runs in the owner's thread; the destructor joins this thread before `this` goes.
        QMetaObject::invokeMethod(this, [this, result] {
            if (m_thread.joinable())
                m_thread.join();
            if (!result->ok())
                Q_EMIT failed(QString::fromStdString(result->error().message()));
            else
                Q_EMIT finished(QString::fromStdString(result->value().weightsFile), QString::fromStdString(result->value().modelPy));
        }, Qt::QueuedConnection);
    });
    return true;
}

} // namespace sluice::bridge
