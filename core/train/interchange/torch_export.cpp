#include "train/interchange/torch_export.h"

#include "train/model/model.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <set>
#include <sstream>

namespace sluice::train {
namespace {

// A Python identifier made of the name's letters, digits and underscores.
std::string identifier(const std::string &name)
{
    static const std::set<std::string> keywords = {
        "False", "None",   "True",    "and",      "as",   "assert", "async", "await", "break", "class", "continue", "def",
        "del",   "elif",   "else",    "except",   "finally", "for", "from",  "global", "if",   "import", "in",      "is",
        "lambda", "nonlocal", "not",  "or",       "pass", "raise",  "return", "try",  "while", "with",  "yield",   "self"};
    std::string id;
    for (char c : name)
        id += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0])))
        id = "l_" + id;
    if (keywords.count(id))
        id += "_";
    return id;
}

// Identifiers that stay distinct when two names sanitise alike ("a.b" and "a_b").
class UniqueNames
{
public:
    // `reserved`: names the generated code uses already (locals), or attributes nn.ModuleDict
    // has (its keys): a layer named like one gets a suffix.
    explicit UniqueNames(std::set<std::string> reserved) : m_reserved(std::move(reserved)) {}

    std::string take(const std::string &name)
    {
        std::string base = identifier(name);
        if (m_reserved.count(base) || base[0] == '_')
            base += "_layer";
        std::string id = base;
        for (int i = 2; m_used.count(id); ++i)
            id = base + "_" + std::to_string(i);
        m_used.insert(id);
        return id;
    }

private:
    std::set<std::string> m_reserved;
    std::set<std::string> m_used;
};

// What forward()'s locals must not shadow.
std::set<std::string> moduleLevelNames() { return {"F", "torch", "nn", "np", "json", "os", "struct", "self"}; }

// nn.ModuleDict's own attributes (PyTorch 1.13 to 2.x): add_module refuses them as keys.
std::set<std::string> moduleDictAttributes()
{
    return {"T_destination", "add_module", "apply", "bfloat16", "buffers", "children", "clear", "compile", "cpu", "cuda", "double",
            "dump_patches", "eval", "extra_repr", "float", "forward", "get_buffer", "get_extra_state", "get_parameter", "get_submodule",
            "half", "ipu", "items", "keys", "load_state_dict", "modules", "mtia", "named_buffers", "named_children", "named_modules",
            "named_parameters", "parameters", "pop", "register_backward_hook", "register_buffer", "register_forward_hook",
            "register_forward_pre_hook", "register_full_backward_hook", "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
            "register_load_state_dict_pre_hook", "register_module", "register_parameter", "register_state_dict_post_hook",
            "register_state_dict_pre_hook", "requires_grad_", "set_extra_state", "set_submodule", "share_memory", "state_dict", "to",
            "to_empty", "train", "training", "type", "update", "values", "xpu", "zero_grad"};
}

std::string pyString(const std::string &text) { return nlohmann::json(text).dump(); } // a JSON string is a valid Python literal

std::string number(double v)
{
    std::ostringstream s;
    s << std::setprecision(17) << v;
    std::string text = s.str();
    if (text.find_first_of(".eE") == std::string::npos)
        text += ".0";
    return text;
}

std::string ints(const std::vector<std::int64_t> &values)
{
    std::string text;
    for (std::size_t i = 0; i < values.size(); ++i)
        text += (i ? ", " : "") + std::to_string(values[i]);
    return text;
}

std::string tuple(const std::vector<std::int64_t> &values) { return "(" + ints(values) + (values.size() == 1 ? ",)" : ")"); }

std::string activate(ActivationKind kind, const std::string &x)
{
    switch (kind) {
    case ActivationKind::Linear: return x;
    case ActivationKind::Relu: return "F.relu(" + x + ")";
    case ActivationKind::Gelu: return "F.gelu(" + x + ")"; // exact (erf), Keras's default
    case ActivationKind::Tanh: return "torch.tanh(" + x + ")";
    case ActivationKind::Sigmoid: return "torch.sigmoid(" + x + ")";
    case ActivationKind::Softmax: return "torch.softmax(" + x + ", dim=-1)";
    }
    return x;
}

// The model as three blocks of Python: the modules made in __init__, the lines of forward(),
// the weight copies of load().
struct Blocks
{
    std::ostringstream init, forward, load;
};

