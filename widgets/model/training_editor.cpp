// The training sections. The optimizer may be a bare name ("adam") and the learning rate a bare
// number; both are widened to objects only when an edit needs it, so an untouched project keeps
// its spelling.
#include "model/training_editor.h"

#include "inspector/param_form.h"
#include "model/model_specs.h"

#include <QGroupBox>
#include <QJsonArray>
#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

namespace sluice::widgets {
namespace {

const QString kOptimizer = QStringLiteral("optimizer");
const QString kLearningRate = QStringLiteral("learning_rate");
const QString kType = QStringLiteral("type");

void setOrRemove(QJsonObject &object, const QString &key, const QJsonValue &value)
{
    if (value.isUndefined())
        object.remove(key);
    else
        object.insert(key, value);
}

} // namespace

TrainingEditor::TrainingEditor(QWidget *parent)
    : QWidget(parent), m_error(new QLabel), m_run(new ParamForm), m_distribution(new ParamForm), m_batch(new ParamForm), m_optimizer(new ParamForm),
      m_schedule(new ParamForm), m_checkpoint(new ParamForm), m_validation(new ParamForm), m_weighting(new ParamForm)
{
    auto *page = new QWidget;
    auto *layout = new QVBoxLayout(page);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #d9363e;"));
    m_error->hide();
    layout->addWidget(m_error);
    auto section = [&](const QString &title, std::initializer_list<ParamForm *> forms) {
        auto *box = new QGroupBox(title);
        auto *inner = new QVBoxLayout(box);
        for (ParamForm *f : forms)
            inner->addWidget(f);
        layout->addWidget(box);
    };
    section(tr("Run"), {m_run});
    section(tr("Distribution"), {m_distribution, m_batch});
    section(tr("Optimizer"), {m_optimizer});
    section(tr("Learning rate"), {m_schedule});
    section(tr("Checkpoints"), {m_checkpoint});
    section(tr("Validation"), {m_validation});
    section(tr("Weighting"), {m_weighting});
    layout->addStretch(1);
    auto *scroll = new QScrollArea;
    scroll->setWidget(page);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(scroll);

    connect(m_run, &ParamForm::edited, this, &TrainingEditor::editTopLevel);
    connect(m_distribution, &ParamForm::edited, this, &TrainingEditor::editTopLevel);
    connect(m_weighting, &ParamForm::edited, this, &TrainingEditor::editTopLevel);
    connect(m_optimizer, &ParamForm::edited, this, &TrainingEditor::editOptimizer);
    connect(m_schedule, &ParamForm::edited, this, &TrainingEditor::editSchedule);
    connect(m_checkpoint, &ParamForm::edited, this, [this](const QString &k, const QJsonValue &v) { editMember(QStringLiteral("checkpoint"), k, v); });
    connect(m_validation, &ParamForm::edited, this, [this](const QString &k, const QJsonValue &v) { editMember(QStringLiteral("validation"), k, v); });
    connect(m_batch, &ParamForm::edited, this, [this](const QString &, const QJsonValue &v) {
        if (v.isDouble())
            Q_EMIT batchSizeEdited(int(v.toInteger()));
        else
            refresh(); // the batch stage keeps its size: show it again
    });
    refresh();
}

void TrainingEditor::setTraining(const QJsonObject &training)
{
    m_training = training;
    refresh();
}

void TrainingEditor::setContext(const ParamContext &context)
{
    m_context = context;
    refresh();
}

void TrainingEditor::setBatchSize(int globalBatchSize)
{
    m_batchSize = globalBatchSize;
    refresh();
}

QJsonObject TrainingEditor::optimizerObject() const
{
    const QJsonValue o = m_training.value(kOptimizer);
    if (o.isString())
        return QJsonObject{{kType, o.toString()}};
    return o.toObject();
}

QString TrainingEditor::optimizerType() const
{
    return optimizerObject().value(kType).toString(QStringLiteral("adam"));
}

QJsonObject TrainingEditor::scheduleView() const
{
    const QJsonValue lr = optimizerObject().value(kLearningRate);
    if (lr.isObject()) {
        QJsonObject view = lr.toObject();
        view.insert(QStringLiteral("schedule"), view.value(kType));
        return view;
    }
    QJsonObject view; // "schedule" unset: fixed, its default
    if (!lr.isUndefined())
        view.insert(kLearningRate, lr);
    return view;
}

void TrainingEditor::refresh()
{
    using namespace modelspecs;
    const QJsonObject optimizer = optimizerObject();
    const QJsonObject schedule = scheduleView();
    // Clipping may sit next to the optimizer or at the top of the training object (core reads both).
    QJsonObject optimizerValues = optimizer;
    if (m_training.contains(QStringLiteral("global_clipnorm")))
        optimizerValues.insert(QStringLiteral("global_clipnorm"), m_training.value(QStringLiteral("global_clipnorm")));
    const int replicas = m_training.value(QStringLiteral("replicas")).toInt(1);

    const struct
    {
        ParamForm *form;
        QList<ParamSpec> specs;
        QJsonObject values;
    } sections[] = {
        {m_run, runSpecs(), m_training},
        {m_distribution, distributionSpecs(), m_training},
        {m_batch, batchSpecs(replicas), m_batchSize > 0 ? QJsonObject{{QStringLiteral("batch_size"), m_batchSize}} : QJsonObject()},
        {m_optimizer, optimizerSpecs(optimizerType()), optimizerValues},
        {m_schedule, scheduleSpecs(schedule.value(QStringLiteral("schedule")).toString(), optimizerType()), schedule},
        {m_checkpoint, checkpointSpecs(), m_training.value(QStringLiteral("checkpoint")).toObject()},
        {m_validation, validationSpecs(), m_training.value(QStringLiteral("validation")).toObject()},
        {m_weighting, weightingSpecs(), m_training},
    };
    for (const auto &s : sections) {
        s.form->setSpecs(s.specs, m_context);
        s.form->setValues(s.values);
    }
    m_batch->setEnabled(m_batchSize > 0);
    m_batch->setToolTip(m_batchSize > 0 ? QString() : tr("The pipeline has no batch stage: add one to train."));
}

void TrainingEditor::showError(const QStringList &path, const QString &reason)
{
    for (ParamForm *f : {m_run, m_distribution, m_batch, m_optimizer, m_schedule, m_checkpoint, m_validation, m_weighting})
        f->setErrors({});
    m_error->setText(reason.isEmpty() ? QString() : QStringLiteral("training.%1: %2").arg(path.join(QLatin1Char('.')), reason));
    m_error->setVisible(!reason.isEmpty());
    if (reason.isEmpty() || path.isEmpty())
        return;
    // The form that shows the key: a member's own form, else the one listing it.
    const QString first = path.at(0), second = path.value(1), third = path.value(2);
    ParamForm *form = nullptr;
    QString key = first;
    if (first == QLatin1String("checkpoint") || first == QLatin1String("validation")) {
        form = first == QLatin1String("checkpoint") ? m_checkpoint : m_validation;
        key = second.isEmpty() ? form->specs().value(0).name : second;
    } else if (first == QLatin1String("optimizer") && second == kLearningRate) {
        form = m_schedule;
        key = third.isEmpty() ? (m_schedule->editor(kLearningRate) ? kLearningRate : QStringLiteral("schedule")) : third;
    } else if (first == QLatin1String("optimizer")) {
        form = m_optimizer;
        key = second.isEmpty() ? kType : second;
    } else {
        for (ParamForm *f : {m_run, m_distribution, m_optimizer, m_weighting})
            if (f->editor(first))
                form = f;
    }
    if (form)
        form->setErrors({{key, reason}});
}

void TrainingEditor::emitEdited()
{
    refresh();
    Q_EMIT trainingEdited(m_training);
}

void TrainingEditor::editTopLevel(const QString &key, const QJsonValue &value)
{
    setOrRemove(m_training, key, value);
    emitEdited();
}

void TrainingEditor::editMember(const QString &member, const QString &key, const QJsonValue &value)
{
    QJsonObject object = m_training.value(member).toObject();
    setOrRemove(object, key, value);
    // A validation is a node or a split, never both (core refuses both): one replaces the other.
    if (member == QLatin1String("validation") && !value.isUndefined()) {
        if (key == QLatin1String("split"))
            object.remove(QStringLiteral("node"));
        else if (key == QLatin1String("node"))
            object.remove(QStringLiteral("split"));
    }
    if (object.isEmpty())
        m_training.remove(member);
    else
        m_training.insert(member, object);
    emitEdited();
}

void TrainingEditor::editOptimizer(const QString &key, const QJsonValue &value)
{
    if (key == QLatin1String("global_clipnorm") && m_training.contains(key)) {
        editTopLevel(key, value);
        return;
    }
    QJsonObject optimizer = optimizerObject();
    if (key == kType) {
        // Another optimizer: drop the hyper-parameters only the old one documents.
        const QStringList oldKeys = modelspecs::specNames(modelspecs::optimizerSpecs(optimizerType()));
        const QStringList newKeys = modelspecs::specNames(modelspecs::optimizerSpecs(value.toString(QStringLiteral("adam"))));
        for (const QString &k : oldKeys)
            if (!newKeys.contains(k))
                optimizer.remove(k);
    }
    setOrRemove(optimizer, key, value);
    m_training.insert(kOptimizer, optimizer);
    emitEdited();
}

void TrainingEditor::editSchedule(const QString &key, const QJsonValue &value)
{
    QJsonObject optimizer = optimizerObject();
    const QJsonValue lr = optimizer.value(kLearningRate);
    if (key == QLatin1String("schedule")) {
        const QString kind = value.toString(QStringLiteral("fixed"));
        // The rate in force carries over: a number becomes the schedule's initial rate and back.
        QJsonValue rate = lr.isDouble() ? lr : QJsonValue(QJsonValue::Undefined);
        if (lr.isObject())
            rate = lr.toObject().contains(QStringLiteral("initial_learning_rate")) ? lr.toObject().value(QStringLiteral("initial_learning_rate"))
                                                                                     : lr.toObject().value(kLearningRate);
        if (kind == QLatin1String("fixed")) {
            setOrRemove(optimizer, kLearningRate, rate);
        } else {
            QJsonObject schedule = lr.toObject();
            const QStringList oldKeys = modelspecs::specNames(modelspecs::scheduleSpecs(schedule.value(kType).toString(), optimizerType()));
            const QStringList newKeys = modelspecs::specNames(modelspecs::scheduleSpecs(kind, optimizerType()));
            for (const QString &k : oldKeys)
                if (!newKeys.contains(k))
                    schedule.remove(k);
            schedule.insert(kType, kind);
            const QString rateKey = newKeys.contains(QStringLiteral("initial_learning_rate")) ? QStringLiteral("initial_learning_rate") : kLearningRate;
            if (newKeys.contains(rateKey) && !schedule.contains(rateKey) && !rate.isUndefined())
                schedule.insert(rateKey, rate);
            optimizer.insert(kLearningRate, schedule);
        }
    } else if (lr.isObject()) {
        QJsonObject schedule = lr.toObject();
        setOrRemove(schedule, key, value);
        optimizer.insert(kLearningRate, schedule);
    } else {
        setOrRemove(optimizer, kLearningRate, value); // "fixed": the number itself
    }
    m_training.insert(kOptimizer, optimizer);
    emitEdited();
}

} // namespace sluice::widgets
