#include "pipeline/sources/example_columns.h"

#include <algorithm>
#include <cstring>

namespace sluice::pipeline {

ExampleColumns::ExampleColumns(const std::vector<FixedLenFeature> &features, const ElementSpec &rowSpec, std::uint64_t rowsPerChunk)
    : m_features(features), m_builder(rowSpec, rowsPerChunk), m_found(features.size()), m_seen(features.size()),
      m_stringsBefore(features.size())
{
}

Status ExampleColumns::add(std::span<const std::byte> record, const std::function<std::string()> &what)
{
    std::fill(m_seen.begin(), m_seen.end(), false);
    // Entries that are not kept (features not declared, or replaced by a later entry of the same
    // name) are still checked, so that a damaged record is an error whatever it is read for.
    std::string_view damagedFeature;
    bool damaged = false;
    auto check = [&](std::string_view name, std::span<const std::byte> feature) {
        if (!damaged && !decodeExampleFeature(feature, m_unused)) {
            damaged = true;
            damagedFeature = name;
        }
    };
    const std::string damage = visitExample(record, [&](std::string_view name, std::span<const std::byte> feature) {
        for (std::size_t i = 0; i < m_features.size(); ++i)
            if (m_features[i].name == name) {
                if (m_seen[i])
                    check(name, m_found[i]);
                m_found[i] = feature; // a later entry of the same name wins, as in a protobuf map
                m_seen[i] = true;
                return;
            }
        check(name, feature);
    });
    if (!damage.empty())
        return Error::corrupt(what(), "not a valid tf.train.Example: " + damage);
    if (damaged)
        return Error::corrupt(what(), "not a valid tf.train.Example: feature '" + std::string(damagedFeature) + "' is damaged");
    // Strings are appended as they are decoded; on a failure they are taken back off.
    for (std::size_t i = 0; i < m_features.size(); ++i)
        m_stringsBefore[i] = m_features[i].type.isString ? m_builder.strings(i).size() : 0;
    for (std::size_t i = 0; i < m_features.size(); ++i) {
        if (auto status = fill(i, what); !status.ok()) {
            for (std::size_t j = 0; j < m_features.size(); ++j)
                if (m_features[j].type.isString)
                    m_builder.strings(j).resize(m_stringsBefore[j]);
            return status;
        }
    }
    m_builder.commit(1);
    return Status::success();
}

Status ExampleColumns::fill(std::size_t i, const std::function<std::string()> &what)
{
    const FixedLenFeature &f = m_features[i];
    const std::uint64_t row = m_builder.rows();
    if (m_seen[i] && !decodeExampleFeature(m_found[i], m_scratch))
        return Error::corrupt(what(), "not a valid tf.train.Example: feature '" + f.name + "' is damaged");
    if (!m_seen[i] || m_scratch.size() == 0) {
        if (!f.defaultValue)
            return Error::corrupt(what(), "feature \"" + f.name + "\" is missing and has no default_value");
        if (f.type.isString) {
            const auto &values = f.defaultValue->stringValues();
            m_builder.strings(i).insert(m_builder.strings(i).end(), values.begin(), values.end());
        } else {
            std::memcpy(m_builder.rowData(i, row), f.defaultValue->data(), f.defaultValue->nbytes());
        }
        return Status::success();
    }
    const auto kind = f.type.isString ? ExampleFeature::Kind::Bytes
                      : f.type.dtype == DType::Int64 ? ExampleFeature::Kind::Int64 : ExampleFeature::Kind::Float;
    if (m_scratch.kind != kind)
        return Error::corrupt(what(), "feature \"" + f.name + "\" holds " + exampleKindName(m_scratch.kind) + " values, the spec says " +
                                          f.type.name());
    const std::uint64_t want = elementCount(f.shape);
    if (m_scratch.size() != want)
        return Error::corrupt(what(), "feature \"" + f.name + "\" has " + std::to_string(m_scratch.size()) + " values, its shape " +
                                          shapeText(f.shape) + " needs " + std::to_string(want));
    if (f.type.isString) {
        for (auto b : m_scratch.bytes)
            m_builder.strings(i).emplace_back(reinterpret_cast<const char *>(b.data()), b.size());
    } else if (kind == ExampleFeature::Kind::Int64) {
        std::memcpy(m_builder.rowData(i, row), m_scratch.ints.data(), want * sizeof(std::int64_t));
    } else {
        std::memcpy(m_builder.rowData(i, row), m_scratch.floats.data(), want * sizeof(float));
    }
    return Status::success();
}

} // namespace sluice::pipeline
