#pragma once
// The workbench's Run ▸ Export Model: exportSafetensors (bridge/model_export.h) off the GUI
// thread, its outcome handed back as a signal.
//
// Threading contract: start(), isRunning(), the destructor and the signals belong to the owner's
// (GUI) thread. One export at a time runs on its own std::thread; the destructor joins it (an
// export is short: a pipeline built without reading, a model, two files written).

#include "project/project.h"

#include <QObject>
#include <QString>

#include <thread>

namespace sluice::bridge {

class ModelExportJob : public QObject
{
    Q_OBJECT
public:
    explicit ModelExportJob(QObject *parent = nullptr);
    ~ModelExportJob() override;

    enum class Format { Safetensors, Keras, Onnx };
    // Exports the model of `project` with the weights of `weightsNpz` to `outFile` (safetensors:
    // model.py beside it). False (and nothing started) while another export runs.
    bool start(const Project &project, const QString &weightsNpz, const QString &outFile, Format format = Format::Safetensors);
    bool isRunning() const { return m_thread.joinable(); }

Q_SIGNALS:
    void finished(const QString &weightsFile, const QString &modelPy); // modelPy: empty for a .keras archive
    void failed(const QString &message);

private:
    std::thread m_thread;
};

} // namespace sluice::bridge
