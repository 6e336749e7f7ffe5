#pragma once
// The built-in functions of `map` (what a tf.data user writes as a lambda): cast, normalize,
// scale, clip, one_hot, reshape, gaussian_noise, concat. Each is configured once from the node's
// parameters against the input's element spec (so mistakes are build errors naming the feature)
// and then applied to elements, batched or not, exactly as the TensorFlow op would be.
//
// Threading: apply() is const and called from many tasks at once.

#include "pipeline/engine/build_context.h"

#include <memory>
#include <string>
#include <vector>

namespace sluice::pipeline {

class MapFunction
{
public:
    virtual ~MapFunction() = default;
    const ElementSpec &outputSpec() const { return m_output; }
    // `sequence` is the element's position in this pass and `pass` the pass number: random
    // functions derive their numbers from them, so results do not depend on thread timing.
    // A function configured to skip bad input ("on_error": "skip") returns droppedElement() for
    // it; the map stage leaves such elements out, so its cardinality is then unknown.
    virtual Result<Element> apply(Element &&element, std::uint64_t pass, std::uint64_t sequence) const = 0;
    virtual bool mayDrop() const { return false; }
    static Element droppedElement() { return {}; }
    static bool isDropped(const Element &element) { return element.tensors.empty(); }

protected:
    ElementSpec m_output;
};

struct MapFunctionInfo
{
    std::string name;
    std::vector<std::string> params;
    std::string doc;
};
const std::vector<MapFunctionInfo> &mapFunctions();

// Builds function `name` from the node's parameters; `input` is the dataset it will be applied to
// (normalize with mean/std "adapt" makes a pass over it to compute them).
std::unique_ptr<MapFunction> makeMapFunction(const std::string &name, BuildContext &context, Params &params, const Dataset &input);

// The features parameter `param` names (a name or a list), each checked against `spec` (numbers
// only when `numeric`); all numeric features when it is absent and `allByDefault`.
std::vector<std::size_t> featureIndices(Params &params, const std::string &param, const ElementSpec &spec, bool allByDefault,
                                        bool numeric = true);

// Converts a numeric tensor to `dtype` (numpy's astype: truncation toward zero for float→int).
Tensor castTensor(const Tensor &tensor, DType dtype);

} // namespace sluice::pipeline