// The padding TensorFlow adds after the input along one axis: what the window needs beyond the
// input and the padding before it.
std::int64_t padAfter(std::int64_t in, std::int64_t out, std::int64_t size, std::int64_t stride, std::int64_t dilation, std::int64_t before)
{
    return std::max<std::int64_t>(0, (out - 1) * stride + (size - 1) * dilation + 1 - in - before);
}

// F.pad's amounts for a channels-first tensor (last axis first), and whether any is non-zero.
struct Pads
{
    std::string text;
    bool any = false;
};

Pads windowPads(const LayerKernelSpec::Window &w, int rank)
{
    const std::int64_t right = padAfter(w.inW, w.outW, w.sizeW, w.strideW, w.dilationW, w.padLeft);
    std::vector<std::int64_t> amounts{w.padLeft, right};
    if (rank == 2)
        for (auto v : {w.padTop, padAfter(w.inH, w.outH, w.sizeH, w.strideH, w.dilationH, w.padTop)})
            amounts.push_back(v);
    Pads p;
    p.text = tuple(amounts);
    p.any = std::any_of(amounts.begin(), amounts.end(), [](auto v) { return v != 0; });
    return p;
}

// Conv and pooling windows: [size, stride, dilation] per spatial axis, PyTorch's order.
std::vector<std::int64_t> windowValues(const LayerKernelSpec::Window &w, int rank, std::int64_t LayerKernelSpec::Window::*h,
                                       std::int64_t LayerKernelSpec::Window::*wd)
{
    if (rank == 1)
        return {w.*wd};
    return {w.*h, w.*wd};
}

int spatialRank(const std::string &className) { return className.find("1D") != std::string::npos ? 1 : 2; }

std::string toChannelsFirst(int rank) { return rank == 1 ? ".permute(0, 2, 1)" : ".permute(0, 3, 1, 2)"; }
std::string toChannelsLast(int rank) { return rank == 1 ? ".permute(0, 2, 1)" : ".permute(0, 2, 3, 1)"; }

class Generator
{
public:
    explicit Generator(const Model &model) : m_model(model), m_locals(moduleLevelNames()), m_modules(moduleDictAttributes()) {}

    Result<std::string> run(const TorchExportOptions &options)
    {
        const auto &nodes = m_model.nodes();
        m_vars.resize(nodes.size());
        std::vector<std::string> arguments;
        for (std::size_t i = 0; i < m_model.inputs().size(); ++i) {
            m_vars[i] = m_locals.take(m_model.inputs()[i].name);
            arguments.push_back(m_vars[i]);
        }
        for (std::size_t i = m_model.inputs().size(); i < nodes.size(); ++i) {
            m_vars[i] = m_locals.take(nodes[i].name);
            if (auto s = layer(nodes[i]); !s.ok())
                return s.error();
        }
        return file(options, arguments);
    }

private:
    std::string weight(const ModelNode &node, const std::string &param) const { return pyString(node.name + "/" + param); }
    bool hasWeight(const ModelNode &node, const std::string &param) const
    {
        return std::any_of(node.params.begin(), node.params.end(), [&](std::size_t p) { return m_model.parameters()[p].name == node.name + "/" + param; });
    }
    const Shape &inputShape(const ModelNode &node, std::size_t k = 0) const { return m_model.nodes()[std::size_t(node.inputs[k])].shape; }
    std::string in(const ModelNode &node, std::size_t k = 0) const { return m_vars[std::size_t(node.inputs[k])]; }

