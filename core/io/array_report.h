#pragma once
// What `sluice inspect` reports about a .npy or .npz file, as JSON with numpy's names
// (dtype, shape, fortran_order) so that the CLI, the workbench and tests share one truth.

#include "io/error.h"
#include "io/nd_array.h"

#include <nlohmann/json.hpp>

#include <string>

namespace sluice {

struct InspectOptions
{
    bool stats = false; // add min, max, sum, mean, nan_count (one streaming pass)
    int threads = 0;    // for the stats pass; <= 0: all cores
};

// Describes one array: format_version, dtype, shape, fortran_order, nbytes, storage, stats.
nlohmann::json describeArray(const NdArray &array, const InspectOptions &options);

// Describes a .npy (keys above plus file, format), a .npz (file, format, nbytes and
// `arrays`: one description per member, keyed by name without .npy) or a TFRecord file
// (file, format, compression, nbytes, records, and `features`: each tf.train.Example
// feature's dtype and value-list lengths, every record read and CRC-checked) or a CSV file
// (.csv, .tsv: file, format, nbytes, rows, and `columns` in file order with the inferred
// dtype, empty-field count and, with stats, a numeric summary). The format is
// taken from the file's first bytes; the extension only picks the reader that explains a
// damaged file.
Result<nlohmann::json> inspectFile(const std::string &path, const InspectOptions &options);

} // namespace sluice
