#!/usr/bin/python3
"""Reference training runs from PyTorch for tst_train_embedding: a Keras Embedding layer trained
for a few steps, with dense updates of the whole table (Keras's and PyTorch's semantics) and
with updates of the rows a batch used only (Sluice's sparse_updates, PyTorch's SparseAdam).

The model (Keras layer names; the same JSON is written into the reference so that the test
builds exactly this model, setting the Embedding's sparse_updates per run):

  ids  [B=6, 2]  whole numbers in 0..10 (row 11 of the table is never used)
  emb  Embedding(input_dim 12, output_dim 4)   -> [6, 2, 4]
  flat Flatten                                  -> [6, 8]
  out  Dense(2)                                 -> [6, 2]
  loss mean squared error, mean over the batch (Keras: mean over the last axis, then the batch)

Every step has its own batch of ids and targets (batches[t]). The ids are written out by hand
so that the runs can tell dense from lazy updates: every step repeats some id within the batch
(its gradient row is a sum), and rows used in step 1 sit out later steps (row 0 in steps 2 and 4,
rows 5, 6 and 7 in steps 2 and 4, row 1 in steps 2 and 3), where dense Adam and momentum still
move them (their moments decay but are not zero) and lazy updates leave them alone.

Writes embedding_reference.json next to this script: the model, the batches, initial weights
(rounded to 4 decimals, float32 values, named "<layer>/<param>" as Sluice names them, the Dense
kernel in Keras's (in, out) layout), and for each run the Sluice optimizer spec, whether the
table uses sparse_updates, the loss of every step (before its update) and the final weights.

How Keras's semantics are expressed in torch (float64 throughout):
  - the table is a leaf tensor looked up with F.embedding; Flatten is a row-major reshape, as
    Keras's; the Dense kernel (in, out) is used as x @ kernel;
  - SGD without momentum is w -= lr g in both. SGD with momentum: Keras keeps
    v = momentum v - lr g, w += v; torch keeps b = momentum b + g, w -= lr b; with a constant
    learning rate v = -lr b at every step, so the two are the same rule;
  - dense Adam (sparse_updates false): Keras steps  w -= lr sqrt(bc2) / bc1 * m / (sqrt(v) + eps),
    torch.optim.Adam steps  w -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps_torch)  (bc1 = 1 - beta_1^t,
    bc2 = 1 - beta_2^t); as in make_cnn_reference.py torch is given eps_torch = eps / sqrt(bc2) at
    every step, which makes the two rules identical. Every row of the table takes part: a row
    without gradient in a step still has its moments decayed and moves by m / (sqrt(v) + eps);
  - lazy Adam (sparse_updates true): the table's gradient is sparse (F.embedding(sparse=True)) and
    torch.optim.SparseAdam updates it. In torch 1.13 (torch/optim/_functional.py, sparse_adam) it
    coalesces the gradient (duplicate ids summed), updates exp_avg and exp_avg_sq only at the
    gradient's rows, and steps those rows by
        step_size = lr * sqrt(1 - beta2^step) / (1 - beta1^step),  w -= step_size * m / (sqrt(v) + eps)
    i.e. Keras's epsilon placement already, so SparseAdam gets Keras's epsilon as is. Its `step`
    counts the optimizer's steps on the table, which has a gradient at every step here, so the
    bias corrections use the global iteration, as Sluice's applyRanges does. The Dense layer's
    weights get torch.optim.Adam with the epsilon moved as above;
  - plain SGD with sparse_updates true: torch.optim.SGD on the sparse gradient (rows without
    gradient do not move, as with dense SGD; the run covers Sluice's row-range update path).

The reference must not depend on rounding: each run is repeated in float32 and its losses and
final weights must agree with the float64 run to 2e-6 relative (five times below the test's
tolerance of 1e-5), and the dense and lazy Adam runs must end with tables that differ by far
more than the tolerance (otherwise the test could not tell the two semantics apart).

Run once with Debian's interpreter (python3-torch, python3-numpy) and commit the output; the
tests do not need Python:  /usr/bin/python3 tests/data/train/make_embedding_reference.py
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20250611)

B, IDS, INPUT_DIM, OUTPUT_DIM, UNITS = 6, 2, 12, 4, 2
SGD_LR, MOMENTUM = 0.1, 0.9
ADAM_LR, BETA_1, BETA_2, ADAM_EPSILON = 0.01, 0.9, 0.999, 1e-7

# One batch of ids per step (see the docstring for why these).
IDS_PER_STEP = [
    [[0, 1], [2, 3], [1, 4], [5, 0], [6, 7], [1, 1]],
    [[8, 9], [2, 10], [3, 8], [9, 2], [10, 4], [8, 8]],
    [[0, 5], [6, 9], [10, 10], [5, 3], [7, 0], [9, 6]],
    [[1, 2], [4, 8], [2, 1], [3, 3], [8, 4], [1, 9]],
]
STEPS = len(IDS_PER_STEP)

MODEL = {
    "inputs": [{"name": "ids", "feature": "ids"}],
    "layers": [
        {"class_name": "Embedding", "name": "emb", "input_dim": INPUT_DIM, "output_dim": OUTPUT_DIM, "sparse_updates": False},
        {"class_name": "Flatten", "name": "flat"},
        {"class_name": "Dense", "name": "out", "units": UNITS},
    ],
    "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse"}],
}

TABLE = "emb/embeddings"


def arr(shape, lo, hi):
    return np.round(rng.uniform(lo, hi, size=shape), 4).astype(np.float32)


def tensor_json(a, digits=None):
    """Inputs exactly (float32 values, every digit); results to `digits` significant digits (9: a
    float32 round-trips, far finer than the test's tolerance)."""
    a = np.asarray(a, dtype=np.float64)
    flat = a.reshape(-1)
    data = [float(x) for x in flat] if digits is None else [float(f"{x:.{digits}g}") for x in flat]
    return {"shape": list(a.shape), "data": data}


def check_ids():
    ids = [np.array(s, dtype=np.int64) for s in IDS_PER_STEP]
    for s in ids:
        assert s.shape == (B, IDS) and s.min() >= 0 and s.max() <= 10
        assert len(np.unique(s)) < s.size, "every step repeats an id (its gradient row is a sum)"
    first = set(ids[0].reshape(-1))
    assert first - set(ids[1].reshape(-1)), "some rows of step 1 must sit out step 2"
    assert INPUT_DIM - 1 not in set(np.concatenate([s.reshape(-1) for s in ids])), "the last row is never used"
    return ids


def forward(ids, y, p, sparse):
    e = F.embedding(ids, p[TABLE], sparse=sparse)  # [B, 2, 4]
    pred = e.reshape(ids.shape[0], -1) @ p["out/kernel"] + p["out/bias"]
    return F.mse_loss(pred, y)  # mean over every element = Keras's mean over the last axis, then the batch


def train(batches, w0, kind, sparse, dtype):
    p = {k: torch.tensor(v.astype(np.float64), dtype=dtype, requires_grad=True) for k, v in w0.items()}
    dense_params = [p["out/kernel"], p["out/bias"]]
    optimizers = []
    keras_eps = []  # torch optimizers whose eps is moved to Keras's place at every step
    if kind == "sgd":
        optimizers.append(torch.optim.SGD(list(p.values()), lr=SGD_LR))
    elif kind == "sgd momentum":
        assert not sparse, "torch has no lazy momentum to compare with"
        optimizers.append(torch.optim.SGD(list(p.values()), lr=SGD_LR, momentum=MOMENTUM))
    elif not sparse:
        optimizers.append(torch.optim.Adam(list(p.values()), lr=ADAM_LR, betas=(BETA_1, BETA_2), eps=0.0))
        keras_eps.append(optimizers[-1])
    else:
        optimizers.append(torch.optim.SparseAdam([p[TABLE]], lr=ADAM_LR, betas=(BETA_1, BETA_2), eps=ADAM_EPSILON))
        optimizers.append(torch.optim.Adam(dense_params, lr=ADAM_LR, betas=(BETA_1, BETA_2), eps=0.0))
        keras_eps.append(optimizers[-1])
    losses = []
    for t, (ids_np, y_np) in enumerate(batches, start=1):
        for opt in keras_eps:
            for group in opt.param_groups:  # Keras's epsilon, moved to where torch adds it
                group["eps"] = ADAM_EPSILON / math.sqrt(1 - BETA_2**t)
        for opt in optimizers:
            opt.zero_grad(set_to_none=True)
        ids = torch.tensor(ids_np, dtype=torch.long)
        y = torch.tensor(y_np.astype(np.float64), dtype=dtype)
        loss = forward(ids, y, p, sparse)
        loss.backward()
        assert p[TABLE].grad.is_sparse == sparse
        for opt in optimizers:
            opt.step()
        losses.append(loss.item())
    return losses, {k: v.detach().numpy().astype(np.float64) for k, v in p.items()}


def max_relative_difference(a, b):
    """As the tests' maxRelativeDifference: max |a - b| / max |b|."""
    a, b = np.asarray(a, dtype=np.float64).reshape(-1), np.asarray(b, dtype=np.float64).reshape(-1)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def run_case(name, kind, sparse, batches, w0):
    losses, final = train(batches, w0, kind, sparse, torch.float64)
    losses32, final32 = train(batches, w0, kind, sparse, torch.float32)
    for i, (l64, l32) in enumerate(zip(losses, losses32)):
        assert abs(l64 - l32) <= 2e-6 * abs(l64), f"{name}: step {i + 1} loss depends on rounding ({l64} vs {l32})"
    for k in final:
        d = max_relative_difference(final32[k], final[k])
        assert d < 2e-6, f"{name}: {k} depends on rounding (float32 differs by {d:.2e})"
        assert max_relative_difference(final[k], w0[k]) > 1e-4, f"{name}: {k} hardly changed"
    # The row no batch uses never moves, whatever the optimizer.
    assert np.array_equal(final[TABLE][INPUT_DIM - 1], w0[TABLE][INPUT_DIM - 1].astype(np.float64)), f"{name}: the unused row moved"
    if kind == "sgd momentum":
        spec = {"type": "sgd", "learning_rate": SGD_LR, "momentum": MOMENTUM}
    elif kind == "sgd":
        spec = {"type": "sgd", "learning_rate": SGD_LR}
    else:
        spec = {"type": "adam", "learning_rate": ADAM_LR, "beta_1": BETA_1, "beta_2": BETA_2, "epsilon": ADAM_EPSILON}
    return {
        "name": name,
        "optimizer": spec,
        "sparse_updates": sparse,
        "losses": [float(f"{v:.12g}") for v in losses],
        "final": {k: tensor_json(v, 9) for k, v in final.items()},
    }


def main():
    ids = check_ids()
    batches = [(s, arr((B, UNITS), -1, 1)) for s in ids]
    w0 = {
        TABLE: arr((INPUT_DIM, OUTPUT_DIM), -0.5, 0.5),
        "out/kernel": arr((IDS * OUTPUT_DIM, UNITS), -0.5, 0.5),
        "out/bias": arr((UNITS,), -0.1, 0.1),
    }
    runs = [
        run_case("sgd", "sgd", False, batches, w0),
        run_case("sgd, momentum", "sgd momentum", False, batches, w0),
        run_case("adam", "adam", False, batches, w0),
        run_case("sgd, sparse updates", "sgd", True, batches, w0),
        run_case("adam, sparse updates", "adam", True, batches, w0),
    ]
    by_name = {r["name"]: r for r in runs}
    # Plain SGD moves only the rows with a gradient, so its two runs agree; Adam's must not.
    for a, b, apart in (("sgd", "sgd, sparse updates", False), ("adam", "adam, sparse updates", True)):
        d = max_relative_difference(by_name[a]["final"][TABLE]["data"], by_name[b]["final"][TABLE]["data"])
        assert (d > 1e-3) if apart else (d < 1e-8), f"{a} vs {b}: tables differ by {d:.2e}"
    out = {
        "generator": "make_embedding_reference.py, torch " + torch.__version__,
        "model": MODEL,
        "steps": STEPS,
        "batches": [{"ids": tensor_json(i), "y": tensor_json(y)} for i, y in batches],
        "initial": {k: tensor_json(v) for k, v in w0.items()},
        "runs": runs,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "embedding_reference.json")
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