    Status layer(const ModelNode &node)
    {
        const std::string cls = node.layer->className();
        const LayerKernelSpec k = node.layer->kernelSpec();
        const std::string key = m_modules.take(node.name);
        const std::string module = "self.layers[" + pyString(key) + "]", loaded = "model.layers[" + pyString(key) + "]";
        const std::string out = m_vars[std::size_t(&node - m_model.nodes().data())];
        auto &b = m_blocks;
        b.forward << "        # " << node.name << ": " << cls << " -> " << tuple(node.shape) << "\n";
        switch (k.kind) {
        case LayerKernelSpec::Kind::Dense: {
            const std::int64_t features = inputShape(node).back();
            b.init << "        self.layers[" << pyString(key) << "] = nn.Linear(" << features << ", " << k.units << ", bias=" << (k.useBias ? "True" : "False") << ")\n";
            b.forward << "        " << out << " = " << activate(k.activation, module + "(" + in(node) + ")") << "\n";
            b.load << "        _copy(" << loaded << ".weight, _get(w, " << weight(node, "kernel") << ").T)\n";
            if (k.useBias)
                b.load << "        _copy(" << loaded << ".bias, _get(w, " << weight(node, "bias") << "))\n";
            return Status::success();
        }
        case LayerKernelSpec::Kind::Activation:
            b.forward << "        " << out << " = " << activate(k.activation, in(node)) << "\n";
            return Status::success();
        case LayerKernelSpec::Kind::Dropout:
            b.init << "        self.layers[" << pyString(key) << "] = nn.Dropout(p=" << number(k.rate) << ")\n";
            b.forward << "        " << out << " = " << module << "(" << in(node) << ")\n";
            return Status::success();
        case LayerKernelSpec::Kind::Reshape: // Flatten, Reshape
            b.forward << "        " << out << " = " << in(node) << ".reshape(" << in(node) << ".shape[0], " << ints(node.shape) << ")\n";
            return Status::success();
        case LayerKernelSpec::Kind::Concatenate: {
            std::string list;
            for (std::size_t i = 0; i < node.inputs.size(); ++i)
                list += (i ? ", " : "") + in(node, i);
            b.forward << "        " << out << " = torch.cat([" << list << "], dim=-1)\n";
            return Status::success();
        }
        case LayerKernelSpec::Kind::RepeatVector:
            b.forward << "        " << out << " = " << in(node) << ".unsqueeze(1).expand(-1, " << k.repeats << ", -1)\n";
            return Status::success();
        case LayerKernelSpec::Kind::LayerNormalization: {
            const std::int64_t features = node.shape.back();
            b.init << "        self.layers[" << pyString(key) << "] = nn.LayerNorm(" << features << ", eps=" << number(k.epsilon) << ")\n";
            b.forward << "        " << out << " = " << module << "(" << in(node) << ")\n";
            loadNormalization(node, loaded, {});
            return Status::success();
        }
        case LayerKernelSpec::Kind::BatchNormalization: {
            const std::int64_t channels = node.shape.back();
            // Keras's moving = momentum * moving + (1 - momentum) * batch is PyTorch's momentum 1 - momentum.
            b.init << "        self.layers[" << pyString(key) << "] = nn.BatchNorm1d(" << channels << ", eps=" << number(k.epsilon)
                   << ", momentum=" << number(1.0 - k.momentum) << ")\n";
            b.forward << "        " << out << " = " << module << "(" << in(node) << ".reshape(-1, " << channels << ")).reshape(" << in(node) << ".shape)\n";
            loadNormalization(node, loaded, {"moving_mean", "moving_variance"});
            return Status::success();
        }
        case LayerKernelSpec::Kind::Embedding:
            b.init << "        self.layers[" << pyString(key) << "] = nn.Embedding(" << k.inputDim << ", " << k.units << ")\n";
            // Ids reach the model as float32; Sluice truncates them, as .long() does.
            b.forward << "        " << out << " = " << module << "(" << in(node) << ".long())\n";
            b.load << "        _copy(" << loaded << ".weight, _get(w, " << weight(node, "embeddings") << "))\n";
            return Status::success();
        case LayerKernelSpec::Kind::Gru:
        case LayerKernelSpec::Kind::Lstm:
            return recurrent(node, k, key, module, loaded, out);
        case LayerKernelSpec::Kind::Conv:
            return conv(node, k, key, module, loaded, out);
        case LayerKernelSpec::Kind::Pooling:
            return pooling(node, k, out);
        case LayerKernelSpec::Kind::GlobalPooling: {
            const std::size_t spatial = inputShape(node).size() - 1;
            const std::string dims = spatial == 1 ? "(1,)" : "(1, 2)";
            b.forward << "        " << out << " = " << in(node) << (k.maxPooling ? ".amax" : ".mean") << "(dim=" << dims << ").reshape(" << in(node)
                      << ".shape[0], " << ints(node.shape) << ")\n";
            return Status::success();
        }
        case LayerKernelSpec::Kind::None:
            break;
        }
        Error e = Error::unsupported(node.name, "layer " + cls + " has no PyTorch equivalent in sluice export yet");
        e.layer = node.name;
        return e;
    }

