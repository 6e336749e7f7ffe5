#!/usr/bin/python3
"""Reference values from PyTorch for tst_train_losses and tst_train_optimizers.

Writes torch_reference.json next to this script: fixed inputs, per-sample losses and
d(scale * sum_i w_i * loss_i)/dpred by autograd for each loss, and parameter trajectories of
the optimizers whose update rule torch shares with Keras for a constant learning rate:

  SGD (momentum, nesterov): torch's buffer b = mu b + g, w -= lr b equals Keras's
      v = mu v - lr g, w += v with v = -lr b.
  Adam / AdamW / AMSGrad with epsilon = 0: torch's lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps) and
      Keras's lr sqrt(bc2)/bc1 * m / (sqrt(v) + eps) differ only in where epsilon sits.
  RMSprop with epsilon = 0: torch adds epsilon after the root, Keras inside it.

Run once with Debian's interpreter (python3-torch, python3-numpy) and commit the output; the
tests do not need Python:  /usr/bin/python3 tests/data/train/make_loss_reference.py
"""
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20240611)


def arr(shape, lo, hi):
    return np.round(rng.uniform(lo, hi, size=shape), 4).astype(np.float32)


def tensor_json(a):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": [float(x) for x in a.reshape(-1)]}


def per_sample_mean(elementwise):
    """Mean over every non-batch axis."""
    return elementwise.reshape(elementwise.shape[0], -1).mean(dim=1)


def soft_cross_entropy(logits, target, smoothing=0.0):
    """-sum t log_softmax(x) over the last axis, then the mean over the other axes."""
    classes = logits.shape[-1]
    t = target * (1 - smoothing) + smoothing / classes
    ce = -(t * F.log_softmax(logits, dim=-1)).sum(dim=-1)
    return ce.reshape(ce.shape[0], -1).mean(dim=1)


def loss_case(name, spec, pred, target, fn, weights=None, scale=1.0):
    p = torch.tensor(pred, dtype=torch.float64, requires_grad=True)
    t = torch.tensor(target, dtype=torch.float64)
    per_sample = fn(p, t)
    w = torch.ones(p.shape[0], dtype=torch.float64) if weights is None else torch.tensor(weights, dtype=torch.float64)
    (scale * (w * per_sample).sum()).backward()
    return {
        "name": name,
        "loss": spec,
        "pred": tensor_json(pred),
        "target": tensor_json(target),
        "weights": [] if weights is None else [float(x) for x in weights],
        "scale": scale,
        "per_sample": [float(x) for x in per_sample.detach()],
        "dpred": tensor_json(p.grad.numpy()),
    }


