#pragma once
// Writing a sharded dataset (shard_writer.h) somewhere it cannot disturb the one already in its
// folder, then moving it into place: the pipeline's `save` writes each pass into a staging
// folder inside the destination and publishes it only when the pass completed. A pass that
// stops early (a preview, take after save, Ctrl-C) so leaves a dataset saved earlier complete
// and readable, instead of one whose manifest is gone and whose new shards never came.
//
//   <folder>/.sluice-partial-<pid>-<n>/   a pass being written (removed when it ends, either way)
//   <folder>/manifest.json, shards        the dataset last published
//
// Threading: one thread at a time per folder; different folders are independent.

#include "io/error.h"

#include <string>

namespace sluice {

// Creates a fresh, empty staging folder inside `folder` (created if missing) and returns its path.
Result<std::string> createStagingFolder(const std::string &folder);

// Moves the committed dataset in `staging` (its manifest.json written) into `folder`:
//  - a folder already holding a dataset (manifest.json) or files of the names to move is
//    refused unless `overwrite`;
//  - the old manifest goes first, so that while shards are replaced the folder never claims a
//    dataset it does not hold; the new manifest is moved in last;
//  - the old dataset's files that the new one does not replace are removed afterwards, and the
//    staging folder too.
// On failure the folder holds no manifest (what it held was half replaced) or its old one
// (nothing was touched), and the error says which file and why.
Status publishDataset(const std::string &staging, const std::string &folder, bool overwrite);

// Removes a staging folder and what is in it (a pass that stopped early). No error: what cannot
// be removed stays, hidden, and never reads as a dataset.
void removeStagingFolder(const std::string &staging);

} // namespace sluice
