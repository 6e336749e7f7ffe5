#pragma once
// `sluice gen images`: a folder of labelled pictures in the layout Keras's
// image_dataset_from_directory and Sluice's from_files read, DIR/<class>/<class>_<n>.<ext>.
// Each class is a kind of shape (circle, square, triangle, cross, ring, stripes, diamond,
// dots) drawn at a random place, size and colour on a random background, with pixel noise, so
// that a small CNN can learn the classes and cannot learn them from colour alone.
//
// Threading: writeSyntheticImages splits the work over oneTBB tasks; the progress callback is
// called from any of them (it must be thread-safe) with the number of images written so far.

#include "io/error.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sluice {

struct SyntheticImagesSpec
{
    enum class Format { Jpeg, Png };
    int classes = 5;          // 2 to 8
    std::uint64_t rows = 0;   // images in all, spread evenly over the classes
    int height = 64, width = 64;
    Format format = Format::Jpeg;
    int quality = 90;         // JPEG
    double noise = 12;        // standard deviation of the pixel noise, in levels of 255
    std::uint64_t seed = 0;
};

const std::vector<std::string> &syntheticImageClasses(); // the shape names, in class order

Status validate(const SyntheticImagesSpec &spec);

// The pixels of image `index` (height × width × 3, uint8) and its class.
std::vector<std::uint8_t> drawSyntheticImage(const SyntheticImagesSpec &spec, std::uint64_t index, int &label);

// Writes every image (each under a temporary name, renamed when whole). Stops early, returning
// a cancelled error, when `interrupted` becomes true.
Status writeSyntheticImages(const SyntheticImagesSpec &spec, const std::string &folder, int threads,
                            const std::function<void(std::uint64_t)> &progress, const std::atomic<bool> *interrupted = nullptr);

} // namespace sluice