def losses():
    cases = []
    B = 4
    w = [0.5, 1.0, 2.0, 0.0]
    p, t = arr((B, 3), -2, 2), arr((B, 3), -2, 2)
    cases.append(loss_case("mse", "mse", p, t, lambda p, t: per_sample_mean(F.mse_loss(p, t, reduction="none"))))
    cases.append(loss_case("mse weighted", "mean_squared_error", p, t,
                           lambda p, t: per_sample_mean(F.mse_loss(p, t, reduction="none")), w, 0.25))
    cases.append(loss_case("mae", "mae", p, t, lambda p, t: per_sample_mean(F.l1_loss(p, t, reduction="none")), w, 0.25))
    p3, t3 = arr((B, 2, 3), -1, 1), arr((B, 2, 3), -1, 1)
    cases.append(loss_case("mse sequence", "mse", p3, t3, lambda p, t: per_sample_mean(F.mse_loss(p, t, reduction="none"))))
    # Errors in [-4, 4]: both of huber's regions for delta 1 and 2.
    hp, ht = arr((B, 5), -2, 2), arr((B, 5), -2, 2)
    cases.append(loss_case("huber", "huber", hp, ht, lambda p, t: per_sample_mean(F.huber_loss(p, t, reduction="none", delta=1.0)), w, 0.5))
    cases.append(loss_case("huber delta 2", {"name": "huber", "delta": 2.0}, hp, ht,
                           lambda p, t: per_sample_mean(F.huber_loss(p, t, reduction="none", delta=2.0))))
    # Binary cross-entropy: probabilities away from the clip range, hard and soft targets.
    bp = arr((B, 3), 0.05, 0.95)
    bt = np.array([[0, 1, 1], [1, 0, 0], [0.25, 0.75, 1], [0, 0, 1]], dtype=np.float32)
    cases.append(loss_case("bce", "binary_crossentropy", bp, bt,
                           lambda p, t: per_sample_mean(F.binary_cross_entropy(p, t, reduction="none")), w, 0.25))
    bl = arr((B, 3), -6, 6)
    bl[0, 0], bl[1, 1] = 40.0, -40.0  # log1p(exp(-|x|)) keeps these finite
    cases.append(loss_case("bce logits", {"name": "binary_crossentropy", "from_logits": True}, bl, bt,
                           lambda p, t: per_sample_mean(F.binary_cross_entropy_with_logits(p, t, reduction="none")), w, 0.25))
    cases.append(loss_case("bce logits smoothing", {"name": "binary_crossentropy", "from_logits": True, "label_smoothing": 0.1}, bl, bt,
                           lambda p, t: per_sample_mean(F.binary_cross_entropy_with_logits(p, t * 0.9 + 0.05, reduction="none"))))
    # Categorical: one-hot and soft targets.
    cl = arr((B, 5), -3, 3)
    ct = np.eye(5, dtype=np.float32)[[1, 4, 0, 2]]
    ct[3] = [0.1, 0.2, 0.3, 0.4, 0.0]
    cases.append(loss_case("cce logits", {"name": "categorical_crossentropy", "from_logits": True}, cl, ct,
                           lambda p, t: soft_cross_entropy(p, t), w, 0.25))
    cases.append(loss_case("cce logits smoothing", {"name": "categorical_crossentropy", "from_logits": True, "label_smoothing": 0.2}, cl, ct,
                           lambda p, t: soft_cross_entropy(p, t, 0.2)))
    # Probabilities that do not sum to 1: Keras normalises them first.
    cp = arr((B, 5), 0.05, 1.0)
    cases.append(loss_case("cce probabilities", "categorical_crossentropy", cp, ct,
                           lambda p, t: -(t * torch.log(p / p.sum(dim=-1, keepdim=True))).sum(dim=-1), w, 0.25))
    sl = arr((3, 2, 4), -3, 3)
    st = np.eye(4, dtype=np.float32)[[[0, 3], [1, 1], [2, 0]]]
    cases.append(loss_case("cce logits sequence", {"name": "categorical_crossentropy", "from_logits": True}, sl, st,
                           lambda p, t: soft_cross_entropy(p, t), [1.0, 0.5, 3.0], 1.0 / 3))
    # Sparse: class indices as floats, shapes (), (1,) and per time step.
    sidx = np.array([1, 4, 0, 2], dtype=np.float32)
    cases.append(loss_case("sparse logits", {"name": "sparse_categorical_crossentropy", "from_logits": True}, cl, sidx,
                           lambda p, t: F.cross_entropy(p, t.long(), reduction="none"), w, 0.25))
    cases.append(loss_case("sparse logits (1,)", {"name": "sparse_categorical_crossentropy", "from_logits": True}, cl, sidx.reshape(B, 1),
                           lambda p, t: F.cross_entropy(p, t.reshape(-1).long(), reduction="none")))
    seq_idx = np.array([[[0], [3]], [[1], [1]], [[2], [0]]], dtype=np.float32)
    cases.append(loss_case("sparse logits sequence", {"name": "sparse_categorical_crossentropy", "from_logits": True}, sl, seq_idx,
                           lambda p, t: F.cross_entropy(p.reshape(-1, 4), t.reshape(-1).long(), reduction="none").reshape(3, 2).mean(dim=1),
                           [1.0, 0.5, 3.0], 1.0 / 3))
    sp = np.exp(cl) / np.exp(cl).sum(axis=-1, keepdims=True)  # a softmax's output
    cases.append(loss_case("sparse probabilities", "sparse_categorical_crossentropy", sp.astype(np.float32), sidx,
                           # Keras (TF backend) scores -log(p_y / sum p): the same value as
                           # nll_loss(log p) on a softmax's output, but its gradient has the 1/sum
                           # term for every class.
                           lambda p, t: -torch.log(p.gather(1, t.long()[:, None])[:, 0] / p.sum(dim=-1)), w, 0.25))
    return cases