    // gamma / beta, where the layer has them (scale / center), then BatchNormalization's statistics.
    void loadNormalization(const ModelNode &node, const std::string &loaded, std::vector<std::string> statistics)
    {
        if (hasWeight(node, "gamma"))
            m_blocks.load << "        _copy(" << loaded << ".weight, _get(w, " << weight(node, "gamma") << "))\n";
        if (hasWeight(node, "beta"))
            m_blocks.load << "        _copy(" << loaded << ".bias, _get(w, " << weight(node, "beta") << "))\n";
        if (!statistics.empty()) {
            m_blocks.load << "        _copy(" << loaded << ".running_mean, _get(w, " << weight(node, statistics[0]) << "))\n";
            m_blocks.load << "        _copy(" << loaded << ".running_var, _get(w, " << weight(node, statistics[1]) << "))\n";
        }
    }

    Status recurrent(const ModelNode &node, const LayerKernelSpec &k, const std::string &key, const std::string &module, const std::string &loaded,
                     const std::string &out)
    {
        const bool gru = k.kind == LayerKernelSpec::Kind::Gru;
        if (k.activation != ActivationKind::Tanh || k.recurrentActivation != ActivationKind::Sigmoid) {
            Error e = Error::unsupported(node.name, std::string(gru ? "GRU" : "LSTM") + " with activation other than tanh or recurrent_activation other than sigmoid: "
                                                    "PyTorch's nn." + (gru ? "GRU" : "LSTM") + " has those two only");
            e.layer = node.name;
            e.key = k.activation != ActivationKind::Tanh ? "activation" : "recurrent_activation";
            return e;
        }
        const std::int64_t features = inputShape(node).back();
        auto &b = m_blocks;
        b.init << "        self.layers[" << pyString(key) << "] = nn." << (gru ? "GRU" : "LSTM") << "(" << features << ", " << k.units
               << ", batch_first=True, bias=" << (k.useBias ? "True" : "False") << ")\n";
        b.forward << "        " << out << " = " << module << "(" << in(node) << ")[0]" << (k.returnSequences ? "" : "[:, -1]") << "\n";
        const std::string reorder = gru ? "_zrh_to_rzn" : "_same_gates";
        b.load << "        _copy(" << loaded << ".weight_ih_l0, " << reorder << "(_get(w, " << weight(node, "kernel") << ").T, " << k.units << "))\n";
        b.load << "        _copy(" << loaded << ".weight_hh_l0, " << reorder << "(_get(w, " << weight(node, "recurrent_kernel") << ").T, " << k.units << "))\n";
        if (k.useBias) {
            if (gru) {
                // Keras keeps the input and the recurrent biases as the two rows of one [2, 3 units] array.
                b.load << "        _copy(" << loaded << ".bias_ih_l0, _zrh_to_rzn(_get(w, " << weight(node, "bias") << ")[0], " << k.units << "))\n";
                b.load << "        _copy(" << loaded << ".bias_hh_l0, _zrh_to_rzn(_get(w, " << weight(node, "bias") << ")[1], " << k.units << "))\n";
            } else {
                b.load << "        _copy(" << loaded << ".bias_ih_l0, _get(w, " << weight(node, "bias") << "))\n";
                b.load << "        " << loaded << ".bias_hh_l0.zero_()  # Keras's LSTM has one bias\n";
            }
        }
        return Status::success();
    }

    Status conv(const ModelNode &node, const LayerKernelSpec &k, const std::string &key, const std::string &module, const std::string &loaded,
                const std::string &out)
    {
        const int rank = spatialRank(node.layer->className());
        const auto &w = k.window;
        const Pads pads = windowPads(w, rank);
        auto &b = m_blocks;
        b.init << "        self.layers[" << pyString(key) << "] = nn.Conv" << rank << "d(" << w.channels << ", " << k.units
               << ", kernel_size=" << tuple(windowValues(w, rank, &LayerKernelSpec::Window::sizeH, &LayerKernelSpec::Window::sizeW))
               << ", stride=" << tuple(windowValues(w, rank, &LayerKernelSpec::Window::strideH, &LayerKernelSpec::Window::strideW))
               << ", dilation=" << tuple(windowValues(w, rank, &LayerKernelSpec::Window::dilationH, &LayerKernelSpec::Window::dilationW))
               << ", bias=" << (k.useBias ? "True" : "False") << ")\n";
        std::string x = in(node) + toChannelsFirst(rank);
        if (pads.any)
            x = "F.pad(" + x + ", " + pads.text + ")";
        b.forward << "        " << out << " = " << activate(k.activation, module + "(" + x + ")" + toChannelsLast(rank)) << "\n";
        b.load << "        _copy(" << loaded << ".weight, _get(w, " << weight(node, "kernel") << ")" << (rank == 1 ? ".permute(2, 1, 0)" : ".permute(3, 2, 0, 1)")
               << ")\n";
        if (k.useBias)
            b.load << "        _copy(" << loaded << ".bias, _get(w, " << weight(node, "bias") << "))\n";
        return Status::success();
    }

