#pragma once
// What Keras 3's get_config() writes besides the parameters Sluice's layers read: the
// serialization envelope ("module", "registered_name", "build_config"), regularizers and
// constraints (null), options whose Keras value here can only be the neutral one
// (return_state: false, recurrent dropout 0, renorm: false, ...), and initializers written as
// objects ({"class_name": "GlorotUniform", "config": {"seed": null}}). flattenLayerConfig passes
// every key through kerasKey(), so a layer's config from a real Keras model builds as it is, and
// an option Sluice lacks is refused with the layer, the key and what is supported.

#include "io/error.h"

#include <nlohmann/json.hpp>

#include <string>

namespace sluice::train::detail {

enum class KerasKey {
    Keep, // a parameter for the layer to read (an initializer object already made a name)
    Drop, // Keras bookkeeping with its neutral value: nothing for the layer to read
};

// `value` may be rewritten (an initializer object becomes its Sluice name). Errors are
// Error::Kind::Unsupported with Error::layer and Error::key set.
Result<KerasKey> kerasKey(const std::string &className, const std::string &layerName, const std::string &key, nlohmann::json &value);

} // namespace sluice::train::detail
