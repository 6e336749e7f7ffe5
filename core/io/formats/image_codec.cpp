// Dispatch by signature; the codecs live in image_codec_jpeg.cpp and image_codec_png.cpp.
#include "io/formats/image_codec.h"

#include <cstring>

namespace sluice {
namespace detail {
Result<ImageInfo> decodeJpeg(std::span<const std::byte> bytes, const ImageDecodeOptions &options,
                             const std::function<std::byte *(const ImageInfo &)> &allocate, const std::string &what);
Result<ImageInfo> decodePng(std::span<const std::byte> bytes, const ImageDecodeOptions &options,
                            const std::function<std::byte *(const ImageInfo &)> &allocate, const std::string &what);
} // namespace detail

ImageFormat sniffImageFormat(std::span<const std::byte> bytes)
{
    static const unsigned char kJpeg[] = {0xFF, 0xD8, 0xFF};
    static const unsigned char kPng[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    if (bytes.size() >= sizeof kJpeg && std::memcmp(bytes.data(), kJpeg, sizeof kJpeg) == 0)
        return ImageFormat::Jpeg;
    if (bytes.size() >= sizeof kPng && std::memcmp(bytes.data(), kPng, sizeof kPng) == 0)
        return ImageFormat::Png;
    return ImageFormat::Unknown;
}

Result<ImageInfo> decodeImage(std::span<const std::byte> bytes, const ImageDecodeOptions &options,
                              const std::function<std::byte *(const ImageInfo &)> &allocate, const std::string &what)
{
    if (options.channels < 0 || options.channels > 4)
        return Error::invalid(what, "channels must be 0 (as in the file) or 1 to 4, got " + std::to_string(options.channels));
    switch (sniffImageFormat(bytes)) {
    case ImageFormat::Jpeg: return detail::decodeJpeg(bytes, options, allocate, what);
    case ImageFormat::Png: return detail::decodePng(bytes, options, allocate, what);
    case ImageFormat::Unknown: break;
    }
    return Error::unsupported(what, bytes.empty() ? std::string("empty file, not an image")
                                                  : "not a JPEG or PNG image (its first bytes are neither signature)");
}

} // namespace sluice
