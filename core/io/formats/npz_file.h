#pragma once
// .npz archives (numpy's savez / savez_compressed): a zip of .npy members. Stored members
// are mapped zero-copy at their offset in the archive; deflated members are inflated into
// memory (NdArray::storage() says which).
//
// Threading: an NpzFile is immutable after open(); load() may be called from any thread.

#include "io/nd_array.h"
#include "io/formats/zip_reader.h"

#include <memory>
#include <string>
#include <vector>

namespace sluice {

class NpzFile
{
public:
    struct Member
    {
        std::string name; // as numpy's np.load(...)[name]: the zip name without ".npy"
        ZipEntry entry;
        bool compressed() const { return entry.method == ZipEntry::Method::Deflated; }
    };

    static Result<NpzFile> open(const std::string &path);

    const std::string &path() const { return m_file->path(); }
    std::uint64_t size() const { return m_file->size(); }
    const std::vector<Member> &members() const { return m_members; }
    const Member *find(const std::string &name) const;

    // The member as an array: mapped when stored, inflated (CRC checked) when deflated.
    Result<NdArray> load(const std::string &name) const;
    Result<NdArray> load(const Member &member) const;
    // Checks a stored member's CRC-32 (reads it whole); deflated members are checked by load().
    Status verify(const Member &member) const;

private:
    std::shared_ptr<const MappedFile> m_file;
    std::vector<Member> m_members;
};

} // namespace sluice
