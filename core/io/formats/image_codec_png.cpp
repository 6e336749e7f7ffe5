// PNG through libpng with the transformations TensorFlow's decode_png asks for: palettes and
// low bit depths expanded, RGB to gray with the BT.601 weights (0.299, 0.587), gray to RGB,
// alpha added (opaque) or stripped, 16-bit samples kept or scaled to 8. libpng reports fatal
// errors (a bad CRC in a critical chunk, data cut short) by longjmp to png_jmpbuf; as for
// JPEG, no C++ object with a destructor lives across it.
#include "io/formats/image_codec.h"

#include <cstring>

#include <png.h>

namespace sluice {
namespace {

struct ReadState
{
    const png_byte *data;
    std::size_t size, pos;
};

void readBytes(png_structp png, png_bytep out, png_size_t count)
{
    auto *s = static_cast<ReadState *>(png_get_io_ptr(png));
    if (count > s->size - s->pos)
        png_error(png, "the data ends before the image does (truncated file)");
    std::memcpy(out, s->data + s->pos, count);
    s->pos += count;
}

struct Messages
{
    char error[256] = {};
};

[[noreturn]] void onError(png_structp png, png_const_charp message)
{
    auto *m = static_cast<Messages *>(png_get_error_ptr(png));
    std::strncpy(m->error, message, sizeof m->error - 1);
    png_longjmp(png, 1);
}

void onWarning(png_structp, png_const_charp) {} // ancillary chunks with bad CRCs are dropped quietly

void writeBytes(png_structp png, png_bytep data, png_size_t count)
{
    static_cast<std::string *>(png_get_io_ptr(png))->append(reinterpret_cast<const char *>(data), count);
}

void flushNothing(png_structp) {}

} // namespace

namespace detail {

Result<ImageInfo> decodePng(std::span<const std::byte> bytes, const ImageDecodeOptions &options,
                            const std::function<std::byte *(const ImageInfo &)> &allocate, const std::string &what)
{
    Messages messages;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &messages, onError, onWarning);
    if (!png)
        return Error::outOfMemory(what, "libpng could not start");
    png_infop pngInfo = png_create_info_struct(png);
    ReadState state{reinterpret_cast<const png_byte *>(bytes.data()), bytes.size(), 0};
    ImageInfo info;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &pngInfo, nullptr);
        return Error::corrupt(what, std::string("not a valid PNG: ") + messages.error);
    }
    if (!pngInfo)
        png_error(png, "out of memory");
    png_set_read_fn(png, &state, readBytes);
    png_read_info(png, pngInfo);
    const int colorType = png_get_color_type(png, pngInfo);
    const int bitDepth = png_get_bit_depth(png, pngInfo);
    const bool hasTransparency = png_get_valid(png, pngInfo, PNG_INFO_tRNS) != 0;
    const bool isGray = (colorType & PNG_COLOR_MASK_COLOR) == 0;
    const bool hasAlpha = (colorType & PNG_COLOR_MASK_ALPHA) != 0 || hasTransparency;

    int channels = options.channels;
    if (channels == 0)
        channels = (isGray ? 1 : 3) + (hasAlpha ? 1 : 0);
    const bool wantGray = channels < 3, wantAlpha = channels == 2 || channels == 4;

    if (colorType == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (isGray && bitDepth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (hasTransparency && wantAlpha)
        png_set_tRNS_to_alpha(png);
    if (wantGray && !isGray)
        png_set_rgb_to_gray(png, 1, 0.299, 0.587);
    if (!wantGray && isGray)
        png_set_gray_to_rgb(png);
    if (wantAlpha && !hasAlpha)
        png_set_add_alpha(png, 0xffff, PNG_FILLER_AFTER);
    if (!wantAlpha && hasAlpha && !hasTransparency)
        png_set_strip_alpha(png);
    const bool sixteen = bitDepth == 16 && options.keep16Bit;
    if (bitDepth == 16) {
        if (sixteen)
            png_set_swap(png); // PNG stores big-endian; our tensors are native (little-endian)
        else
            png_set_strip_16(png); // the high byte, as TF's convert_image_dtype from uint16
    }
    const int passes = png_set_interlace_handling(png);
    png_read_update_info(png, pngInfo);

    info.height = int(png_get_image_height(png, pngInfo));
    info.width = int(png_get_image_width(png, pngInfo));
    info.channels = int(png_get_channels(png, pngInfo));
    info.bytesPerSample = sixteen ? 2 : 1;
    if (info.channels != channels)
        png_error(png, "could not convert the image to the requested channels");
    if (std::uint64_t(info.height) * std::uint64_t(info.width) * std::uint64_t(info.channels) * std::uint64_t(info.bytesPerSample) >
        kLargestDecodedImageBytes)
        png_error(png, "the picture is larger than the 1 GiB a decoded picture may take");
    std::byte *out = allocate(info);
    const std::size_t stride = std::size_t(info.width) * std::size_t(info.channels) * std::size_t(info.bytesPerSample);
    for (int pass = 0; pass < passes; ++pass)
        for (int y = 0; y < info.height; ++y)
            png_read_row(png, reinterpret_cast<png_bytep>(out + std::size_t(y) * stride), nullptr);
    png_read_end(png, nullptr);
    png_destroy_read_struct(&png, &pngInfo, nullptr);
    return info;
}

} // namespace detail

Result<std::string> encodePng(const std::uint8_t *pixels, int height, int width, int channels, const std::string &what)
{
    if (channels < 1 || channels > 4)
        return Error::invalid(what, "a PNG holds 1 to 4 channels, got " + std::to_string(channels));
    Messages messages;
    std::string out;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &messages, onError, onWarning);
    if (!png)
        return Error::outOfMemory(what, "libpng could not start");
    png_infop pngInfo = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &pngInfo);
        return Error::failed(what, std::string("PNG encoding failed: ") + messages.error);
    }
    if (!pngInfo)
        png_error(png, "out of memory");
    png_set_write_fn(png, &out, writeBytes, flushNothing);
    static const int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
    png_set_IHDR(png, pngInfo, png_uint_32(width), png_uint_32(height), 8, kColorTypes[channels - 1], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, pngInfo);
    const std::size_t stride = std::size_t(width) * std::size_t(channels);
    for (int y = 0; y < height; ++y)
        png_write_row(png, const_cast<png_bytep>(pixels + std::size_t(y) * stride));
    png_write_end(png, pngInfo);
    png_destroy_write_struct(&png, &pngInfo);
    return out;
}

} // namespace sluice
