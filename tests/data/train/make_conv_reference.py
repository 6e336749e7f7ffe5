#!/usr/bin/python3
"""Reference values from PyTorch for tst_train_conv: Keras's convolution and pooling layers
(channels-last, TensorFlow's "same" padding) computed with torch.nn.functional in float64.

Writes conv_reference.json next to this script: for each case the layer's Keras class and
config, fixed inputs and weights (rounded to 4 decimals, weights in Keras's layout), an
upstream gradient dy, and torch's output y = layer(x) and gradients of sum(y * dy) with
respect to x and to every weight (in Keras's layout and order: kernel, bias).

How Keras's semantics are expressed in torch:
  - channels-last tensors are permuted to torch's channels-first and back;
  - kernels (k, C, F) / (kh, kw, C, F) are permuted to torch's (F, C, k) / (F, C, kh, kw);
  - "same" padding is TensorFlow's: out = ceil(in / stride), total padding
    max((out - 1) * stride + (k - 1) * dilation + 1 - in, 0), the smaller half before. Torch
    pads symmetrically only, so the padding is explicit (F.pad): zeros for convolutions, -inf
    for max pooling (padded positions never win);
  - average pooling with "same" padding divides by the number of positions inside the input,
    as TensorFlow does: the window sums of the zero-padded input divided by those of a
    zero-padded mask of ones. Where the padding is symmetric this is checked against torch's
    own avg_pool with count_include_pad=False;
  - max pooling inputs are distinct values, so that the maximum (and the gradient's target,
    the first maximum in window order in both TensorFlow and torch) is unambiguous.

Run once with Debian's interpreter (python3-torch, python3-numpy) and commit the output; the
tests do not need Python:  /usr/bin/python3 tests/data/train/make_conv_reference.py
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20250301)


def arr(shape, lo, hi):
    return np.round(rng.uniform(lo, hi, size=shape), 4).astype(np.float32)


def distinct(shape):
    """Distinct values 0.01 apart in random order, centred on 0: no ties for max pooling."""
    n = int(np.prod(shape))
    return np.round((rng.permutation(n) - n / 2) * 0.01, 4).astype(np.float32).reshape(shape)


def tensor_json(a):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": [float(x) for x in a.reshape(-1)]}


def as_list(v, rank):
    return list(v) if isinstance(v, (list, tuple)) else [v] * rank


def tf_padding(size, k, stride, dilation, padding):
    """TensorFlow's padding (before, after) along one axis."""
    if padding == "valid":
        return 0, 0
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def to_channels_first(x, rank):
    return x.permute(0, 2, 1) if rank == 1 else x.permute(0, 3, 1, 2)


def to_channels_last(x, rank):
    return x.permute(0, 2, 1) if rank == 1 else x.permute(0, 2, 3, 1)


def torch_pad(x_cf, rank, pads, value=0.0):
    """F.pad takes the last axis first: (left, right) or (left, right, top, bottom)."""
    flat = []
    for before, after in reversed(pads):
        flat += [before, after]
    return F.pad(x_cf, flat, value=value)


ACTIVATIONS = {"linear": lambda y: y, "relu": F.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "gelu": F.gelu}


def finish(name, cls, config, x, params, y_fn):
    """Runs y_fn on float64 leaves, backpropagates sum(y * dy) and packs the case."""
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    pts = [torch.tensor(p.astype(np.float64), requires_grad=True) for p in params]
    y = y_fn(xt, *pts)
    dy = arr(tuple(y.shape), -1, 1)
    (y * torch.tensor(dy.astype(np.float64))).sum().backward()
    return {
        "name": name,
        "class_name": cls,
        "config": config,
        "x": tensor_json(x),
        "params": [tensor_json(p) for p in params],
        "dy": tensor_json(dy),
        "y": tensor_json(y.detach().numpy()),
        "dx": tensor_json(xt.grad.numpy()),
        "grads": [tensor_json(p.grad.numpy()) for p in pts],
    }


def conv_case(name, rank, x_shape, filters, kernel_size, strides=1, padding="valid", dilation=1, activation="linear", use_bias=True):
    ks, ss, ds = as_list(kernel_size, rank), as_list(strides, rank), as_list(dilation, rank)
    channels = x_shape[-1]
    x = arr(x_shape, -1, 1)
    params = [arr(tuple(ks) + (channels, filters), -0.5, 0.5)]
    if use_bias:
        params.append(arr((filters,), -0.5, 0.5))
    pads = [tf_padding(x_shape[1 + i], ks[i], ss[i], ds[i], padding) for i in range(rank)]

    def run(xt, kernel, bias=None):
        # (k, C, F) -> (F, C, k); (kh, kw, C, F) -> (F, C, kh, kw).
        w = kernel.permute(2, 1, 0) if rank == 1 else kernel.permute(3, 2, 0, 1)
        xp = torch_pad(to_channels_first(xt, rank), rank, pads)
        conv = F.conv1d if rank == 1 else F.conv2d
        y = conv(xp, w, bias, stride=ss, dilation=ds)
        return to_channels_last(ACTIVATIONS[activation](y), rank)

    config = {"filters": filters, "kernel_size": kernel_size, "strides": strides, "padding": padding, "dilation_rate": dilation,
              "activation": activation, "use_bias": use_bias}
    return finish(name, "Conv%dD" % rank, config, x, params, run)


