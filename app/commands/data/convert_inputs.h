#pragma once
// The inputs of `sluice convert` (convert_command.cpp) as the source node of the pipeline that
// converts them: CSV files (from_csv, column types as `sluice inspect` infers them), TFRecord
// files (from_tfrecord, the feature spec inferred the same way), .npy files (from_npy, each file
// a feature named after its stem), Parquet files (from_parquet, the columns it reads, rows from
// the footers) or one image folder (from_files: the encoded bytes as a string
// feature, with integer labels from class sub-folders).

#include "io/error.h"
#include "project/project.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sluice::commands {

struct ConvertSource
{
    PipelineNode node;                 // the source node, id "source"
    std::string kind;                  // "CSV", "TFRecord", ".npy", "image folder": for messages
    std::vector<std::string> features; // what is saved: --features, or the input's features in their order
    // Files the source reads and the rows of each, where it reads a list of files (CSV,
    // TFRecord): several processes under mpirun then take files each.
    std::string fileParam;
    std::vector<std::string> files;
    std::vector<std::uint64_t> fileRows;
    std::optional<std::uint64_t> rows; // the rows it yields, where known without building it
};

// `inputs` all of one kind; `selected` is --features (empty: every feature the input has, but
// an image folder's "path"). A TFRecord spec holds the selected features only, so that one left
// out need not have a fixed length. Errors name the input file, or "--features".
Result<ConvertSource> convertSource(const std::vector<std::string> &inputs, const std::vector<std::string> &selected);

} // namespace sluice::commands
