#pragma once
// JPEG and PNG in and out of memory: decoding with libjpeg-turbo and libpng as TensorFlow's
// tf.io.decode_image does (the same libraries and settings, so the pixels are the same), and
// encoding for `sluice gen images` and the tests' own data.
//
// Bad bytes never crash: the libraries' fatal errors are turned into Error values naming
// `what` (a file path, usually) and libjpeg's or libpng's own message.
//
// Threading: every function is reentrant; nothing is shared between calls.

#include "io/error.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace sluice {

enum class ImageFormat { Unknown, Jpeg, Png };

// From the file's first bytes (its signature), not its name.
ImageFormat sniffImageFormat(std::span<const std::byte> bytes);

struct ImageInfo
{
    int height = 0, width = 0, channels = 0;
    int bytesPerSample = 1; // 2 for 16-bit PNG samples kept as 16 bits
};

struct ImageDecodeOptions
{
    // 0: the file's own (1 or 3 for JPEG; 1 to 4 for PNG, a palette expanded to RGB or RGBA);
    // 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA, converted as TensorFlow does.
    int channels = 0;
    // Keep 16-bit PNG samples as 16 bits (decode_png's dtype uint16); else they are scaled to 8.
    bool keep16Bit = false;
    // libjpeg's JDCT_ISLOW (INTEGER_ACCURATE) rather than JDCT_IFAST (INTEGER_FAST), which is
    // what tf.io.decode_jpeg uses by default.
    bool accurateDct = false;
};

// An image whose pixels would take more than this is refused before anything is allocated: a
// corrupt or hostile header cannot make the decoder ask for gigabytes.
constexpr std::uint64_t kLargestDecodedImageBytes = std::uint64_t(1) << 30;

// Decodes into memory that `allocate` returns for the image's size (height × width × channels
// × bytesPerSample bytes, rows packed), so that a caller decodes straight into its tensor.
Result<ImageInfo> decodeImage(std::span<const std::byte> bytes, const ImageDecodeOptions &options,
                              const std::function<std::byte *(const ImageInfo &)> &allocate, const std::string &what);

// Encoded files of 8-bit pixels (rows packed, channels 1, 3; PNG also 2 and 4).
Result<std::string> encodeJpeg(const std::uint8_t *pixels, int height, int width, int channels, int quality, const std::string &what);
Result<std::string> encodePng(const std::uint8_t *pixels, int height, int width, int channels, const std::string &what);

} // namespace sluice
