#include "train/interchange/onnx_export.h"

#include "train/model/model.h"

#include <onnx/onnx_pb.h> // defines ONNX_API, then includes the generated onnx-ml.pb.h

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sluice::train {
namespace {

constexpr int kOpset = 17; // LayerNormalization is an operator from 17 on

// The graph being written: unique value names, initializers, nodes.
class Graph
{
public:
    explicit Graph(onnx::GraphProto &g) : m_g(g) {}

    std::string fresh(const std::string &base) { return base + "/" + std::to_string(m_counter++); }

    std::string floats(const std::string &name, const std::vector<std::int64_t> &dims, const float *values)
    {
        onnx::TensorProto *t = m_g.add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        std::size_t count = 1;
        for (auto d : dims) {
            t->add_dims(d);
            count *= std::size_t(d);
        }
        t->set_raw_data(reinterpret_cast<const char *>(values), count * sizeof(float)); // little-endian, as ONNX stores raw data
        return name;
    }
    std::string floats(const std::string &name, const std::vector<std::int64_t> &dims, const std::vector<float> &values)
    {
        return floats(name, dims, values.data());
    }
    std::string ints(const std::string &name, const std::vector<std::int64_t> &values)
    {
        onnx::TensorProto *t = m_g.add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(std::int64_t(values.size()));
        t->set_raw_data(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(std::int64_t));
        return name;
    }

    onnx::NodeProto &node(const std::string &op, const std::vector<std::string> &inputs, const std::vector<std::string> &outputs)
    {
        onnx::NodeProto *n = m_g.add_node();
        n->set_op_type(op);
        n->set_name(outputs.front());
        for (const auto &i : inputs)
            n->add_input(i);
        for (const auto &o : outputs)
            n->add_output(o);
        return *n;
    }
    // One output, named after `base`.
    std::string op(const std::string &op, const std::vector<std::string> &inputs, const std::string &base)
    {
        const std::string out = fresh(base);
        node(op, inputs, {out});
        return out;
    }

private:
    onnx::GraphProto &m_g;
    int m_counter = 0;
};

void attr(onnx::NodeProto &n, const std::string &name, std::int64_t v)
{
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}
void attr(onnx::NodeProto &n, const std::string &name, float v)
{
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
}
void attr(onnx::NodeProto &n, const std::string &name, const std::vector<std::int64_t> &v)
{
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v)
        a->add_ints(x);
}
void attr(onnx::NodeProto &n, const std::string &name, const std::vector<std::string> &v)
{
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const auto &x : v)
        a->add_strings(x);
}

const char *onnxActivation(ActivationKind kind) { return kind == ActivationKind::Tanh ? "Tanh" : "Sigmoid"; }

// The activation after a Dense, a Conv or on its own.
std::string activate(Graph &g, ActivationKind kind, const std::string &x, const std::string &base)
{
    switch (kind) {
    case ActivationKind::Linear: return x;
    case ActivationKind::Relu: return g.op("Relu", {x}, base);
    case ActivationKind::Tanh: return g.op("Tanh", {x}, base);
    case ActivationKind::Sigmoid: return g.op("Sigmoid", {x}, base);
    case ActivationKind::Softmax: {
        const std::string out = g.fresh(base);
        attr(g.node("Softmax", {x}, {out}), "axis", std::int64_t(-1));
        return out;
    }
    case ActivationKind::Gelu: {
        // Exact GELU, 0.5 x (1 + erf(x / sqrt 2)): opset 17 has no Gelu operator.
        const float invSqrt2 = float(1.0 / std::sqrt(2.0)), half = 0.5f, one = 1.0f;
        const std::string e = g.op("Erf", {g.op("Mul", {x, g.floats(g.fresh(base + "/inv_sqrt2"), {}, &invSqrt2)}, base)}, base);
        const std::string s = g.op("Add", {e, g.floats(g.fresh(base + "/one"), {}, &one)}, base);
        return g.op("Mul", {g.op("Mul", {x, s}, base), g.floats(g.fresh(base + "/half"), {}, &half)}, base);
    }
    }
    return x;
}

