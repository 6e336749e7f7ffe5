#include "document/project_validator.h"

#include "pipeline/ops/host_ops.h"
#include "pipeline/engine/pipeline.h"
#include "train/model/model.h"

#include <QMetaObject>

namespace sluice::widgets {

namespace {

// The error on the stage it names (core's Error::node and ::param), shown without the
// "node "b" (batch): " its text starts with, which the card says already.
void attribute(const Error &error, const Project &project, QMap<QString, StageCheck> &stages, const QString &fallbackId)
{
    const QString id = error.node.empty() ? fallbackId : QString::fromStdString(error.node);
    if (!stages.contains(id) || !stages[id].error.isEmpty())
        return;
    std::string text = error.reason;
    if (const PipelineNode *node = project.findNode(id.toStdString())) {
        const std::string where = "node \"" + node->id + "\" (" + node->op + "): ";
        if (text.rfind(where, 0) == 0)
            text = text.substr(where.size());
    }
    StageCheck &stage = stages[id];
    stage.error = QString::fromStdString(text);
    stage.parameter = QString::fromStdString(error.param);
    stage.features.clear();
    stage.featureNames.clear();
    stage.featureTypes.clear();
}

} // namespace

ProjectCheck checkProject(const Project &project)
{
    ProjectCheck check;
    for (const PipelineNode &node : project.nodes)
        check.stages.insert(QString::fromStdString(node.id), StageCheck{});
    // Inputs first: an error upstream is reported on the stage that has it, not on each one below.
    for (const std::string &id : project.topologicalOrder()) {
        const QString qid = QString::fromStdString(id);
        bool upstreamBroken = false;
        for (const std::string &input : project.inputsOf(id))
            upstreamBroken = upstreamBroken || !check.stages[QString::fromStdString(input)].error.isEmpty() ||
                             check.stages[QString::fromStdString(input)].features.isEmpty();
        if (upstreamBroken)
            continue;
        pipeline::PipelineOptions options;
        options.outputNode = id;
        options.threads = 1;
        options.autotune = false;
        auto built = pipeline::Pipeline::build(project, options);
        if (!built) {
            attribute(built.error(), project, check.stages, qid);
            continue;
        }
        StageCheck &stage = check.stages[qid];
        stage.features = QString::fromStdString((*built)->elementSpec().text());
        for (const auto &feature : (*built)->elementSpec().features) {
            stage.featureNames << QString::fromStdString(feature.name);
            stage.featureTypes.insert(QString::fromStdString(feature.name),
                                      QString::fromStdString(feature.type.name() + " " + pipeline::shapeText(feature.shape)));
        }
        if (const auto function = pipeline::describeHostFunction(project, *project.findNode(id))) {
            stage.functionParam = QString::fromStdString(function->param);
            stage.functionDoc = QString::fromStdString(function->doc);
            stage.functionFile = QString::fromStdString(function->file);
        }
        // The model binds to the pipeline's output: build it against that stage's elements.
        if (const auto output = project.outputNode(); output && *output == id && project.model.is_object()) {
            if (auto model = train::Model::build(project.model, (*built)->elementSpec())) {
                check.modelSummary = QString::fromStdString((*model)->summary());
                check.modelGraph = modelGraphOf(project.model, model->get(), nullptr);
            } else {
                check.modelError = QString::fromStdString(model.error().message());
                check.modelFailure = model.error();
                check.modelGraph = modelGraphOf(project.model, nullptr, &model.error());
            }
        }
    }
    // While the pipeline's output does not build, the cards still show (without shapes).
    if (check.modelGraph.isEmpty())
        check.modelGraph = modelGraphOf(project.model, nullptr, nullptr);
    if (const auto output = project.outputNode())
        check.modelGraph.feedingNode = QString::fromStdString(*output);
    return check;
}

ProjectValidator::ProjectValidator(QObject *parent) : QObject(parent) {}

ProjectValidator::~ProjectValidator()
{
    if (m_worker.joinable())
        m_worker.join();
}

quint64 ProjectValidator::validate(const Project &project)
{
    m_waiting = project;
    m_waitingGeneration = ++m_generation;
    if (!m_worker.joinable())
        startNext();
    return m_generation;
}

void ProjectValidator::startNext()
{
    if (!m_waiting)
        return;
    Project project = std::move(*m_waiting);
    m_waiting.reset();
    const quint64 generation = m_waitingGeneration;
    m_worker = std::thread([this, project = std::move(project), generation]() mutable {
        ProjectCheck check = checkProject(project);
        check.generation = generation;
        // Delivered in the owner's thread; the destructor joins this thread before `this` goes.
        QMetaObject::invokeMethod(this, [this, check = std::move(check)]() mutable { finish(std::move(check)); }, Qt::QueuedConnection);
    });
}

void ProjectValidator::finish(ProjectCheck check)
{
    if (m_worker.joinable())
        m_worker.join();
    if (!m_waiting) // a newer request supersedes this result: emit only the newest
        Q_EMIT validated(check);
    startNext();
}

} // namespace sluice::widgets
