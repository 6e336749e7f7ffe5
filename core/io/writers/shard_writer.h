#pragma once
// Writing a dataset as a folder of shards, the building block of the pipeline's `save` sink
// and of `sluice convert`:
//
//   <folder>/data-00000-of-00004.tfrecord …   format tfrecord: one file of tf.train.Example per shard
//   <folder>/x-00000-of-00004.npy …           format npy: one .npy per feature per shard
//   <folder>/manifest.json                    written last: what a reader needs (below)
//
// Every file is written under a temporary name and renamed into place when complete, and the
// manifest is written (atomically) only by commit(), after every shard is complete: a folder
// without manifest.json is a dataset still being written, or one whose writing failed. A writer
// destroyed without commit() removes the shard files it had published as well.
//
// TFRecord shards hold one Example per row, a feature per column: floating columns as a
// FloatList (float32), integer and bool columns as an Int64List, string columns as a
// BytesList, each row's elements flattened in C order (so tf.io.FixedLenFeature(shape, dtype)
// with the manifest's shape reads them back; variable-length columns want VarLenFeature).
// Npy shards hold a column per file, rows along the first dimension, read back by openNpy();
// they take fixed-shape numeric columns only.
//
// manifest.json:
//   {"format": "sluice-dataset", "version": 1, "file_format": "tfrecord" | "npy",
//    "compression": "" | "GZIP",                                           (tfrecord)
//    "features": [{"name": "x", "dtype": "float32", "shape": [3],
//                  "tf_dtype": "float32"}, …],   shape null: variable length; tf_dtype: the
//                                               Feature list kind ("float32", "int64", "string"), tfrecord only
//    "shards": [{"file": "data-00000-of-00002.tfrecord", "records": 500}, …]   (tfrecord)
//              [{"files": {"x": "x-00000-of-00002.npy", …}, "records": 500}, …]  (npy)
//    "records": 1000}
//
// Threading: each ShardWriter is used by one thread at a time, and different shards may be
// written by different threads at once (they share nothing mutable). create(), commit() and
// the destructor are called while no shard is being written.

#include "io/dtype.h"
#include "io/error.h"
#include "io/writers/npy_writer.h"
#include "io/writers/tf_example_writer.h"
#include "io/writers/tfrecord_writer.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sluice {

enum class DatasetFormat { TfRecord, Npy };
const char *datasetFormatName(DatasetFormat format); // "tfrecord", "npy"
Result<DatasetFormat> parseDatasetFormat(const std::string &name);

// A column of the dataset: a name, an element type and the shape of one row.
struct DatasetFeature
{
    std::string name;
    DType dtype = DType::Float32;          // numeric columns
    bool isString = false;                 // byte strings instead (TFRecord only)
    std::vector<std::uint64_t> rowShape;   // {} for scalars; ignored when variableLength
    bool variableLength = false;           // a different element count in each row (TFRecord only)

    std::uint64_t rowElements() const;     // elements in one row (fixed shapes)
    std::string typeName() const;          // "float32", "int64", "string"…
    bool operator==(const DatasetFeature &) const = default;
};

struct DatasetManifest
{
    struct Shard
    {
        std::vector<std::string> files; // names in the folder: tfrecord one, npy one per feature in feature order
        std::uint64_t records = 0;
        bool operator==(const Shard &) const = default;
    };
    DatasetFormat format = DatasetFormat::TfRecord;
    TfRecordWriter::Compression compression = TfRecordWriter::Compression::None;
    std::vector<DatasetFeature> features;
    std::vector<Shard> shards;

    std::uint64_t records() const;
};

inline constexpr const char *kDatasetManifestName = "manifest.json";
// A name that opens a file inside the dataset's folder and nowhere else (no '/', not "..").
bool isDatasetFileName(const std::string &name);
nlohmann::json manifestToJson(const DatasetManifest &manifest);
// Checks what a reader relies on (known format and dtypes, a file per feature, plain file
// names); `what` names the manifest in errors.
Result<DatasetManifest> manifestFromJson(const nlohmann::json &json, const std::string &what);
// Reads <folder>/manifest.json; NotFound when the folder holds no complete dataset.
Result<DatasetManifest> readDatasetManifest(const std::string &folder);

