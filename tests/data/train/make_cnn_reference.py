#!/usr/bin/python3
"""Reference training runs from PyTorch for tst_train_cnn: a small channels-last CNN with
BatchNormalization, trained for a few steps exactly as Keras would train it.

The model (Keras layer names; the same JSON is written into the reference so that the test
builds exactly this model):

  image [B=6, 8, 8, 3]
  conv1   Conv2D(4, 3x3, padding same, relu)              -> [6, 8, 8, 4]
  bn      BatchNormalization(momentum 0.9, epsilon 1e-3)  -> [6, 8, 8, 4]
  pool    MaxPooling2D(2)                                  -> [6, 4, 4, 4]
  conv2   Conv2D(5, 3x3, strides 2, padding valid)         -> [6, 1, 1, 5]
  gap     GlobalAveragePooling2D                           -> [6, 5]   (of one position here)
  logits  Dense(3)                                         -> [6, 3]
  loss    sparse_categorical_crossentropy from logits, mean over the batch

Writes cnn_reference.json next to this script: the model, fixed inputs and labels, initial
weights (rounded to 4 decimals, float32 values, in Keras's layouts and named "<layer>/<param>"
as Sluice names them), and for each run the loss of every step (before its update) and the
final weights. Runs: SGD(lr 0.1) and Adam(lr 0.01, beta_1 0.9, beta_2 0.999, epsilon 1e-7),
each with and without the BatchNormalization layer (the test's replica checks use the latter).

How Keras's semantics are expressed in torch (float64 throughout):
  - channels-last tensors are permuted to torch's channels-first and back; Conv2D kernels
    (kh, kw, C, F) are permuted to torch's (F, C, kh, kw); the Dense kernel (in, out) is
    torch's weight transposed (here: used as x @ kernel directly);
  - "same" padding of a 3x3 window at stride 1 is 1 on every side, as in torch;
  - BatchNormalization in training normalises with the batch's biased variance, as torch's
    F.batch_norm does. Keras's moving statistics are
        moving = momentum * moving + (1 - momentum) * batch statistic
    with the BIASED batch variance, whereas torch's running_var uses the unbiased one. The
    script computes Keras's values from the batch statistics of the layer's input, and checks
    them against torch's own running buffers (torch momentum = 1 - Keras momentum): the running
    mean must equal Keras's moving mean, and the running variance must be what the unbiased
    version of the same batch variance gives;
  - Adam: Keras steps  w -= lr sqrt(bc2) / bc1 * m / (sqrt(v) + eps),  torch steps
    w -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps_torch). make_loss_reference.py compares the
    two with epsilon 0, where they agree; here Keras's epsilon 1e-7 is kept and torch is given
    eps_torch = eps / sqrt(bc2) at every step (bc2 = 1 - beta_2^t), which makes the two rules
    identical;
  - SGD without momentum is w -= lr * g in both.

The reference must not depend on rounding: each run is repeated in float32 and its losses and
final weights must agree with the float64 run to 2e-6 relative (five times below the test's
tolerance of 1e-5; Adam's steps are what comes closest), ReLU's inputs stay 1e-5 away from 0 and max pooling's windows have a clear winner (or
a tie of values that ReLU zeroed, whose gradient ReLU discards whichever wins).

Run once with Debian's interpreter (python3-torch, python3-numpy) and commit the output; the
tests do not need Python:  /usr/bin/python3 tests/data/train/make_cnn_reference.py
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20250517)

B, H, W, C = 6, 8, 8, 3
CLASSES = 3
MOMENTUM, EPSILON = 0.9, 1e-3
STEPS = 3
SGD_LR = 0.1
ADAM_LR, BETA_1, BETA_2, ADAM_EPSILON = 0.01, 0.9, 0.999, 1e-7

MODEL = {
    "inputs": [{"name": "image", "feature": "image"}],
    "layers": [
        {"class_name": "Conv2D", "name": "conv1", "filters": 4, "kernel_size": 3, "padding": "same", "activation": "relu"},
        {"class_name": "BatchNormalization", "name": "bn", "momentum": MOMENTUM, "epsilon": EPSILON},
        {"class_name": "MaxPooling2D", "name": "pool", "pool_size": 2},
        {"class_name": "Conv2D", "name": "conv2", "filters": 5, "kernel_size": 3, "strides": 2, "padding": "valid"},
        {"class_name": "GlobalAveragePooling2D", "name": "gap"},
        {"class_name": "Dense", "name": "logits", "units": CLASSES},
    ],
    "outputs": [{"name": "label", "layer": "logits", "target": "label", "loss": "sparse_categorical_crossentropy", "from_logits": True}],
}

MOVING = ("bn/moving_mean", "bn/moving_variance")


def arr(shape, lo, hi):
    return np.round(rng.uniform(lo, hi, size=shape), 4).astype(np.float32)


def tensor_json(a, digits=None):
    """Inputs exactly (float32 values, every digit); results to `digits` significant digits (9: a
    float32 round-trips, far finer than the test's tolerance)."""
    a = np.asarray(a, dtype=np.float64)
    flat = a.reshape(-1)
    data = [float(x) for x in flat] if digits is None else [float(f"{x:.{digits}g}") for x in flat]
    return {"shape": list(a.shape), "data": data}


def initial_weights():
    """Keras layouts. Conv1's bias is centred below 0 so that every channel has inputs that ReLU
    zeroes (a channel ReLU never zeroes would give conv1's bias a gradient of exactly 0 behind
    BatchNormalization, which float32 would see as rounding noise and Adam would amplify)."""
    return {
        "conv1/kernel": arr((3, 3, C, 4), -0.4, 0.4),
        "conv1/bias": arr((4,), -0.15, 0.05),
        "bn/gamma": arr((4,), 0.8, 1.2),
        "bn/beta": arr((4,), -0.2, 0.2),
        # Not Keras's zeros and ones: the update's "momentum * moving" term then shows.
        "bn/moving_mean": arr((4,), -0.2, 0.2),
        "bn/moving_variance": arr((4,), 0.5, 1.5),
        "conv2/kernel": arr((3, 3, 4, 5), -0.3, 0.3),
        "conv2/bias": arr((5,), -0.1, 0.1),
        "logits/kernel": arr((5, CLASSES), -0.6, 0.6),
        "logits/bias": arr((CLASSES,), -0.1, 0.1),
    }


def check_margins(z1, h, dead):
    """ReLU's inputs and max pooling's windows (over h, whose values from inputs ReLU zeroed are
    `dead` per channel) far enough from a change of branch that float32 rounding (Sluice's, ~1e-7
    of values of order 1) cannot take another one."""
    assert z1.abs().min().item() > 1e-5, "a ReLU input within 1e-5 of 0: change the seed"
    # Windows of 2x2 over (B, C, 8, 8): (B, C, 4, 4, 4 values), sorted descending.
    win = h.unfold(2, 2, 2).unfold(3, 2, 2).reshape(h.shape[0], h.shape[1], 4, 4, 4)
    top = win.sort(dim=-1, descending=True).values
    gap = top[..., 0] - top[..., 1]
    # Values ReLU zeroed are identical after BatchNormalization too (an exact tie, whose gradient
    # ReLU discards whichever position takes it); `dead` is computed here in another order than
    # F.batch_norm does, hence the tolerance.
    dead_tie = (gap == 0) & ((top[..., 0] - dead.view(1, -1, 1, 1)).abs() < 1e-9)
    assert bool(((gap > 1e-5) | dead_tie).all()), "a max pooling window without a clear maximum: change the seed"


def forward(x, labels, p, moving, with_bn, dtype, check):
    """The loss of the batch and, with BatchNormalization, the Keras-style moving statistics after
    this training step (torch's running buffers are checked against them)."""
    xc = x.permute(0, 3, 1, 2)
    z1 = F.conv2d(xc, p["conv1/kernel"].permute(3, 2, 0, 1), p["conv1/bias"], padding=1)
    a1 = F.relu(z1)
    new_moving = None
    h = a1
    dead = torch.zeros(a1.shape[1], dtype=a1.dtype)
    if with_bn:
        stat_mean = a1.detach().mean(dim=(0, 2, 3))
        stat_var = a1.detach().var(dim=(0, 2, 3), unbiased=False)
        n = a1.shape[0] * a1.shape[2] * a1.shape[3]
        running_mean = moving["bn/moving_mean"].clone()
        running_var = moving["bn/moving_variance"].clone()
        h = F.batch_norm(a1, running_mean, running_var, p["bn/gamma"], p["bn/beta"], training=True, momentum=1 - MOMENTUM, eps=EPSILON)
        new_moving = {
            "bn/moving_mean": MOMENTUM * moving["bn/moving_mean"] + (1 - MOMENTUM) * stat_mean,
            "bn/moving_variance": MOMENTUM * moving["bn/moving_variance"] + (1 - MOMENTUM) * stat_var,
        }
        tol = 1e-12 if dtype == torch.float64 else 1e-5
        assert torch.allclose(running_mean, new_moving["bn/moving_mean"], rtol=0, atol=tol)
        torch_var = MOMENTUM * moving["bn/moving_variance"] + (1 - MOMENTUM) * stat_var * n / (n - 1)
        assert torch.allclose(running_var, torch_var, rtol=0, atol=tol)
        # What BatchNormalization makes of a value ReLU zeroed, per channel.
        dead = ((0 - stat_mean) / torch.sqrt(stat_var + EPSILON) * p["bn/gamma"].detach() + p["bn/beta"].detach())
        assert bool((p["bn/gamma"] > 0).all()), "gamma must stay positive (ReLU-zeroed values then never beat live ones)"
    if check:
        check_margins(z1.detach(), h.detach(), dead)
    pooled = F.max_pool2d(h, 2)
    z2 = F.conv2d(pooled, p["conv2/kernel"].permute(3, 2, 0, 1), p["conv2/bias"], stride=2)
    features = z2.mean(dim=(2, 3))  # GlobalAveragePooling2D
    logits = features @ p["logits/kernel"] + p["logits/bias"]
    return F.cross_entropy(logits, labels), new_moving


def train(x_np, labels_np, w0, optimizer, with_bn, dtype):
    names = [k for k in w0 if k not in MOVING and (with_bn or not k.startswith("bn/"))]
    p = {k: torch.tensor(w0[k].astype(np.float64), dtype=dtype, requires_grad=True) for k in names}
    moving = {k: torch.tensor(w0[k].astype(np.float64), dtype=dtype) for k in MOVING} if with_bn else {}
    x = torch.tensor(x_np.astype(np.float64), dtype=dtype)
    labels = torch.tensor(labels_np, dtype=torch.long)
    params = [p[k] for k in names]
    if optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=SGD_LR)
    else:
        opt = torch.optim.Adam(params, lr=ADAM_LR, betas=(BETA_1, BETA_2), eps=0.0)
    losses = []
    for t in range(1, STEPS + 1):
        if optimizer == "adam":
            for group in opt.param_groups:  # Keras's epsilon, moved to where torch adds it
                group["eps"] = ADAM_EPSILON / math.sqrt(1 - BETA_2**t)
        opt.zero_grad()
        loss, new_moving = forward(x, labels, p, moving, with_bn, dtype, check=dtype == torch.float64)
        loss.backward()
        opt.step()
        if with_bn:
            moving = new_moving
        losses.append(loss.item())
    final = {k: v.detach().numpy().astype(np.float64) for k, v in p.items()}
    final.update({k: v.numpy().astype(np.float64) for k, v in moving.items()})
    return losses, final


