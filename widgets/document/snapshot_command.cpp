#include "document/snapshot_command.h"

#include "document/project_document.h"

namespace sluice::widgets {

SnapshotCommand::SnapshotCommand(ProjectDocument *document, const QString &text, nlohmann::json before, nlohmann::json after)
    : QUndoCommand(text), m_document(document), m_before(std::move(before)), m_after(std::move(after))
{
}

void SnapshotCommand::undo() { m_document->restore(m_before); }

void SnapshotCommand::redo() { m_document->restore(m_after); }

} // namespace sluice::widgets