struct ShardedDatasetOptions
{
    std::string folder;                   // created if missing
    DatasetFormat format = DatasetFormat::TfRecord;
    int shards = 1;
    TfRecordWriter::Compression compression = TfRecordWriter::Compression::None; // TFRecord only
    // Shard file names. {index} and {count} are the shard's index and the shard count,
    // zero-padded to 5 digits as TensorFlow names shards; {feature} the column (npy). Empty:
    // "data-{index}-of-{count}.tfrecord", "{feature}-{index}-of-{count}.npy".
    std::string pattern;
    // A folder that already holds a manifest or files of the names to write is refused unless
    // set; then the old manifest goes first (the folder reads as incomplete while it is
    // rewritten) and the old dataset's other files go once the new manifest is written.
    bool overwrite = false;
};

// One column's values for a run of rows, given to ShardWriter::append in feature order.
struct ColumnRows
{
    std::span<const std::byte> data;         // numeric: the rows' elements, C order, native byte order
    std::span<const std::string> strings;    // string: the rows' elements
    std::span<const std::uint64_t> rowLengths; // variable length only: each row's element count
};

// One shard of a ShardedDatasetWriter. Its file(s) are created at the first append (so that
// only shards being written hold open files) and published by close().
class ShardWriter
{
public:
    ShardWriter(const ShardWriter &) = delete;
    ShardWriter &operator=(const ShardWriter &) = delete;
    ~ShardWriter();

    // Appends `rows` rows, `columns` holding one entry per feature. Checked before anything
    // is written; a failed write marks the shard failed (it is then never published).
    Status append(std::uint64_t rows, std::span<const ColumnRows> columns);
    // Completes and publishes the shard's file(s) (an empty shard is a valid empty file).
    Status close();

    int index() const { return m_index; }
    std::uint64_t rows() const { return m_rows; }
    bool closed() const { return m_closed; }
    // File names in the folder, as the manifest lists them.
    const std::vector<std::string> &files() const { return m_files; }

private:
    friend class ShardedDatasetWriter;
    struct Layout;
    ShardWriter(std::shared_ptr<const Layout> layout, int index, std::vector<std::string> files);
    Status open();
    Status check(std::uint64_t rows, std::span<const ColumnRows> columns) const;
    Status appendRecords(std::uint64_t rows, std::span<const ColumnRows> columns);
    Status fail(Error error);
    std::string pathOf(std::size_t file) const;

    std::shared_ptr<const Layout> m_layout;
    int m_index = 0;
    std::vector<std::string> m_files;
    std::uint64_t m_rows = 0;
    bool m_failed = false;
    std::optional<Error> m_error; // why it failed
    bool m_closed = false;
    std::size_t m_published = 0; // files renamed into place (the first ones of m_files)
    // TFRecord
    std::optional<TfRecordWriter> m_tfrecord;
    ExampleEncoder m_encoder;
    std::vector<ExampleFeatureValues> m_values; // scratch, one per feature
    std::vector<std::size_t> m_offsets;         // scratch: each column's next element
    std::string m_record;                       // scratch: the serialized Example
    // Npy
    std::vector<NpyWriter> m_npy;
};

class ShardedDatasetWriter
{
public:
    static Result<ShardedDatasetWriter> create(const ShardedDatasetOptions &options, std::vector<DatasetFeature> features);
    ShardedDatasetWriter(ShardedDatasetWriter &&) noexcept;
    ShardedDatasetWriter &operator=(ShardedDatasetWriter &&) noexcept;
    ~ShardedDatasetWriter();

    int shardCount() const { return int(m_shards.size()); }
    // The writer of shard `index` (0 <= index < shardCount()); stays valid while this lives.
    ShardWriter &shard(int index) { return *m_shards.at(std::size_t(index)); }
    const std::vector<DatasetFeature> &features() const;
    const std::string &folder() const;

    // Closes the shards still open, then writes manifest.json atomically. Fails, writing no
    // manifest, if any shard failed.
    Status commit();
    // What commit() writes (or wrote), from the shards as they stand.
    DatasetManifest manifest() const;

private:
    ShardedDatasetWriter() = default;
    void discard();

    std::shared_ptr<const ShardWriter::Layout> m_layout;
    std::vector<std::unique_ptr<ShardWriter>> m_shards; // on the heap: references stay valid across moves
    std::vector<std::string> m_staleFiles; // the overwritten dataset's files, removed after commit
    bool m_committed = false;
};

} // namespace sluice