def max_relative_difference(a, b):
    """As the tests' maxRelativeDifference: max |a - b| / max |b|."""
    a, b = np.asarray(a, dtype=np.float64).reshape(-1), np.asarray(b, dtype=np.float64).reshape(-1)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def run_case(name, optimizer, with_bn, x, labels, w0):
    losses, final = train(x, labels, w0, optimizer, with_bn, torch.float64)
    losses32, final32 = train(x, labels, w0, optimizer, with_bn, torch.float32)
    for i, (l64, l32) in enumerate(zip(losses, losses32)):
        assert abs(l64 - l32) <= 2e-6 * abs(l64), f"{name}: step {i + 1} loss depends on rounding ({l64} vs {l32})"
    for k in final:
        d = max_relative_difference(final32[k], final[k])
        assert d < 2e-6, f"{name}: {k} depends on rounding (float32 differs by {d:.2e})"
        assert max_relative_difference(final[k], w0[k]) > 1e-4, f"{name}: {k} hardly changed"
    spec = {"type": "sgd", "learning_rate": SGD_LR} if optimizer == "sgd" else \
        {"type": "adam", "learning_rate": ADAM_LR, "beta_1": BETA_1, "beta_2": BETA_2, "epsilon": ADAM_EPSILON}
    return {
        "name": name,
        "optimizer": spec,
        "batch_normalization": with_bn,
        "losses": [float(f"{v:.12g}") for v in losses],
        "final": {k: tensor_json(v, 9) for k, v in final.items()},
    }


