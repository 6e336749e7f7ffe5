#include "cli/weights_argument.h"

#include <QDir>
#include <QFileInfo>

namespace sluice::cli {

std::string weightsFile(const QString &value)
{
    if (QFileInfo(value).isDir())
        return QDir(value).filePath("weights.npz").toStdString();
    return value.toStdString();
}

} // namespace sluice::cli
