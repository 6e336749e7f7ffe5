#pragma once
// The image functions of `map` (decode_image, resize, random_flip, random_crop,
// random_brightness, random_contrast): listed with the other map functions by mapFunctions().

#include "pipeline/functions/map_functions.h"

namespace sluice::pipeline {

const std::vector<MapFunctionInfo> &imageMapFunctions();

// Null when `name` is not an image function.
std::unique_ptr<MapFunction> makeImageMapFunction(const std::string &name, BuildContext &context, Params &params, const ElementSpec &spec);

} // namespace sluice::pipeline
