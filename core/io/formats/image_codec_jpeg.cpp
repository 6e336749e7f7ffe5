// JPEG through libjpeg-turbo, set up as TensorFlow's decode_jpeg sets it up: fancy upsampling,
// the fast integer IDCT unless asked otherwise, gray or RGB out. libjpeg reports fatal errors
// by calling error_exit, which must not return: it longjmps back here, and no C++ object with
// a destructor lives between the setjmp and the library calls (none would be unwound).
#include "io/formats/image_codec.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include <jerror.h>
#include <jpeglib.h>

namespace sluice {
namespace {

struct ErrorManager
{
    jpeg_error_mgr base;
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    bool truncated = false;
};

[[noreturn]] void onFatal(j_common_ptr info)
{
    auto *err = reinterpret_cast<ErrorManager *>(info->err);
    (*info->err->format_message)(info, err->message);
    std::longjmp(err->jump, 1);
}

// Warnings are not printed. A file that ends early is refused rather than decoded with gray
// rows (libjpeg's recovery), as TensorFlow refuses it by default.
void onMessage(j_common_ptr info, int level)
{
    auto *err = reinterpret_cast<ErrorManager *>(info->err);
    if (level < 0 && info->err->msg_code == JWRN_JPEG_EOF)
        err->truncated = true;
}

void installErrors(ErrorManager &err, jpeg_common_struct *info)
{
    info->err = jpeg_std_error(&err.base);
    err.base.error_exit = onFatal;
    err.base.emit_message = onMessage;
    err.message[0] = '\0';
}

} // namespace

namespace detail {

Result<ImageInfo> decodeJpeg(std::span<const std::byte> bytes, const ImageDecodeOptions &options,
                             const std::function<std::byte *(const ImageInfo &)> &allocate, const std::string &what)
{
    if (options.channels == 2)
        return Error::unsupported(what, "a JPEG has no alpha channel: channels must be 0, 1, 3 or 4");
    jpeg_decompress_struct cinfo;
    ErrorManager err;
    installErrors(err, reinterpret_cast<jpeg_common_struct *>(&cinfo));
    ImageInfo info;
    std::byte *out = nullptr;
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return Error::corrupt(what, std::string("not a valid JPEG: ") + err.message);
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char *>(bytes.data()), static_cast<unsigned long>(bytes.size()));
    jpeg_read_header(&cinfo, TRUE);
    // Checked from the header, before jpeg_start_decompress: libjpeg allocates buffers the size
    // of the whole picture there (a progressive file keeps every coefficient, 2 bytes each), so a
    // corrupt header claiming a huge picture would otherwise ask for gigabytes (found by
    // fuzz_image_decode).
    if (std::uint64_t(cinfo.image_width) * std::uint64_t(cinfo.image_height) * std::uint64_t(std::max(cinfo.num_components, 4)) * 2 >
        kLargestDecodedImageBytes) {
        const std::string size = std::to_string(cinfo.image_width) + "x" + std::to_string(cinfo.image_height);
        jpeg_destroy_decompress(&cinfo);
        return Error::unsupported(what, "a JPEG of " + size + " pixels: larger than the 1 GiB a decoded picture may take");
    }
    int channels = options.channels;
    if (channels == 0)
        channels = cinfo.num_components == 1 ? 1 : 3;
    cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : channels == 4 ? JCS_EXT_RGBA : JCS_RGB;
    cinfo.dct_method = options.accurateDct ? JDCT_ISLOW : JDCT_IFAST;
    cinfo.do_fancy_upsampling = TRUE;
    jpeg_start_decompress(&cinfo);
    info.height = int(cinfo.output_height);
    info.width = int(cinfo.output_width);
    info.channels = int(cinfo.output_components);
    if (std::uint64_t(info.height) * std::uint64_t(info.width) * std::uint64_t(info.channels) > kLargestDecodedImageBytes) {
        jpeg_destroy_decompress(&cinfo);
        return Error::unsupported(what, "a JPEG of " + std::to_string(info.width) + "x" + std::to_string(info.height) +
                                            " pixels: larger than the 1 GiB a decoded picture may take");
    }
    out = allocate(info);
    const std::size_t stride = std::size_t(info.width) * std::size_t(info.channels);
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = reinterpret_cast<JSAMPROW>(out + std::size_t(cinfo.output_scanline) * stride);
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    if (err.truncated) {
        jpeg_destroy_decompress(&cinfo);
        return Error::corrupt(what, "truncated JPEG: the data ends before the image does");
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return info;
}

} // namespace detail

Result<std::string> encodeJpeg(const std::uint8_t *pixels, int height, int width, int channels, int quality, const std::string &what)
{
    if (channels != 1 && channels != 3)
        return Error::invalid(what, "a JPEG holds 1 or 3 channels, got " + std::to_string(channels));
    jpeg_compress_struct cinfo;
    ErrorManager err;
    installErrors(err, reinterpret_cast<jpeg_common_struct *>(&cinfo));
    unsigned char *buffer = nullptr;
    unsigned long size = 0;
    if (setjmp(err.jump)) {
        jpeg_destroy_compress(&cinfo);
        std::free(buffer);
        return Error::failed(what, std::string("JPEG encoding failed: ") + err.message);
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buffer, &size);
    cinfo.image_width = JDIMENSION(width);
    cinfo.image_height = JDIMENSION(height);
    cinfo.input_components = channels;
    cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    const std::size_t stride = std::size_t(width) * std::size_t(channels);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = const_cast<JSAMPROW>(pixels + std::size_t(cinfo.next_scanline) * stride);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    std::string out(reinterpret_cast<const char *>(buffer), size);
    std::free(buffer);
    return out;
}

} // namespace sluice
