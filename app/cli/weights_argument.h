#pragma once
// The WEIGHTS argument of `sluice predict` and `sluice export`: a weights.npz, or the folder of
// a run (sluice run --out) that holds one.

#include <QString>

#include <string>

namespace sluice::cli {

// The .npz to read: `value` itself, or value/weights.npz when `value` is a folder.
std::string weightsFile(const QString &value);

} // namespace sluice::cli