std::int64_t padAfter(std::int64_t in, std::int64_t out, std::int64_t size, std::int64_t stride, std::int64_t dilation, std::int64_t before)
{
    return std::max<std::int64_t>(0, (out - 1) * stride + (size - 1) * dilation + 1 - in - before);
}

// ONNX's pads [begin..., end...] for the window's spatial axes.
std::vector<std::int64_t> pads(const LayerKernelSpec::Window &w, int rank)
{
    const std::int64_t right = padAfter(w.inW, w.outW, w.sizeW, w.strideW, w.dilationW, w.padLeft);
    if (rank == 1)
        return {w.padLeft, right};
    return {w.padTop, w.padLeft, padAfter(w.inH, w.outH, w.sizeH, w.strideH, w.dilationH, w.padTop), right};
}
std::vector<std::int64_t> pick(const LayerKernelSpec::Window &w, int rank, std::int64_t h, std::int64_t wd)
{
    (void)w;
    return rank == 1 ? std::vector<std::int64_t>{wd} : std::vector<std::int64_t>{h, wd};
}

std::vector<std::int64_t> toFirst(int rank) { return rank == 1 ? std::vector<std::int64_t>{0, 2, 1} : std::vector<std::int64_t>{0, 3, 1, 2}; }
std::vector<std::int64_t> toLast(int rank) { return rank == 1 ? std::vector<std::int64_t>{0, 2, 1} : std::vector<std::int64_t>{0, 2, 3, 1}; }

class Exporter
{
public:
    Exporter(const Model &model, std::span<const float> weights, onnx::GraphProto &g) : m_model(model), m_weights(weights), m_g(g) {}

    Status run()
    {
        const auto &nodes = m_model.nodes();
        m_values.resize(nodes.size());
        for (std::size_t i = 0; i < m_model.inputs().size(); ++i)
            m_values[i] = m_model.inputs()[i].name;
        for (std::size_t i = m_model.inputs().size(); i < nodes.size(); ++i)
            if (auto s = layer(nodes[i], m_values[i]); !s.ok())
                return s;
        return Status::success();
    }
    const std::string &value(int node) const { return m_values[std::size_t(node)]; }

private:
    const float *param(const ModelNode &node, const std::string &name) const
    {
        for (std::size_t p : node.params)
            if (m_model.parameters()[p].name == node.name + "/" + name)
                return m_weights.data() + m_model.parameters()[p].offset;
        return nullptr;
    }
    std::string weightAsIs(const ModelNode &node, const std::string &name)
    {
        for (std::size_t p : node.params) {
            const auto &e = m_model.parameters()[p];
            if (e.name == node.name + "/" + name)
                return m_g.floats(e.name, e.shape, m_weights.data() + e.offset);
        }
        return {};
    }
    const Shape &inShape(const ModelNode &node, std::size_t k = 0) const { return m_model.nodes()[std::size_t(node.inputs[k])].shape; }
    std::string in(const ModelNode &node, std::size_t k = 0) const { return m_values[std::size_t(node.inputs[k])]; }

