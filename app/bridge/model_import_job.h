#pragma once
// The workbench's File ▸ Import Keras Model: importKerasModel (bridge/model_import.h) off the GUI
// thread, its outcome handed back as a signal for the window to apply as one undoable edit.
//
// Threading contract: start(), isRunning(), the destructor and the signals belong to the owner's
// (GUI) thread. One import at a time runs on its own std::thread; the destructor joins it.

#include "project/project.h"

#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QStringList>

#include <thread>

namespace sluice::bridge {

class ModelImportJob : public QObject
{
    Q_OBJECT
public:
    explicit ModelImportJob(QObject *parent = nullptr);
    ~ModelImportJob() override;

    // False (and nothing started) while another import runs.
    bool start(const Project &project, const QString &modelFile, const QString &weightsH5, bool replace);
    bool isRunning() const { return m_thread.joinable(); }

Q_SIGNALS:
    // `model`: the project's new model section; `initialWeights`: the .npz written beside the
    // project (relative; empty without weights); `summary`: "6 layers, 9 weights (93 floats)".
    void finished(const QJsonObject &model, const QString &initialWeights, const QStringList &notes, const QString &summary);
    void failed(const QString &message);

private:
    std::thread m_thread;
};

} // namespace sluice::bridge