def pool_case(name, rank, kind, x_shape, pool_size=2, strides=None, padding="valid"):
    ps = as_list(pool_size, rank)
    ss = as_list(strides if strides is not None else pool_size, rank)
    x = distinct(x_shape) if kind == "max" else arr(x_shape, -1, 1)
    pads = [tf_padding(x_shape[1 + i], ps[i], ss[i], 1, padding) for i in range(rank)]

    def run(xt):
        xc = to_channels_first(xt, rank)
        if kind == "max":
            pool = F.max_pool1d if rank == 1 else F.max_pool2d
            y = pool(torch_pad(xc, rank, pads, value=-math.inf), ps, ss)
        else:
            pool = F.avg_pool1d if rank == 1 else F.avg_pool2d
            sums = pool(torch_pad(xc, rank, pads), ps, ss)
            counts = pool(torch_pad(torch.ones_like(xc), rank, pads), ps, ss)
            y = sums / counts
            symmetric = all(b == a and b <= p // 2 for (b, a), p in zip(pads, ps))
            if symmetric:
                own = pool(xc, ps, ss, padding=[b for b, _ in pads], count_include_pad=False)
                assert torch.allclose(own, y, rtol=0, atol=1e-12), name
        return to_channels_last(y, rank)

    config = {"pool_size": pool_size, "strides": strides, "padding": padding}
    cls = ("MaxPooling%dD" if kind == "max" else "AveragePooling%dD") % rank
    return finish(name, cls, config, x, [], run)


def global_case(name, rank, kind, x_shape, keepdims=False):
    x = distinct(x_shape) if kind == "max" else arr(x_shape, -1, 1)
    axes = tuple(range(1, 1 + rank))

    def run(xt):
        return xt.amax(dim=axes, keepdim=keepdims) if kind == "max" else xt.mean(dim=axes, keepdim=keepdims)

    cls = ("GlobalMaxPooling%dD" if kind == "max" else "GlobalAveragePooling%dD") % rank
    return finish(name, cls, {"keepdims": keepdims}, x, [], run)


def main():
    cases = [
        conv_case("conv1d valid", 1, (2, 7, 3), 4, 3),
        conv_case("conv1d same stride 2", 1, (2, 9, 2), 3, 4, strides=2, padding="same"),
        conv_case("conv1d same dilated relu", 1, (1, 8, 3), 2, 3, padding="same", dilation=2, activation="relu"),
        conv_case("conv1d valid stride 3 no bias", 1, (2, 10, 2), 3, [2], strides=[3], use_bias=False),
        conv_case("conv2d valid tanh", 2, (2, 5, 6, 3), 4, [3, 3], activation="tanh"),
        conv_case("conv2d same strides", 2, (2, 5, 7, 2), 3, [3, 2], strides=[2, 2], padding="same"),
        conv_case("conv2d same even kernel no bias", 2, (1, 6, 5, 2), 2, 4, padding="same", use_bias=False),
        conv_case("conv2d valid dilated", 2, (2, 6, 7, 2), 3, [2, 3], dilation=[2, 1]),
        conv_case("conv2d pointwise gelu", 2, (2, 3, 4, 5), 3, 1, activation="gelu"),
        conv_case("conv2d 1x1 stride 2 same", 2, (1, 5, 5, 3), 2, 1, strides=2, padding="same"),
        pool_case("max1d valid", 1, "max", (2, 7, 3)),
        pool_case("max1d same stride 1", 1, "max", (2, 6, 2), pool_size=3, strides=1, padding="same"),
        pool_case("max2d valid", 2, "max", (2, 5, 6, 3), pool_size=[2, 2]),
        pool_case("max2d same overlapping", 2, "max", (2, 5, 7, 2), pool_size=[3, 3], strides=[2, 2], padding="same"),
        pool_case("max2d same asymmetric", 2, "max", (1, 5, 5, 2), pool_size=2, padding="same"),
        pool_case("avg1d same", 1, "avg", (2, 7, 3), pool_size=2, padding="same"),
        pool_case("avg2d valid overlapping", 2, "avg", (2, 6, 6, 2), pool_size=3, strides=2),
        pool_case("avg2d same", 2, "avg", (2, 5, 7, 2), pool_size=[3, 2], strides=[2, 3], padding="same"),
        pool_case("avg2d same stride 1", 2, "avg", (1, 4, 4, 2), pool_size=3, strides=1, padding="same"),
        global_case("global avg1d", 1, "avg", (2, 5, 3)),
        global_case("global avg2d keepdims", 2, "avg", (2, 3, 4, 3), keepdims=True),
        global_case("global max1d", 1, "max", (2, 6, 3)),
        global_case("global max2d", 2, "max", (2, 3, 4, 3)),
    ]
    out = {"generator": "make_conv_reference.py", "torch": torch.__version__, "cases": cases}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print("wrote %d cases to %s" % (len(cases), path))


if __name__ == "__main__":
    main()