    Status layer(const ModelNode &node, std::string &out)
    {
        const LayerKernelSpec k = node.layer->kernelSpec();
        const std::string &n = node.name;
        Graph &g = m_g;
        switch (k.kind) {
        case LayerKernelSpec::Kind::Dense: {
            std::string y = g.op("MatMul", {in(node), weightAsIs(node, "kernel")}, n);
            if (k.useBias)
                y = g.op("Add", {y, weightAsIs(node, "bias")}, n);
            out = activate(g, k.activation, y, n);
            return Status::success();
        }
        case LayerKernelSpec::Kind::Activation:
            out = activate(g, k.activation, in(node), n);
            if (out == in(node))
                out = g.op("Identity", {in(node)}, n);
            return Status::success();
        case LayerKernelSpec::Kind::Dropout: // the identity in inference
            out = g.op("Identity", {in(node)}, n);
            return Status::success();
        case LayerKernelSpec::Kind::Reshape: {
            std::vector<std::int64_t> shape{0}; // 0: the batch dimension as it is
            shape.insert(shape.end(), node.shape.begin(), node.shape.end());
            out = g.op("Reshape", {in(node), g.ints(g.fresh(n + "/shape"), shape)}, n);
            return Status::success();
        }
        case LayerKernelSpec::Kind::Concatenate: {
            std::vector<std::string> ins;
            for (std::size_t i = 0; i < node.inputs.size(); ++i)
                ins.push_back(in(node, i));
            out = g.fresh(n);
            attr(g.node("Concat", ins, {out}), "axis", std::int64_t(-1));
            return Status::success();
        }
        case LayerKernelSpec::Kind::RepeatVector: {
            const std::string u = g.op("Unsqueeze", {in(node), g.ints(g.fresh(n + "/axes"), {1})}, n);
            out = g.op("Expand", {u, g.ints(g.fresh(n + "/repeat"), {1, k.repeats, 1})}, n);
            return Status::success();
        }
        case LayerKernelSpec::Kind::LayerNormalization: {
            const std::int64_t features = node.shape.back();
            std::string scale = weightAsIs(node, "gamma");
            if (scale.empty())
                scale = g.floats(g.fresh(n + "/ones"), {features}, std::vector<float>(std::size_t(features), 1.0f));
            std::vector<std::string> ins{in(node), scale};
            if (std::string bias = weightAsIs(node, "beta"); !bias.empty())
                ins.push_back(bias);
            out = g.fresh(n);
            auto &ln = g.node("LayerNormalization", ins, {out});
            attr(ln, "axis", std::int64_t(-1));
            attr(ln, "epsilon", float(k.epsilon));
            return Status::success();
        }
        case LayerKernelSpec::Kind::BatchNormalization: {
            // Inference: (x - mean) / sqrt(var + eps) * gamma + beta, folded into x * scale + shift.
            const std::int64_t c = node.shape.back();
            const float *gamma = param(node, "gamma"), *beta = param(node, "beta"), *mean = param(node, "moving_mean"),
                        *var = param(node, "moving_variance");
            std::vector<float> scale(static_cast<std::size_t>(c)), shift(static_cast<std::size_t>(c));
            for (std::int64_t i = 0; i < c; ++i) {
                const double s = (gamma ? gamma[i] : 1.0) / std::sqrt(double(var[i]) + k.epsilon);
                scale[std::size_t(i)] = float(s);
                shift[std::size_t(i)] = float((beta ? beta[i] : 0.0) - double(mean[i]) * s);
            }
            const std::string y = g.op("Mul", {in(node), g.floats(n + "/scale", {c}, scale)}, n);
            out = g.op("Add", {y, g.floats(n + "/shift", {c}, shift)}, n);
            return Status::success();
        }
        case LayerKernelSpec::Kind::Embedding: {
            const std::string ids = g.fresh(n + "/ids");
            attr(g.node("Cast", {in(node)}, {ids}), "to", std::int64_t(onnx::TensorProto::INT64)); // truncates, as Sluice does
            out = g.fresh(n);
            attr(g.node("Gather", {weightAsIs(node, "embeddings"), ids}, {out}), "axis", std::int64_t(0));
            return Status::success();
        }
        case LayerKernelSpec::Kind::Gru:
        case LayerKernelSpec::Kind::Lstm:
            return recurrent(node, k, out);
        case LayerKernelSpec::Kind::Conv: {
            const int rank = node.layer->className().find("1D") != std::string::npos ? 1 : 2;
            const auto &w = k.window;
            // Keras's kernel [k..., in, filters] as ONNX's [filters, in, k...].
            const ParameterEntry *kernel = nullptr;
            for (std::size_t p : node.params)
                if (m_model.parameters()[p].name == n + "/kernel")
                    kernel = &m_model.parameters()[p];
            const std::int64_t kh = rank == 1 ? 1 : kernel->shape[0], kw = kernel->shape[std::size_t(rank - 1)], cin = w.channels, cout = k.units;
            std::vector<float> onnxKernel(std::size_t(kh * kw * cin * cout));
            const float *src = m_weights.data() + kernel->offset;
            for (std::int64_t a = 0; a < kh; ++a)
                for (std::int64_t b = 0; b < kw; ++b)
                    for (std::int64_t i = 0; i < cin; ++i)
                        for (std::int64_t o = 0; o < cout; ++o)
                            onnxKernel[std::size_t(((o * cin + i) * kh + a) * kw + b)] = src[((a * kw + b) * cin + i) * cout + o];
            std::vector<std::int64_t> dims{cout, cin};
            if (rank == 2)
                dims.push_back(kh);
            dims.push_back(kw);
            std::vector<std::string> ins{transpose(in(node), toFirst(rank), n), g.floats(n + "/kernel", dims, onnxKernel)};
            if (k.useBias)
                ins.push_back(weightAsIs(node, "bias"));
            const std::string y = g.fresh(n);
            auto &conv = g.node("Conv", ins, {y});
            attr(conv, "kernel_shape", pick(w, rank, w.sizeH, w.sizeW));
            attr(conv, "strides", pick(w, rank, w.strideH, w.strideW));
            attr(conv, "dilations", pick(w, rank, w.dilationH, w.dilationW));
            attr(conv, "pads", pads(w, rank));
            out = activate(g, k.activation, transpose(y, toLast(rank), n), n);
            return Status::success();
        }
        case LayerKernelSpec::Kind::Pooling: {
            const int rank = node.layer->className().find("1D") != std::string::npos ? 1 : 2;
            const auto &w = k.window;
            const std::string y = g.fresh(n);
            auto &pool = g.node(k.maxPooling ? "MaxPool" : "AveragePool", {transpose(in(node), toFirst(rank), n)}, {y});
            attr(pool, "kernel_shape", pick(w, rank, w.sizeH, w.sizeW));
            attr(pool, "strides", pick(w, rank, w.strideH, w.strideW));
            attr(pool, "pads", pads(w, rank));
            if (!k.maxPooling)
                attr(pool, "count_include_pad", std::int64_t(0)); // TensorFlow's "same" averages the input's values only
            out = transpose(y, toLast(rank), n);
            return Status::success();
        }
        case LayerKernelSpec::Kind::GlobalPooling: {
            const std::size_t spatial = inShape(node).size() - 1;
            std::vector<std::int64_t> axes{1};
            if (spatial == 2)
                axes.push_back(2);
            out = g.fresh(n);
            auto &reduce = g.node(k.maxPooling ? "ReduceMax" : "ReduceMean", {in(node)}, {out});
            attr(reduce, "axes", axes);
            attr(reduce, "keepdims", std::int64_t(node.shape.size() == inShape(node).size() ? 1 : 0));
            return Status::success();
        }
        case LayerKernelSpec::Kind::None:
            break;
        }
        Error e = Error::unsupported(n, "layer " + node.layer->className() + " has no ONNX equivalent in sluice export yet");
        e.layer = n;
        return e;
    }

