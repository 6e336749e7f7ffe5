#pragma once
// The training tab: the project's "training" object in sections (run, distribution and batch,
// optimizer, learning-rate schedule, checkpoints, validation, weighting), each a parameter form
// over the object or one of its members. An edit changes exactly the key it is about; every key
// the forms do not show is carried over untouched.
//
// Threading: a widget; GUI thread only.

#include "inspector/param_spec.h"

#include <QJsonObject>
#include <QWidget>

class QLabel;

namespace sluice::widgets {

class ParamForm;

class TrainingEditor : public QWidget
{
    Q_OBJECT
public:
    explicit TrainingEditor(QWidget *parent = nullptr);

    void setTraining(const QJsonObject &training);
    void setContext(const ParamContext &context);
    void setBatchSize(int globalBatchSize); // <= 0: the pipeline has no batch stage
    const QJsonObject &training() const { return m_training; }
    // A check's message for the key at `path` ({"epochs"}, {"optimizer", "learning_rate",
    // "decay_steps"}), shown in a banner and next to that key's editor; empty `reason` clears.
    void showError(const QStringList &path, const QString &reason);
    QLabel *errorLabel() const { return m_error; }

    ParamForm *runForm() const { return m_run; }
    ParamForm *distributionForm() const { return m_distribution; }
    ParamForm *batchForm() const { return m_batch; }
    ParamForm *optimizerForm() const { return m_optimizer; }
    ParamForm *scheduleForm() const { return m_schedule; }
    ParamForm *checkpointForm() const { return m_checkpoint; }
    ParamForm *validationForm() const { return m_validation; }
    ParamForm *weightingForm() const { return m_weighting; }

Q_SIGNALS:
    void trainingEdited(const QJsonObject &training);
    void batchSizeEdited(int globalBatchSize);

private:
    void refresh();
    void emitEdited();
    void editTopLevel(const QString &key, const QJsonValue &value);
    void editMember(const QString &member, const QString &key, const QJsonValue &value);
    void editOptimizer(const QString &key, const QJsonValue &value);
    void editSchedule(const QString &key, const QJsonValue &value);
    QJsonObject optimizerObject() const;  // "adam" reads as {"type": "adam"}
    QString optimizerType() const;
    QJsonObject scheduleView() const;     // the learning rate as the schedule form shows it

    QJsonObject m_training;
    ParamContext m_context;
    int m_batchSize = 0;
    QLabel *m_error;
    ParamForm *m_run, *m_distribution, *m_batch, *m_optimizer, *m_schedule, *m_checkpoint, *m_validation, *m_weighting;
};

} // namespace sluice::widgets
