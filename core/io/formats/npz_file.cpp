#include "io/formats/npz_file.h"

namespace sluice {

Result<NpzFile> NpzFile::open(const std::string &path)
{
    auto mapped = MappedFile::open(path);
    if (!mapped)
        return mapped.error();
    NpzFile npz;
    npz.m_file = std::move(mapped).value();
    auto entries = readZipDirectory(npz.m_file->bytes(), path);
    if (!entries)
        return entries.error();
    for (ZipEntry &e : entries.value()) {
        if (!e.name.empty() && e.name.back() == '/')
            continue; // a directory entry holds no array
        std::string name = e.name;
        if (name.size() > 4 && name.ends_with(".npy"))
            name.resize(name.size() - 4);
        npz.m_members.push_back({std::move(name), std::move(e)});
    }
    return npz;
}

const NpzFile::Member *NpzFile::find(const std::string &name) const
{
    for (const auto &m : m_members)
        if (m.name == name || m.entry.name == name)
            return &m;
    return nullptr;
}

Result<NdArray> NpzFile::load(const std::string &name) const
{
    const Member *m = find(name);
    if (!m) {
        std::string known;
        for (const auto &member : m_members)
            known += (known.empty() ? "" : ", ") + member.name;
        return Error::invalid(path(), "no member '" + name + "' (members: " + known + ")");
    }
    return load(*m);
}

Result<NdArray> NpzFile::load(const Member &member) const
{
    const std::string what = path() + ": " + member.name;
    if (!member.compressed()) {
        SharedBytes bytes{m_file, m_file->bytes().subspan(member.entry.dataOffset, member.entry.compressedSize)};
        return NdArray::parse(std::move(bytes), what, Storage::Mapped);
    }
    auto inflated = inflateZipEntry(m_file->bytes(), member.entry, what);
    if (!inflated)
        return inflated.error();
    auto buffer = std::make_shared<std::vector<std::byte>>(std::move(inflated).value());
    SharedBytes bytes{buffer, std::span<const std::byte>(buffer->data(), buffer->size())};
    return NdArray::parse(std::move(bytes), what, Storage::Inflated);
}

Status NpzFile::verify(const Member &member) const
{
    if (member.compressed())
        return Status::success();
    const auto bytes = m_file->bytes().subspan(member.entry.dataOffset, member.entry.compressedSize);
    if (zipCrc32(bytes) != member.entry.crc32)
        return Error::corrupt(path() + ": " + member.name, "CRC-32 mismatch: the member's data is corrupt");
    return Status::success();
}

} // namespace sluice