    Status pooling(const ModelNode &node, const LayerKernelSpec &k, const std::string &out)
    {
        const int rank = spatialRank(node.layer->className());
        const auto &w = k.window;
        const Pads pads = windowPads(w, rank);
        const std::string size = tuple(windowValues(w, rank, &LayerKernelSpec::Window::sizeH, &LayerKernelSpec::Window::sizeW));
        const std::string stride = tuple(windowValues(w, rank, &LayerKernelSpec::Window::strideH, &LayerKernelSpec::Window::strideW));
        const std::string fn = std::string("F.") + (k.maxPooling ? "max" : "avg") + "_pool" + std::to_string(rank) + "d";
        const std::string x = in(node) + toChannelsFirst(rank);
        std::string y;
        if (!pads.any)
            y = fn + "(" + x + ", " + size + ", " + stride + ")";
        else if (k.maxPooling) // TensorFlow's "same" max never picks the padding
            y = fn + "(F.pad(" + x + ", " + pads.text + ", value=float(\"-inf\")), " + size + ", " + stride + ")";
        else // TensorFlow's "same" average counts only the input's values in each window
            y = "_padded_average(" + fn + ", " + x + ", " + pads.text + ", " + size + ", " + stride + ")";
        m_blocks.forward << "        " << out << " = " << y << toChannelsLast(rank) << "\n";
        return Status::success();
    }

    std::string file(const TorchExportOptions &options, const std::vector<std::string> &arguments)
    {
        std::string inputs, outputs, returned;
        for (std::size_t i = 0; i < m_model.inputs().size(); ++i) {
            const auto &input = m_model.inputs()[i];
            inputs += "    " + arguments[i] + ": [batch, " + ints(input.shape) + "] float32 (model input " + pyString(input.name) + ")\n";
        }
        std::string inputNames, outputNames;
        for (std::size_t i = 0; i < m_model.inputs().size(); ++i)
            inputNames += (i ? ", " : "") + pyString(m_model.inputs()[i].name);
        for (std::size_t o = 0; o < m_model.outputs().size(); ++o) {
            const auto &output = m_model.outputs()[o];
            outputNames += (o ? ", " : "") + pyString(output.name);
            returned += (o ? ", " : "") + m_vars[std::size_t(output.node)];
        }
        if (m_model.outputs().size() != 1)
            returned = "(" + returned + (m_model.outputs().size() == 1 ? ",)" : ")");

        std::ostringstream py;
        py << kTorchExportMarker << " (Sluice " << options.sluiceVersion << ") from the model of " << pyString(options.modelName) << ".\n"
           << "# Regenerate it with sluice export rather than editing it: export overwrites files that start with the line above.\n"
           << "\"\"\"The model as a torch.nn.Module, computing what `sluice predict` computes (inference mode).\n\n"
           << "    from model import load\n"
           << "    model = load()            # reads " << options.weightsFile << " beside this file; load(path) for another\n"
           << "    y = model(" << [&] {
                  std::string a;
                  for (std::size_t i = 0; i < arguments.size(); ++i)
                      a += (i ? ", " : "") + arguments[i];
                  return a;
              }() << ")\n\n"
           << "Inputs, in this order:\n" << inputs
           << "Outputs: " << outputNames << (m_model.outputs().size() == 1 ? " (one tensor)" : " (a tuple, in this order)") << ".\n"
           << "Tensors are channels-last ([batch, ..., channels]) as in Sluice and Keras. The safetensors file keeps\n"
           << "Sluice's names and layouts (\"<layer>/<weight>\"); load() maps them to PyTorch's (see docs/models.md).\n"
           << "\"\"\"\n"
           << "import json\nimport os\nimport struct\n\nimport numpy as np\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"
           << "WEIGHTS_FILE = " << pyString(options.weightsFile) << "\n"
           << "INPUTS = [" << inputNames << "]\n"
           << "OUTPUTS = [" << outputNames << "]\n\n\n"
           << "class SluiceModel(nn.Module):\n"
           << "    def __init__(self):\n"
           << "        super().__init__()\n"
           << "        self.layers = nn.ModuleDict()\n"
           << m_blocks.init.str() << "\n"
           << "    def forward(self, " << [&] {
                  std::string a;
                  for (std::size_t i = 0; i < arguments.size(); ++i)
                      a += (i ? ", " : "") + arguments[i];
                  return a;
              }() << "):\n"
           << m_blocks.forward.str()
           << "        return " << returned << "\n\n\n"
           << kHelpers
           << "def load(path=None):\n"
           << "    \"\"\"SluiceModel with the exported weights, in eval mode (dropout off, BatchNorm's moving statistics).\"\"\"\n"
           << "    if path is None:\n"
           << "        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), WEIGHTS_FILE)\n"
           << "    w = read_safetensors(path)\n"
           << "    model = SluiceModel()\n"
           << "    with torch.no_grad():\n"
           << m_blocks.load.str()
           << "        pass\n"
           << "    return model.eval()\n";
        return py.str();
    }