    std::string transpose(const std::string &x, const std::vector<std::int64_t> &perm, const std::string &base)
    {
        const std::string out = m_g.fresh(base + "/transposed");
        attr(m_g.node("Transpose", {x}, {out}), "perm", perm);
        return out;
    }

    Status recurrent(const ModelNode &node, const LayerKernelSpec &k, std::string &out)
    {
        const bool gru = k.kind == LayerKernelSpec::Kind::Gru;
        const std::string &n = node.name;
        const std::int64_t H = k.units, I = inShape(node).back(), G = gru ? 3 : 4;
        // ONNX's gates: a GRU's z, r, h are Keras's; an LSTM's i, o, f, c are Keras's i, f, c, o reordered.
        const std::vector<int> order = gru ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 3, 1, 2};
        // Keras's [in, G*H] (gate blocks along columns) as ONNX's [1, G*H, in], gates in ONNX order.
        auto rows = [&](const float *m, std::int64_t in) {
            std::vector<float> t(std::size_t(G * H * in));
            for (std::int64_t gate = 0; gate < G; ++gate)
                for (std::int64_t h = 0; h < H; ++h)
                    for (std::int64_t i = 0; i < in; ++i)
                        t[std::size_t((gate * H + h) * in + i)] = m[i * G * H + order[std::size_t(gate)] * H + h];
            return t;
        };
        auto reorder = [&](const float *v) {
            std::vector<float> t(std::size_t(G * H));
            for (std::int64_t gate = 0; gate < G; ++gate)
                for (std::int64_t h = 0; h < H; ++h)
                    t[std::size_t(gate * H + h)] = v[order[std::size_t(gate)] * H + h];
            return t;
        };
        // Time first (ONNX's layout 0: onnxruntime runs no other).
        std::vector<std::string> ins{transpose(in(node), {1, 0, 2}, n), m_g.floats(n + "/W", {1, G * H, I}, rows(param(node, "kernel"), I)),
                                     m_g.floats(n + "/R", {1, G * H, H}, rows(param(node, "recurrent_kernel"), H))};
        if (k.useBias) {
            const float *bias = param(node, "bias");
            std::vector<float> b = reorder(bias); // the input biases (a GRU's first row)
            std::vector<float> rb = gru ? reorder(bias + G * H) : std::vector<float>(std::size_t(G * H), 0.0f); // Keras's LSTM: one bias
            b.insert(b.end(), rb.begin(), rb.end());
            ins.push_back(m_g.floats(n + "/B", {1, 2 * G * H}, b));
        }
        const std::string y = m_g.fresh(n + "/Y"), yh = m_g.fresh(n + "/Y_h");
        std::vector<std::string> outs{y, yh};
        if (!gru)
            outs.push_back(m_g.fresh(n + "/Y_c"));
        auto &rnn = m_g.node(gru ? "GRU" : "LSTM", ins, outs);
        attr(rnn, "hidden_size", H);
        const std::string f = onnxActivation(k.recurrentActivation), act = onnxActivation(k.activation);
        attr(rnn, "activations", gru ? std::vector<std::string>{f, act} : std::vector<std::string>{f, act, act});
        if (gru)
            attr(rnn, "linear_before_reset", std::int64_t(1)); // Keras's reset_after
        // Y: [steps, 1, batch, units]; Y_h: [1, batch, units].
        if (k.returnSequences)
            out = transpose(m_g.op("Squeeze", {y, m_g.ints(m_g.fresh(n + "/axes"), {1})}, n), {1, 0, 2}, n);
        else
            out = m_g.op("Squeeze", {yh, m_g.ints(m_g.fresh(n + "/axes"), {0})}, n);
        return Status::success();
    }

    const Model &m_model;
    std::span<const float> m_weights;
    Graph m_g;
    std::vector<std::string> m_values;
};