def main():
    x = arr((B, H, W, C), -1, 1)
    labels = np.array([0, 1, 2, 2, 0, 1], dtype=np.int64)
    w0 = initial_weights()
    runs = [
        run_case("sgd", "sgd", True, x, labels, w0),
        run_case("adam", "adam", True, x, labels, w0),
        run_case("sgd without batch normalization", "sgd", False, x, labels, w0),
        run_case("adam without batch normalization", "adam", False, x, labels, w0),
    ]
    out = {
        "generator": "make_cnn_reference.py, torch " + torch.__version__,
        "model": MODEL,
        "steps": STEPS,
        "image": tensor_json(x),
        "label": [float(v) for v in labels],
        "initial": {k: tensor_json(v) for k, v in w0.items()},
        "runs": runs,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cnn_reference.json")
    with open(path, "w") as f:
        f.write("{\n")
        items = list(out.items())
        for i, (key, value) in enumerate(items):
            if key == "runs":  # one run per line: small diffs when a reference changes
                f.write(f' "{key}": [\n' + ",\n".join("  " + json.dumps(r, separators=(",", ":")) for r in value) + "\n ]")
            else:
                f.write(f' "{key}": {json.dumps(value, separators=(",", ":"))}')
            f.write(",\n" if i + 1 < len(items) else "\n")
        f.write("}\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
