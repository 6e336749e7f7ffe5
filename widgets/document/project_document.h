#pragma once
// The open project as the workbench edits it: core's Project (the same object `sluice run`
// loads) plus a QUndoStack. Every edit — adding, removing, moving and connecting stages,
// parameters, the model, training settings — goes through an undoable command, so undo/redo
// covers everything and the dirty marker is the stack's clean state. Views (canvas, inspector,
// model panel) never edit the Project themselves: they call these functions and listen to
// changed().
//
// Node positions and the canvas's zoom are GUI-only state and live under the project's
// "layout" key ({"nodes": {id: {"x", "y"}}}), which headless runs ignore.
//
// Threading: a QObject of the GUI thread; every function is called from that thread.

#include "io/error.h"
#include "project/project.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QObject>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QUndoStack>

#include <map>
#include <optional>

namespace sluice::widgets {

class ProjectDocument : public QObject
{
    Q_OBJECT
public:
    // An empty, untitled project whose relative paths resolve against `folder`.
    explicit ProjectDocument(const QString &folder, QObject *parent = nullptr);
    // Reads a project file; the error names the file and what is wrong (nothing is changed).
    static Result<std::unique_ptr<ProjectDocument>> open(const QString &path, QObject *parent = nullptr);
    // Autosaved work: the state in `statePath`, belonging to `originalPath` (empty: untitled).
    // The document is dirty (its edits are not in the original file until saved).
    static Result<std::unique_ptr<ProjectDocument>> recover(const QString &statePath, const QString &originalPath, QObject *parent = nullptr);

    const Project &project() const { return m_project; }
    QUndoStack *undoStack() { return &m_undo; }
    QString filePath() const { return m_filePath; } // empty while untitled
    QString displayName() const;                    // file name, or "Untitled"
    QString folder() const;                         // where relative paths resolve
    bool isDirty() const { return !m_undo.isClean(); }

    // Writes the project atomically to `path` (Save As when it differs) and marks it clean. An
    // untitled project, or one named after its previous file, is named after the new file.
    Status save(const QString &path);

    // --- edits (each one undoable) ---
    // Adds a stage; returns its id (the op's name, made unique: "shuffle", "shuffle_2").
    QString addNode(const QString &op, const QJsonObject &params, QPointF position);
    // Removes stages and every edge that touches them, as one step.
    void removeNodes(const QStringList &ids);
    // Moves stages to new positions, as one step (a finished drag).
    void moveNodes(const std::map<QString, QPointF> &positions);
    // Connects `from` → `to`; refused (nothing changes) with the reason: a source takes no
    // input, the stage already has its input, the edge exists, or it would make a cycle.
    std::optional<QString> connectNodes(const QString &from, const QString &to);
    // Why connectNodes() would refuse, without changing anything; nothing when it is allowed.
    std::optional<QString> connectionProblem(const QString &from, const QString &to) const;
    void disconnectNodes(const QString &from, const QString &to);
    // Sets one parameter; an undefined value removes it (back to the op's default).
    void setParameter(const QString &id, const QString &name, const QJsonValue &value);
    void setModel(const QJsonObject &model);
    void setTraining(const QJsonObject &training);
    // Lays every stage out left to right by depth, as one step.
    void autoLayout();
    // The stages `ids` and the edges between them, as JSON for the clipboard.
    QJsonObject copy(const QStringList &ids) const;
    // Adds a copy() fragment with fresh ids, shifted by `offset`; returns the new ids.
    QStringList paste(const QJsonObject &fragment, QPointF offset);

    // --- queries ---
    QPointF position(const QString &id) const; // laid out automatically when the file has none
    QStringList nodeIds() const;
    static QString mimeType() { return QStringLiteral("application/x-sluice-nodes"); }

    // Used by the undo commands: replaces the whole document state.
    void restore(const nlohmann::json &document);
    nlohmann::json state() const { return m_project.toJson(); }

Q_SIGNALS:
    // The project changed (an edit, undo or redo); views re-read what they show.
    void changed();
    void dirtyChanged(bool dirty);
    void filePathChanged(const QString &path);

private:
    // Applies `edit` to a copy of the state and pushes it as one undoable step named `text`.
    template <typename Edit>
    void edit(const QString &text, Edit &&change, const QString &mergeKey = {});
    QString uniqueId(const QString &base) const;
    void ensurePositions();

    Project m_project;
    QUndoStack m_undo;
    QString m_filePath;
    QString m_folder;
};

} // namespace sluice::widgets