def optimizers():
    n, steps, lr = 6, 8, 0.05
    w0 = arr((n,), -1, 1)
    grads = arr((steps, n), -1, 1)
    grads[3, 2] = 0.0  # a zero gradient mid-way (no division by zero: v has history)
    runs = [
        ("sgd", {"type": "sgd"}, lambda p: torch.optim.SGD(p, lr=lr)),
        ("sgd momentum", {"type": "sgd", "momentum": 0.9}, lambda p: torch.optim.SGD(p, lr=lr, momentum=0.9)),
        ("sgd nesterov", {"type": "sgd", "momentum": 0.8, "nesterov": True},
         lambda p: torch.optim.SGD(p, lr=lr, momentum=0.8, nesterov=True)),
        ("adam eps 0", {"type": "adam", "epsilon": 0.0}, lambda p: torch.optim.Adam(p, lr=lr, betas=(0.9, 0.999), eps=0.0)),
        ("adam amsgrad eps 0", {"type": "adam", "epsilon": 0.0, "amsgrad": True, "beta_1": 0.8, "beta_2": 0.9},
         lambda p: torch.optim.Adam(p, lr=lr, betas=(0.8, 0.9), eps=0.0, amsgrad=True)),
        ("adamw eps 0", {"type": "adamw", "epsilon": 0.0, "weight_decay": 0.1},
         lambda p: torch.optim.AdamW(p, lr=lr, betas=(0.9, 0.999), eps=0.0, weight_decay=0.1)),
        ("rmsprop eps 0", {"type": "rmsprop", "epsilon": 0.0}, lambda p: torch.optim.RMSprop(p, lr=lr, alpha=0.9, eps=0.0)),
        ("rmsprop momentum centered eps 0", {"type": "rmsprop", "epsilon": 0.0, "momentum": 0.5, "centered": True, "rho": 0.8},
         lambda p: torch.optim.RMSprop(p, lr=lr, alpha=0.8, eps=0.0, momentum=0.5, centered=True)),
    ]
    cases = []
    for name, spec, make in runs:
        p = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
        opt = make([p])
        trajectory = []
        for s in range(steps):
            p.grad = torch.tensor(grads[s], dtype=torch.float64)
            opt.step()
            trajectory.append([float(x) for x in p.detach()])
        cases.append({"name": name, "optimizer": spec, "learning_rate": lr, "initial": [float(x) for x in w0],
                      "grads": [[float(x) for x in g] for g in grads], "trajectory": trajectory})
    return cases


def shortened(obj):
    """Floats to 9 significant digits (a float32 round-trips; references stay far finer than the
    tests' tolerances), recursively."""
    if isinstance(obj, float):
        return float(f"{obj:.9g}")
    if isinstance(obj, list):
        return [shortened(x) for x in obj]
    if isinstance(obj, dict):
        return {k: shortened(v) for k, v in obj.items()}
    return obj


def write_json(path, out):
    """One case per line: small diffs when a reference changes."""
    out = shortened(out)
    with open(path, "w") as f:
        f.write("{\n")
        for i, (key, value) in enumerate(out.items()):
            if isinstance(value, list):
                f.write(f' "{key}": [\n' + ",\n".join("  " + json.dumps(c) for c in value) + "\n ]")
            else:
                f.write(f' "{key}": {json.dumps(value)}')
            f.write(",\n" if i + 1 < len(out) else "\n")
        f.write("}\n")
    print("wrote", path)


def main():
    out = {"generator": "make_loss_reference.py, torch " + torch.__version__, "losses": losses(), "optimizers": optimizers()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_reference.json")
    write_json(path, out)


if __name__ == "__main__":
    main()