void valueInfo(onnx::ValueInfoProto &v, const std::string &name, const Shape &sample)
{
    v.set_name(name);
    auto *tensor = v.mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    auto *shape = tensor->mutable_shape();
    shape->add_dim()->set_dim_param("batch");
    for (auto d : sample)
        shape->add_dim()->set_dim_value(d);
}

} // namespace

bool onnxExportAvailable() { return true; }

Result<std::string> onnxModelBytes(const Model &model, std::span<const float> weights, const std::string &name)
{
    onnx::ModelProto proto;
    proto.set_ir_version(8); // the IR version of opset 17
    proto.set_producer_name("sluice");
    proto.set_model_version(1);
    auto *opset = proto.add_opset_import();
    opset->set_domain("");
    opset->set_version(kOpset);
    onnx::GraphProto *g = proto.mutable_graph();
    g->set_name(name.empty() ? "model" : name);
    for (const auto &input : model.inputs())
        valueInfo(*g->add_input(), input.name, input.shape);
    Exporter exporter(model, weights, *g);
    if (auto s = exporter.run(); !s.ok())
        return s.error();
    for (const auto &output : model.outputs()) {
        // Each output gets a value of its own name (an Identity where the layer's value has another).
        auto *n = g->add_node();
        n->set_op_type("Identity");
        n->set_name(output.name + "/output");
        n->add_input(exporter.value(output.node));
        n->add_output(output.name);
        valueInfo(*g->add_output(), output.name, model.nodes()[std::size_t(output.node)].shape);
    }
    std::string bytes;
    if (!proto.SerializeToString(&bytes))
        return Error::failed("onnx", "protobuf could not serialize the model");
    return bytes;
}

} // namespace sluice::train