    static constexpr const char *kHelpers =
        "def read_safetensors(path):\n"
        "    \"\"\"The float32 tensors of a safetensors file by name (numpy and torch only; the safetensors\n"
        "    package's load_file gives the same).\"\"\"\n"
        "    with open(path, \"rb\") as f:\n"
        "        (length,) = struct.unpack(\"<Q\", f.read(8))\n"
        "        header = json.loads(f.read(length))\n"
        "        data = f.read()\n"
        "    tensors = {}\n"
        "    for name, info in header.items():\n"
        "        if name == \"__metadata__\":\n"
        "            continue\n"
        "        if info[\"dtype\"] != \"F32\":\n"
        "            raise ValueError(f\"{path}: {name} is {info['dtype']}, not F32\")\n"
        "        begin, end = info[\"data_offsets\"]\n"
        "        values = np.frombuffer(data[begin:end], dtype=\"<f4\").reshape(info[\"shape\"])\n"
        "        tensors[name] = torch.from_numpy(values.copy())\n"
        "    return tensors\n\n\n"
        "def _get(weights, name):\n"
        "    if name not in weights:\n"
        "        raise KeyError(f\"the weights have no {name!r}: were they exported from this model?\")\n"
        "    return weights[name]\n\n\n"
        "def _copy(target, tensor):\n"
        "    if tuple(target.shape) != tuple(tensor.shape):\n"
        "        raise ValueError(f\"a weight of shape {tuple(tensor.shape)} does not fit {tuple(target.shape)}\")\n"
        "    target.copy_(tensor)\n\n\n"
        "def _zrh_to_rzn(t, units):\n"
        "    \"\"\"Keras's GRU gates (update z, reset r, candidate h) along the first axis, in PyTorch's order (r, z, n).\"\"\"\n"
        "    z, r, h = t.split(units, dim=0)\n"
        "    return torch.cat([r, z, h], dim=0)\n\n\n"
        "def _same_gates(t, units):\n"
        "    \"\"\"Keras's LSTM gates (i, f, c, o) are PyTorch's (i, f, g, o).\"\"\"\n"
        "    return t\n\n\n"
        "def _padded_average(pool, x, pads, size, stride):\n"
        "    \"\"\"Average pooling over TensorFlow's \"same\" padding: each window's mean over the input's values only.\"\"\"\n"
        "    ones = torch.ones_like(x[:, :1])\n"
        "    return pool(F.pad(x, pads), size, stride) / pool(F.pad(ones, pads), size, stride)\n\n\n";

    const Model &m_model;
    std::vector<std::string> m_vars;
    UniqueNames m_locals, m_modules;
    Blocks m_blocks;
};

} // namespace

Result<std::string> torchModelSource(const Model &model, const TorchExportOptions &options)
{
    return Generator(model).run(options);
}

} // namespace sluice::train
