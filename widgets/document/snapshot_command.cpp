#include "document/snapshot_command.h"

#include "document/project_document.h"

#include <QDateTime>

namespace sluice::widgets {

SnapshotCommand::SnapshotCommand(ProjectDocument *document, const QString &text, nlohmann::json before, nlohmann::json after, QString mergeKey)
    : QUndoCommand(text), m_document(document), m_before(std::move(before)), m_after(std::move(after)), m_mergeKey(std::move(mergeKey)),
      m_madeAtMs(QDateTime::currentMSecsSinceEpoch())
{
}

bool SnapshotCommand::mergeWith(const QUndoCommand *other)
{
    const auto *next = static_cast<const SnapshotCommand *>(other); // same id(): a SnapshotCommand
    if (next->m_mergeKey != m_mergeKey || next->m_madeAtMs - m_madeAtMs > 1000)
        return false;
    m_after = next->m_after;
    m_madeAtMs = next->m_madeAtMs;
    return true;
}

void SnapshotCommand::undo() { m_document->restore(m_before); }

void SnapshotCommand::redo() { m_document->restore(m_after); }

} // namespace sluice::widgets
