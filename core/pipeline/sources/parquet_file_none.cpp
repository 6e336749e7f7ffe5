// ParquetFile in a build without Apache Arrow: from_parquet is still an op (projects that use
// it load, and the docs list it), but opening a file says what the build lacks.
#include "pipeline/sources/parquet_file.h"

#include <numeric>

namespace sluice::pipeline {

bool ParquetFile::available()
{
    return false;
}

std::int64_t ParquetFile::rows() const
{
    return std::accumulate(m_groupRows.begin(), m_groupRows.end(), std::int64_t(0));
}

Result<std::shared_ptr<const ParquetFile>> ParquetFile::open(const std::string &path)
{
    return Error::unsupported(path, "this Sluice was built without Parquet support (Apache Arrow's C++ libraries; "
                                    "scripts/fetch-arrow.sh fetches them and the build then finds them)");
}

} // namespace sluice::pipeline
