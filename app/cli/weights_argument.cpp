#include "cli/weights_argument.h"
#include "events/run_folder.h"

#include <QDir>
#include <QFileInfo>

namespace sluice::cli {

std::string weightsFile(const QString &value)
{
    if (QFileInfo(value).isDir())
        return QDir(value).filePath(QString::fromLatin1(runfolder::kWeights)).toStdString();
    return value.toStdString();
}

} // namespace sluice::cli
