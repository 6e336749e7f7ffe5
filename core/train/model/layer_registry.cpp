// Every layer class, keyed by its Keras name: its documentation (sluice docs, the CLI) and the
// function that reads its parameters and makes it. The documented parameters are the only
// ones accepted.
#include "train/model/layer_registry.h"

#include "train/model/initializers.h"
#include "train/layers/basic_layers.h"
#include "train/layers/conv/conv_layers.h"
#include "train/layers/layer_config.h"
#include "train/layers/recurrent/recurrent.h"

#include <algorithm>
#include <cctype>
#include <functional>

namespace sluice::train {
namespace {

using detail::LayerConfig;
using nlohmann::json;

struct LayerEntry
{
    LayerInfo info;
    // Reads the parameters (already checked against info.params) and makes the layer.
    std::function<Result<std::unique_ptr<Layer>>(const std::string &name, LayerConfig &config)> create;
};

std::string enumType(const std::vector<std::string> &names)
{
    std::string s = "enum:";
    for (std::size_t i = 0; i < names.size(); ++i)
        s += (i ? "|" : "") + names[i];
    return s;
}

LayerParamDoc activationDoc(std::string defaultValue)
{
    return {"activation", enumType(knownActivations()), std::move(defaultValue),
            "Activation function (null: linear). gelu is the exact, erf-based form; softmax acts on the last axis."};
}

LayerParamDoc initializerDoc(std::string name, std::string defaultValue, std::string what)
{
    return {std::move(name), enumType(knownInitializers()), std::move(defaultValue), "Initializer of " + std::move(what) + " (seeded by the run's seed and the weight's name)."};
}

// Keras accepts the axis as an integer or a list of them; one axis is all we support.
std::int64_t singleAxis(LayerConfig &c)
{
    const json *v = c.raw("axis");
    if (v && v->is_array()) {
        const Shape axes = c.integers("axis");
        if (axes.size() != 1)
            c.fail("axis", "expected a single axis (-1), got " + shortJson(*v));
        return axes[0];
    }
    return c.integer("axis", -1, INT64_MIN);
}

// Keras writes a linear activation as null; the recurrent layers have only these two.
GateActivation gateActivation(LayerConfig &c, const std::string &key, GateActivation fallback)
{
    const json *v = c.raw(key);
    if (!v && !c.isNull(key))
        return fallback;
    if (v && *v == "tanh")
        return GateActivation::Tanh;
    if (v && *v == "sigmoid")
        return GateActivation::Sigmoid;
    c.fail(key, "expected \"tanh\" or \"sigmoid\" (the activations recurrent layers support), got " +
                    (v ? shortJson(*v) : std::string("null (linear)")));
}

// What GRU and LSTM share; the defaults are RecurrentOptions's.
RecurrentOptions recurrentOptions(LayerConfig &c)
{
    RecurrentOptions o;
    o.units = c.integer("units", std::nullopt, 1);
    o.activation = gateActivation(c, "activation", o.activation);
    o.recurrentActivation = gateActivation(c, "recurrent_activation", o.recurrentActivation);
    o.useBias = c.boolean("use_bias", o.useBias);
    o.returnSequences = c.boolean("return_sequences", o.returnSequences);
    o.kernelInitializer = c.initializer("kernel_initializer", o.kernelInitializer);
    o.recurrentInitializer = c.initializer("recurrent_initializer", o.recurrentInitializer);
    o.biasInitializer = c.initializer("bias_initializer", o.biasInitializer);
    return o;
}

// --- Convolution and pooling: what their entries share ---------------------------------------

std::string rankSuffix(int rank) { return rank == 1 ? "1D" : "2D"; }

// Keras lower-cases the padding; "causal" (Conv1D) is not supported.
ConvPadding convPadding(LayerConfig &c)
{
    const std::string given = c.string("padding", "valid");
    std::string p = given;
    std::transform(p.begin(), p.end(), p.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    if (p == "valid")
        return ConvPadding::Valid;
    if (p == "same")
        return ConvPadding::Same;
    c.fail("padding", std::string("expected \"valid\" or \"same\"") + (p == "causal" ? " (causal padding is not supported)" : "") +
                          ", got \"" + given + "\"");
}

// Keras's data_format (null: its default, channels_last).
void requireChannelsLast(LayerConfig &c)
{
    const std::string format = c.string("data_format", "channels_last");
    if (format != "channels_last")
        c.fail("data_format", "only \"channels_last\" is supported (inputs [batch, ..., channels]), got \"" + format + "\"");
}

LayerParamDoc paddingDoc()
{
    return {"padding", "enum:valid|same", "valid",
            "valid: windows inside the input only; same: zero padding (ignored by pooling) for ceil(input / stride) outputs, "
            "as TensorFlow pads (the smaller half before)."};
}

LayerParamDoc dataFormatDoc()
{
    return {"data_format", "enum:channels_last", "channels_last", "Only channels_last: inputs [batch, ..., channels] (null: channels_last)."};
}

std::string inputText(int rank) { return rank == 1 ? "[B, steps, channels]" : "[B, height, width, channels]"; }

// The output of a windowed layer with `last` channels: "[B, steps', filters]".
std::string outputText(int rank, const std::string &last) { return rank == 1 ? "[B, steps', " + last + "]" : "[B, height', width', " + last + "]"; }

LayerEntry convEntry(int rank)
{
    using Made = Result<std::unique_ptr<Layer>>;
    const std::string kernel = rank == 1 ? "(k, channels, filters)" : "(kh, kw, channels, filters)";
    return {{"Conv" + rankSuffix(rank),
             std::to_string(rank) + "-D convolution: " + inputText(rank) + " -> " + outputText(rank, "filters") +
                 ", activation(conv(inputs, kernel) + bias). Weights: kernel " + kernel + ", bias (filters,).",
             {{"filters", "int", "", "Number of output channels (>= 1)."},
              {"kernel_size", "int|list of int", "", "Size of the window: one number for every spatial axis, or a list with one per axis."},
              {"strides", "int|list of int", "1", "Step between windows, per spatial axis (a number or a list)."},
              paddingDoc(),
              dataFormatDoc(),
              {"dilation_rate", "int|list of int", "1", "Spacing of the window's taps, per spatial axis; above 1 only with strides of 1 (as Keras)."},
              {"groups", "int", "1", "Must be 1: grouped convolutions are not supported."},
              activationDoc("linear"),
              {"use_bias", "bool", "true", "Whether the layer adds a bias vector."},
              initializerDoc("kernel_initializer", "glorot_uniform", "the kernel"),
              initializerDoc("bias_initializer", "zeros", "the bias")}},
            [rank](const std::string &name, LayerConfig &c) -> Made {
                ConvOptions o;
                o.rank = rank;
                o.filters = c.integer("filters", std::nullopt, 1);
                o.kernelSize = c.integerTuple("kernel_size", std::nullopt, std::size_t(rank), 1);
                o.strides = c.integerTuple("strides", 1, std::size_t(rank), 1);
                o.padding = convPadding(c);
                requireChannelsLast(c);
                o.dilationRate = c.integerTuple("dilation_rate", 1, std::size_t(rank), 1);
                auto above1 = [](const Shape &v) { return std::any_of(v.begin(), v.end(), [](std::int64_t x) { return x > 1; }); };
                if (above1(o.strides) && above1(o.dilationRate))
                    c.fail("dilation_rate", "above 1 cannot be combined with strides above 1 (Keras refuses it too), got dilation_rate " +
                                                shapeString(o.dilationRate) + " and strides " + shapeString(o.strides));
                if (const std::int64_t groups = c.integer("groups", 1, 1); groups != 1)
                    c.fail("groups", "only 1 is supported (grouped convolutions are not), got " + std::to_string(groups));
                o.activation = c.activation("activation", "linear");
                o.useBias = c.boolean("use_bias", true);
                o.kernelInitializer = c.initializer("kernel_initializer", "glorot_uniform");
                o.biasInitializer = c.initializer("bias_initializer", "zeros");
                return makeConv(name, std::move(o));
            }};
}

LayerEntry poolingEntry(int rank, PoolKind kind)
{
    using Made = Result<std::unique_ptr<Layer>>;
    const bool isMax = kind == PoolKind::Max;
    return {{std::string(isMax ? "MaxPooling" : "AveragePooling") + rankSuffix(rank),
             std::string(isMax ? "Maximum" : "Mean") + " of each channel over windows: " + inputText(rank) + " -> " + outputText(rank, "channels") +
                 ". " +
                 (isMax ? "Padded positions never count; the gradient goes to the first maximum of each window."
                        : "With same padding, each window's mean is over its positions inside the input (as TensorFlow)."),
             {{"pool_size", "int|list of int", "2", "Size of the window: one number for every spatial axis, or a list with one per axis."},
              {"strides", "int|list of int|null", "null", "Step between windows, per spatial axis; null: pool_size."},
              paddingDoc(),
              dataFormatDoc()}},
            [rank, kind](const std::string &name, LayerConfig &c) -> Made {
                PoolingOptions o;
                o.rank = rank;
                o.kind = kind;
                o.poolSize = c.integerTuple("pool_size", 2, std::size_t(rank), 1);
                o.strides = c.raw("strides") ? c.integerTuple("strides", std::nullopt, std::size_t(rank), 1) : o.poolSize;
                o.padding = convPadding(c);
                requireChannelsLast(c);
                return makePooling(name, std::move(o));
            }};
}

LayerEntry globalPoolingEntry(int rank, PoolKind kind)
{
    using Made = Result<std::unique_ptr<Layer>>;
    const bool isMax = kind == PoolKind::Max;
    return {{std::string(isMax ? "GlobalMaxPooling" : "GlobalAveragePooling") + rankSuffix(rank),
             std::string(isMax ? "Maximum" : "Mean") + " of each channel over all positions: " + inputText(rank) + " -> [B, channels].",
             {dataFormatDoc(),
              {"keepdims", "bool", "false", rank == 1 ? "Keep the steps axis with size 1: [B, 1, channels]." : "Keep the spatial axes with size 1: [B, 1, 1, channels]."}}},
            [rank, kind](const std::string &name, LayerConfig &c) -> Made {
                requireChannelsLast(c);
                GlobalPoolingOptions o;
                o.rank = rank;
                o.kind = kind;
                o.keepdims = c.boolean("keepdims", false);
                return makeGlobalPooling(name, o);
            }};
}

std::vector<LayerEntry> makeEntries()
{
    std::vector<LayerEntry> all;
    using Made = Result<std::unique_ptr<Layer>>;

    all.push_back({{"Activation",
                    "Applies an activation function elementwise (softmax over the last axis).",
                    {{"activation", enumType(knownActivations()), "", "Activation function: linear, relu, gelu (exact), tanh, sigmoid, softmax."}}},
                   [](const std::string &name, LayerConfig &c) -> Made {
                       return makeActivation(name, c.activation("activation", std::nullopt));
                   }});

    all.push_back(poolingEntry(1, PoolKind::Average));
    all.push_back(poolingEntry(2, PoolKind::Average));

    all.push_back({{"Concatenate",
                    "Concatenates any number of inputs along the last axis; the other dimensions must agree.",
                    {{"axis", "int", "-1", "The axis: only the last one (-1, or the input rank counting the batch dimension)."}}},
                   [](const std::string &name, LayerConfig &c) -> Made { return makeConcatenate(name, singleAxis(c)); }});

    all.push_back(convEntry(1));
    all.push_back(convEntry(2));

    all.push_back({{"Dense",
                    "Densely connected layer: activation(inputs . kernel + bias) on the last axis, [B, ..., F] -> [B, ..., units]. "
                    "Weights: kernel (F, units), bias (units,).",
                    {{"units", "int", "", "Dimensionality of the output (>= 1)."},
                     activationDoc("linear"),
                     {"use_bias", "bool", "true", "Whether the layer adds a bias vector."},
                     initializerDoc("kernel_initializer", "glorot_uniform", "the kernel"),
                     initializerDoc("bias_initializer", "zeros", "the bias")}},
                   [](const std::string &name, LayerConfig &c) -> Made {
                       DenseOptions o;
                       o.units = c.integer("units", std::nullopt, 1);
                       o.activation = c.activation("activation", "linear");
                       o.useBias = c.boolean("use_bias", true);
                       o.kernelInitializer = c.initializer("kernel_initializer", "glorot_uniform");
                       o.biasInitializer = c.initializer("bias_initializer", "zeros");
                       return makeDense(name, std::move(o));
                   }});

    all.push_back({{"Dropout",
                    "Inverted dropout while training (kept values scaled by 1 / (1 - rate)); the identity at inference. Masks depend on the "
                    "run's seed, the layer, the step and the sample, not on how the batch is split over replicas.",
                    {{"rate", "number", "", "Fraction of the inputs to drop, in [0, 1)."},
                     {"seed", "int|null", "null", "Seed of the layer's masks (combined with the run's seed); null: derived from the layer's name."}}},
                   [](const std::string &name, LayerConfig &c) -> Made {
                       const double rate = c.number("rate", std::nullopt, Interval::closedOpen(0, 1));
                       const auto seed = c.optionalInteger("seed", INT64_MIN);
                       return makeDropout(name, rate, seed ? std::optional<std::uint64_t>(std::uint64_t(*seed)) : std::nullopt);
                   }});

    all.push_back({{"Flatten", "Flattens each sample: [B, ...] -> [B, product of the other dimensions].", {}},
                   [](const std::string &name, LayerConfig &) -> Made { return makeFlatten(name); }});

    all.push_back(globalPoolingEntry(1, PoolKind::Average));
    all.push_back(globalPoolingEntry(2, PoolKind::Average));
    all.push_back(globalPoolingEntry(1, PoolKind::Max));
    all.push_back(globalPoolingEntry(2, PoolKind::Max));

    auto recurrentDocs = [](std::vector<LayerParamDoc> extra) {
        std::vector<LayerParamDoc> p = {
            {"units", "int", "", "Dimensionality of the output and of the state (>= 1)."},
            {"activation", "enum:tanh|sigmoid", "tanh", "Activation of the candidate state (and, for LSTM, of the cell output)."},
            {"recurrent_activation", "enum:tanh|sigmoid", "sigmoid", "Activation of the gates."},
            {"use_bias", "bool", "true", "Whether the layer adds bias vectors."},
            {"return_sequences", "bool", "false", "Output every step's state [B, T, units] rather than the last one [B, units]."},
            initializerDoc("kernel_initializer", "glorot_uniform", "the input kernel"),
            initializerDoc("recurrent_initializer", "orthogonal", "the recurrent kernel"),
            initializerDoc("bias_initializer", "zeros", "the bias"),
        };
        p.insert(p.end(), extra.begin(), extra.end());
        return p;
    };
    all.push_back({{"GRU",
                    "Gated recurrent unit over [B, T, F] as Keras defines it (reset_after=True, gates z, r, h). Weights: kernel (F, 3 units), "
                    "recurrent_kernel (units, 3 units), bias (2, 3 units).",
                    recurrentDocs({{"reset_after", "bool", "true", "Must be true: the reset gate applies after the recurrent product (Keras 2+)."}})},
                   [](const std::string &name, LayerConfig &c) -> Made {
                       RecurrentOptions o = recurrentOptions(c);
                       if (!c.boolean("reset_after", true))
                           c.fail("reset_after", "only true is supported (the Keras 2+ default GRU: reset gate applied after the recurrent "
                                                 "product, bias of shape (2, 3 * units)), got false");
                       return makeGru(name, std::move(o));
                   }});
    all.push_back({{"LSTM",
                    "Long short-term memory over [B, T, F] as Keras defines it (gates i, f, c, o). Weights: kernel (F, 4 units), "
                    "recurrent_kernel (units, 4 units), bias (4 units,).",
                    recurrentDocs({{"unit_forget_bias", "bool", "true",
                                    "Start the forget gate's bias at 1 (needs bias_initializer zeros or ones)."}})},
                   [](const std::string &name, LayerConfig &c) -> Made {
                       RecurrentOptions o = recurrentOptions(c);
                       o.unitForgetBias = c.boolean("unit_forget_bias", o.unitForgetBias);
                       // Keras initialises the forget slice with ones and the rest with
                       // bias_initializer; only the constant initializers give a whole-vector
                       // initializer for that (train/layers/recurrent/lstm.cpp).
                       if (o.useBias && o.unitForgetBias && o.biasInitializer != "zeros" && o.biasInitializer != "ones")
                           c.fail("bias_initializer", "expected \"zeros\" or \"ones\" with unit_forget_bias, got \"" + o.biasInitializer +
                                                          "\" (set unit_forget_bias to false to use it)");
                       return makeLstm(name, std::move(o));
                   }});

    all.push_back({{"BatchNormalization",
                    "Normalises each channel (the last axis) to zero mean and unit variance over the batch and every other axis while "
                    "training, with the moving statistics at inference; then scales by gamma and shifts by beta. Under mirrored replicas "
                    "and MPI each replica normalises its own slice, as Keras's layer does under MirroredStrategy (the moving statistics "
                    "average the replicas'), unless synchronized. Weights: gamma, beta (C,), and the non-trainable moving_mean, moving_variance (C,).",
                    {{"axis", "int", "-1", "The channel axis: only the last one (channels last)."},
                     {"momentum", "number", "0.99", "Moving statistics: moving = momentum * moving + (1 - momentum) * batch statistic."},
                     {"epsilon", "number", "0.001", "Added to the variance before its square root (> 0)."},
                     {"center", "bool", "true", "Whether to add the offset beta."},
                     {"scale", "bool", "true", "Whether to multiply by gamma."},
                     {"synchronized", "bool", "false", "Normalise over the global batch, every replica and process together (N replicas then train as one holding the whole batch); false: each replica its own rows, as Keras's default. CPU backend only."},
                     initializerDoc("beta_initializer", "zeros", "beta"),
                     initializerDoc("gamma_initializer", "ones", "gamma"),
                     initializerDoc("moving_mean_initializer", "zeros", "the moving mean"),
                     initializerDoc("moving_variance_initializer", "ones", "the moving variance")}},
                   [](const std::string &name, LayerConfig &c) -> Made {
                       BatchNormalizationOptions o;
                       o.axis = singleAxis(c);
                       o.momentum = c.number("momentum", 0.99, Interval::closed(0, 1));
                       o.epsilon = c.number("epsilon", 1e-3, Interval::greaterThan(0));
                       o.center = c.boolean("center", true);
                       o.scale = c.boolean("scale", true);
                       o.synchronized = c.boolean("synchronized", false);
                       o.betaInitializer = c.initializer("beta_initializer", "zeros");
                       o.gammaInitializer = c.initializer("gamma_initializer", "ones");
                       o.movingMeanInitializer = c.initializer("moving_mean_initializer", "zeros");
                       o.movingVarianceInitializer = c.initializer("moving_variance_initializer", "ones");
                       return makeBatchNormalization(name, std::move(o));
                   }});

    all.push_back({{"Embedding",
                    "Turns whole-number ids in [0, input_dim) into rows of a trainable table: [B, ...] -> [B, ..., output_dim] (ids of "
                    "per-sample shape () give vectors). Its gradient holds only the rows a batch used, and replicas and MPI processes "
                    "all-reduce just those rows. An id out of range stops the run with an error naming the layer and the id. Weights: "
                    "embeddings (input_dim, output_dim).",
                    {{"input_dim", "int", "", "Rows of the table: the number of distinct ids (at most 16777216)."},
                     {"output_dim", "int", "", "Length of each row (the embedding's size)."},
                     initializerDoc("embeddings_initializer", "uniform", "the table (Keras's uniform is RandomUniform(-0.05, 0.05))"),
                     {"mask_zero", "bool", "false", "Keras's masking of id 0: not supported (only false)."},
                     {"sparse_updates", "bool", "false",
                      "Update only the rows the batch used (LazyAdam-style: other rows' optimizer moments do not decay, and weight decay "
                      "skips them), so a step costs in proportion to the batch, not to the table. false: Keras's and PyTorch's semantics, "
                      "the whole table is updated every step."}}},
                   [](const std::string &name, LayerConfig &c) -> Made {
                       EmbeddingOptions o;
                       o.inputDim = c.integer("input_dim", std::nullopt, 1, std::int64_t(1) << 24); // ids travel as float32: exact up to 2^24
                       o.outputDim = c.integer("output_dim", std::nullopt, 1);
                       o.embeddingsInitializer = c.initializer("embeddings_initializer", "uniform");
                       if (c.boolean("mask_zero", false))
                           c.fail("mask_zero", "masking is not supported: expected false (give padding its own id instead)");
                       o.sparseUpdates = c.boolean("sparse_updates", false);
                       return makeEmbedding(name, std::move(o));
                   }});

    all.push_back({{"LayerNormalization",
                    "Normalises each sample over its last axis to zero mean and unit variance, then scales by gamma and shifts by beta. "
                    "Weights: gamma (F,), beta (F,).",
                    {{"axis", "int", "-1", "The axis to normalise: only the last one."},
                     {"epsilon", "number", "0.001", "Added to the variance before its square root (> 0)."},
                     {"center", "bool", "true", "Whether to add the offset beta."},
                     {"scale", "bool", "true", "Whether to multiply by gamma."},
                     initializerDoc("beta_initializer", "zeros", "beta"),
                     initializerDoc("gamma_initializer", "ones", "gamma")}},
                   [](const std::string &name, LayerConfig &c) -> Made {
                       LayerNormalizationOptions o;
                       o.axis = singleAxis(c);
                       o.epsilon = c.number("epsilon", 1e-3, Interval::greaterThan(0));
                       o.center = c.boolean("center", true);
                       o.scale = c.boolean("scale", true);
                       o.betaInitializer = c.initializer("beta_initializer", "zeros");
                       o.gammaInitializer = c.initializer("gamma_initializer", "ones");
                       return makeLayerNormalization(name, std::move(o));
                   }});

    all.push_back(poolingEntry(1, PoolKind::Max));
    all.push_back(poolingEntry(2, PoolKind::Max));

    all.push_back({{"RepeatVector", "Repeats each sample n times: [B, F] -> [B, n, F].", {{"n", "int", "", "The number of repetitions (>= 1)."}}},
                   [](const std::string &name, LayerConfig &c) -> Made {
                       return makeRepeatVector(name, c.integer("n", std::nullopt, 1));
                   }});

    all.push_back({{"Reshape",
                    "Gives each sample a new shape with the same number of values: [B, ...] -> [B, target_shape...].",
                    {{"target_shape", "list of int", "", "The per-sample shape, without the batch dimension; one entry may be -1 (inferred)."}}},
                   [](const std::string &name, LayerConfig &c) -> Made { return makeReshape(name, c.integers("target_shape")); }});

    all.push_back({{"TimeDistributed",
                    "Applies a Dense layer to every time step: [B, T, F] -> [B, T, units]. Its weights keep the Dense's names (kernel, bias).",
                    {{"layer", "object", "", "The wrapped layer, as {\"class_name\": \"Dense\", \"units\": 8, ...} (Dense only)."}}},
                   [](const std::string &name, LayerConfig &c) -> Made {
                       const json &spec = c.object("layer");
                       const auto cls = spec.find("class_name");
                       if (cls == spec.end() || !cls->is_string())
                           c.fail("layer", "expected an object with a \"class_name\" string");
                       if (*cls != "Dense")
                           c.fail("layer", "supports only a Dense layer, got '" + cls->get<std::string>() + "'");
                       json inner = spec;
                       inner.erase("class_name");
                       auto made = createLayer("Dense", name, inner);
                       if (!made)
                           c.fail("layer", made.error().reason);
                       return makeTimeDistributed(name, std::move(made.value()));
                   }});
    return all;
}

const std::vector<LayerEntry> &entries()
{
    static const std::vector<LayerEntry> all = makeEntries();
    return all;
}

} // namespace

const std::vector<LayerInfo> &knownLayers()
{
    static const std::vector<LayerInfo> infos = [] {
        std::vector<LayerInfo> v;
        for (const auto &e : entries())
            v.push_back(e.info);
        return v;
    }();
    return infos;
}

Result<std::unique_ptr<Layer>> createLayer(const std::string &className, const std::string &name, const json &config)
{
    const auto &all = entries();
    const auto it = std::find_if(all.begin(), all.end(), [&](const LayerEntry &e) { return e.info.className == className; });
    if (it == all.end()) {
        std::vector<std::string> names;
        for (const auto &e : all)
            names.push_back(e.info.className);
        std::sort(names.begin(), names.end());
        return Error::invalid(name, "unknown layer class '" + className + "' (known: " + joinNames(names) + ")");
    }
    auto params = detail::flattenLayerConfig(className, name, config);
    if (!params)
        return params.error();
    try {
        LayerConfig reader(className, name, *params);
        reader.checkKnown(it->info.params);
        return it->create(name, reader);
    } catch (const detail::LayerConfigFailure &failure) {
        return failure.error;
    }
}

} // namespace sluice::train
