// libFuzzer target: any bytes given to decode_image's decoder (io/formats/image_codec.h) decode to a
// picture of the size it says, or are refused; never a crash, never a write outside the
// buffer it asked for, never more than the decoder's size bound.
#include "io/formats/image_codec.h"

#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte *>(data), size);
    for (const int channels : {0, 1, 3, 4}) {
        sluice::ImageDecodeOptions options;
        options.channels = channels;
        options.keep16Bit = channels == 4;
        std::vector<std::byte> pixels;
        const auto info = sluice::decodeImage(bytes, options,
                                              [&](const sluice::ImageInfo &i) {
                                                  const std::uint64_t n = std::uint64_t(i.height) * std::uint64_t(i.width) *
                                                                          std::uint64_t(i.channels) * std::uint64_t(i.bytesPerSample);
                                                  if (n > sluice::kLargestDecodedImageBytes || i.height <= 0 || i.width <= 0)
                                                      std::abort();
                                                  pixels.resize(std::size_t(n));
                                                  return pixels.data();
                                              },
                                              "fuzz");
        if (info.ok() && (channels != 0 && info->channels != channels))
            std::abort();
    }
    return 0;
}
