#pragma once
// What a drop of data files from the file manager becomes: source stages with those files as
// features. .npy files together make one from_npy (feature = file name without extension),
// each .npz a from_npz, TFRecord files one from_tfrecord whose feature spec is read from the
// records (fixed-length features as tf.train.Example stores them), CSV files one from_csv whose
// columns and dtypes are read from the first file. A folder of pictures becomes a from_files
// over it (labels from its class sub-folders when it has them), picture files one from_files.
// Paths inside the project's folder are written relative to it, as a user would.

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <vector>

namespace sluice::widgets {

struct DroppedSource
{
    QString op;
    QJsonObject params;
};

struct DroppedFiles
{
    std::vector<DroppedSource> sources;
    QStringList problems; // "file: why it was skipped"
};

bool isDataFile(const QString &path); // by extension: .npy .npz .tfrecord(.gz) .tfrecords .csv .tsv .jpg .jpeg .png, or a folder
// Whether its source's spec is read from the whole file (TFRecord, CSV), not from a header.
bool readsThrough(const QString &path);
DroppedFiles sourcesFromFiles(const QStringList &paths, const QString &projectFolder);

} // namespace sluice::widgets
