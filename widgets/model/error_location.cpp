// Reading core's error locations. Patterns follow core/train/model.cpp (modelError: "model: " +
// where), layers/layer_config.cpp ("<Class> parameter '<key>': …") and training_config.cpp
// (configError: "training." + key).
#include "model/error_location.h"

#include <QRegularExpression>

namespace sluice::widgets {

ErrorLocation locateError(const QString &what, const QString &reason)
{
    ErrorLocation at;
    if (what.startsWith(QLatin1String("training"))) {
        at.trainingPath = what.mid(qsizetype(sizeof("training")) - 1).split(QLatin1Char('.'), Qt::SkipEmptyParts);
        return at;
    }
    static const QRegularExpression indexed(QStringLiteral(R"((inputs|layers|outputs)\[(\d+)\](?:\.(\w+))?)"));
    static const QRegularExpression named(QStringLiteral(R"((input|layer|output) '([^']+)')"));
    static const QRegularExpression parameter(QStringLiteral(R"(parameter '([^']+)')"));
    const QString text = what + QLatin1Char(' ') + reason;
    if (const auto m = indexed.match(text); m.hasMatch()) {
        at.list = m.captured(1);
        at.row = m.captured(2).toInt();
        at.param = m.captured(3);
    } else if (const auto n = named.match(text); n.hasMatch()) {
        at.list = n.captured(1) + QLatin1Char('s');
        at.name = n.captured(2);
    }
    if (const auto p = parameter.match(reason); p.hasMatch())
        at.param = p.captured(1);
    return at;
}

} // namespace sluice::widgets
