#!/usr/bin/env python3
"""Reference values from Keras 3 itself (TensorFlow backend) for tst_train_losses and
tst_train_optimizers: the semantics Sluice's training engine copies.

Writes keras_reference.json next to this script:
  losses      fixed inputs, Keras's per-sample loss (its loss function, then the mean over any
              time axis) and d(scale * sum_i w_i * loss_i)/dpred by tf.GradientTape, including
              the clipped probability paths torch does not have;
  metrics     keras.metrics objects fed with sample weights (accuracies, mae, mse, AUC);
  optimizers  keras.optimizers trajectories with their default epsilon (a constant learning
              rate, and Adam under a CosineDecay with warm-up);
  schedules   keras.optimizers.schedules.CosineDecay at chosen steps.

Needs an interpreter with keras>=3 and tensorflow (not Debian's); run once and commit the output:
  python3 tests/data/train/make_keras_reference.py
"""
import json
import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

rng = np.random.default_rng(7)


def arr(shape, lo, hi):
    return np.round(rng.uniform(lo, hi, size=shape), 4).astype(np.float32)


def tensor_json(a):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": [float(x) for x in a.reshape(-1)]}


def loss_case(name, spec, fn, pred, target, weights=None, scale=1.0):
    p = tf.Variable(pred)
    w = np.ones(pred.shape[0], np.float32) if weights is None else np.asarray(weights, np.float32)
    with tf.GradientTape() as tape:
        out = fn(tf.constant(target), p)
        per_sample = tf.reduce_mean(tf.reshape(out, [pred.shape[0], -1]), axis=1)
        total = scale * tf.reduce_sum(w * per_sample)
    grad = tape.gradient(total, p)
    return {"name": name, "loss": spec, "pred": tensor_json(pred), "target": tensor_json(target),
            "weights": [] if weights is None else [float(x) for x in weights], "scale": scale,
            "per_sample": [float(x) for x in per_sample.numpy()], "dpred": tensor_json(grad.numpy())}


def losses():
    L = keras.losses
    w = [0.5, 1.0, 2.0, 0.0]
    cases = []
    p, t = arr((4, 3), -2, 2), arr((4, 3), -2, 2)
    cases.append(loss_case("mse", "mse", L.mean_squared_error, p, t, w, 0.25))
    cases.append(loss_case("mae", "mae", L.mean_absolute_error, p, t, w, 0.25))
    hp, ht = arr((4, 5), -2, 2), arr((4, 5), -2, 2)
    cases.append(loss_case("huber", "huber", lambda t, p: L.huber(t, p, delta=1.0), hp, ht, w, 0.5))
    cases.append(loss_case("huber delta 0.5", {"name": "huber", "delta": 0.5}, lambda t, p: L.huber(t, p, delta=0.5), hp, ht))
    # Binary: probabilities at and beyond the clip range (0, 1, 1e-9) next to ordinary ones.
    bp = arr((4, 3), 0.05, 0.95)
    bp[0, 0], bp[1, 1], bp[2, 2] = 0.0, 1.0, 1e-9
    bt = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 0], [0.3, 1, 0]], dtype=np.float32)
    cases.append(loss_case("bce clipped", "binary_crossentropy", L.binary_crossentropy, bp, bt, w, 0.25))
    cases.append(loss_case("bce smoothing", {"name": "binary_crossentropy", "label_smoothing": 0.2},
                           lambda t, p: L.binary_crossentropy(t, p, label_smoothing=0.2), bp, bt))
    bl = arr((4, 2, 3), -5, 5)
    bl[0, 0, 0] = 60.0
    blt = (arr((4, 2, 3), 0, 1) > 0.5).astype(np.float32)
    cases.append(loss_case("bce logits sequence", {"name": "binary_crossentropy", "from_logits": True},
                           lambda t, p: L.binary_crossentropy(t, p, from_logits=True), bl, blt, w, 0.25))
    # Categorical: unnormalised probabilities, one of them clipped after normalising.
    cp = arr((4, 5), 0.05, 1.5)
    cp[1, 2] = 1e-12
    ct = np.eye(5, dtype=np.float32)[[3, 2, 0, 4]]
    ct[0] = [0.5, 0, 0, 0.5, 0]
    cases.append(loss_case("cce probabilities clipped", "categorical_crossentropy", L.categorical_crossentropy, cp, ct, w, 0.25))
    cases.append(loss_case("cce probabilities smoothing", {"name": "categorical_crossentropy", "label_smoothing": 0.1},
                           lambda t, p: L.categorical_crossentropy(t, p, label_smoothing=0.1), cp, ct))
    cl = arr((4, 5), -4, 4)
    cases.append(loss_case("cce logits", {"name": "categorical_crossentropy", "from_logits": True},
                           lambda t, p: L.categorical_crossentropy(t, p, from_logits=True), cl, ct, w, 0.25))
    # Sparse: probabilities that do not sum to 1 and a zero (TF clips, then takes the softmax
    # cross-entropy of the log), logits, and a class per time step.
    sp = arr((4, 5), 0.0, 0.6)
    sp[2, 0] = 0.0
    sidx = np.array([[3], [2], [0], [4]], dtype=np.float32)
    cases.append(loss_case("sparse probabilities unnormalised", "sparse_categorical_crossentropy", L.sparse_categorical_crossentropy,
                           sp, sidx, w, 0.25))
    cases.append(loss_case("sparse logits", {"name": "sparse_categorical_crossentropy", "from_logits": True},
                           lambda t, p: L.sparse_categorical_crossentropy(t, p, from_logits=True), cl, sidx.reshape(4)))
    sl = arr((2, 3, 4), -3, 3)
    sst = np.array([[0, 3, 1], [2, 2, 0]], dtype=np.float32)
    cases.append(loss_case("sparse logits sequence", {"name": "sparse_categorical_crossentropy", "from_logits": True},
                           lambda t, p: L.sparse_categorical_crossentropy(t, p, from_logits=True), sl, sst, [2.0, 0.5], 0.5))
    return cases


def metric_case(name, metric, loss, from_logits, keras_metric, pred, target, weights=None):
    keras_metric.update_state(target, pred, sample_weight=weights)
    return {"name": name, "metric": metric, "loss": loss, "from_logits": from_logits, "pred": tensor_json(pred),
            "target": tensor_json(target), "weights": [] if weights is None else [float(x) for x in weights],
            "result": float(keras_metric.result().numpy())}


def metrics():
    M = keras.metrics
    cases = []
    B = 40
    w = np.round(rng.uniform(0, 2, size=B), 3).astype(np.float32)
    w[:4] = 0.0
    bt = (rng.uniform(size=(B, 1)) > 0.6).astype(np.float32)
    bp = np.clip(0.35 * bt + rng.uniform(0, 0.65, size=(B, 1)), 0, 1).astype(np.float32)  # informative, not perfect
    bp[5, 0], bp[6, 0] = 0.5, 1.0
    logits = np.log(bp / (1 - bp + 1e-6) + 1e-6).astype(np.float32)
    cases.append(metric_case("binary accuracy", "binary_accuracy", "mse", False, M.BinaryAccuracy(), bp, bt, w))
    cases.append(metric_case("accuracy from bce", "accuracy", "binary_crossentropy", False, M.BinaryAccuracy(), bp, bt, w))
    cases.append(metric_case("accuracy from bce logits", "accuracy", "binary_crossentropy", True, M.BinaryAccuracy(threshold=0.0),
                             logits, bt, w))
    cases.append(metric_case("auc", "auc", "binary_crossentropy", False, M.AUC(), bp, bt, w))
    cases.append(metric_case("auc unweighted", "auc", "binary_crossentropy", False, M.AUC(), bp, bt))
    cases.append(metric_case("auc from logits", "auc", "binary_crossentropy", True, M.AUC(from_logits=True), logits, bt, w))
    mp = rng.uniform(0, 1, size=(B, 3)).astype(np.float32)
    mt = (rng.uniform(size=(B, 3)) > 0.5).astype(np.float32)
    cases.append(metric_case("auc multi-output", "auc", "binary_crossentropy", False, M.AUC(), mp, mt, w))
    cp = rng.uniform(0, 1, size=(B, 4)).astype(np.float32)
    labels = np.where(rng.uniform(size=B) < 0.5, cp.argmax(axis=1), rng.integers(0, 4, size=B))
    onehot = np.eye(4, dtype=np.float32)[labels]
    sparse = labels.astype(np.float32).reshape(B, 1)
    cases.append(metric_case("categorical accuracy", "categorical_accuracy", "mse", False, M.CategoricalAccuracy(), cp, onehot, w))
    cases.append(metric_case("accuracy from cce", "accuracy", "categorical_crossentropy", True, M.CategoricalAccuracy(), cp, onehot, w))
    cases.append(metric_case("sparse accuracy", "sparse_categorical_accuracy", "mse", False, M.SparseCategoricalAccuracy(), cp, sparse, w))
    cases.append(metric_case("accuracy from sparse cce", "accuracy", "sparse_categorical_crossentropy", False,
                             M.SparseCategoricalAccuracy(), cp, sparse.reshape(B), w))
    seq = rng.uniform(0, 1, size=(B, 3, 4)).astype(np.float32)
    seq_labels = rng.integers(0, 4, size=(B, 3)).astype(np.float32)
    cases.append(metric_case("sparse accuracy sequence", "sparse_categorical_accuracy", "mse", False, M.SparseCategoricalAccuracy(),
                             seq, seq_labels, w))
    rp, rt = rng.normal(size=(B, 2)).astype(np.float32), rng.normal(size=(B, 2)).astype(np.float32)
    cases.append(metric_case("mae", "mae", "mse", False, M.MeanAbsoluteError(), rp, rt, w))
    cases.append(metric_case("mse", "mse", "mse", False, M.MeanSquaredError(), rp, rt, w))
    return cases


def optimizers():
    n, steps, lr = 6, 8, 0.05
    w0 = arr((n,), -1, 1)
    grads = arr((steps, n), -1, 1)
    grads[3, 2] = 0.0
    O = keras.optimizers
    cosine = {"type": "cosine", "initial_learning_rate": 0.01, "decay_steps": 5, "alpha": 0.1, "warmup_steps": 3, "warmup_target": 0.1}
    runs = [
        ("sgd momentum", {"type": "sgd", "momentum": 0.9}, lr, lambda: O.SGD(learning_rate=lr, momentum=0.9)),
        ("sgd nesterov", {"type": "sgd", "momentum": 0.7, "nesterov": True}, lr, lambda: O.SGD(learning_rate=lr, momentum=0.7, nesterov=True)),
        ("adam", {"type": "adam"}, lr, lambda: O.Adam(learning_rate=lr)),
        ("adam amsgrad", {"type": "adam", "amsgrad": True, "beta_1": 0.8}, lr, lambda: O.Adam(learning_rate=lr, amsgrad=True, beta_1=0.8)),
        ("adamw", {"type": "adamw", "weight_decay": 0.2}, lr, lambda: O.AdamW(learning_rate=lr, weight_decay=0.2)),
        ("adamw default decay", {"type": "adamw"}, lr, lambda: O.AdamW(learning_rate=lr)),
        ("rmsprop", {"type": "rmsprop"}, lr, lambda: O.RMSprop(learning_rate=lr)),
        ("rmsprop momentum", {"type": "rmsprop", "momentum": 0.6}, lr, lambda: O.RMSprop(learning_rate=lr, momentum=0.6)),
        ("rmsprop centered", {"type": "rmsprop", "centered": True, "rho": 0.7}, lr, lambda: O.RMSprop(learning_rate=lr, centered=True, rho=0.7)),
        ("adam cosine warmup", {"type": "adam"}, cosine,
         lambda: O.Adam(learning_rate=O.schedules.CosineDecay(0.01, 5, alpha=0.1, warmup_steps=3, warmup_target=0.1))),
    ]
    cases = []
    for name, spec, rate, make in runs:
        v = keras.Variable(w0.copy())
        opt = make()
        trajectory = []
        for s in range(steps):
            opt.apply_gradients([(tf.constant(grads[s]), v)])
            trajectory.append([float(x) for x in v.numpy()])
        cases.append({"name": name, "optimizer": spec, "learning_rate": rate, "initial": [float(x) for x in w0],
                      "grads": [[float(x) for x in g] for g in grads], "trajectory": trajectory})
    return cases


def schedules():
    S = keras.optimizers.schedules
    steps = [0, 1, 2, 5, 9, 10, 11, 37, 99, 100, 109, 110, 111, 250]
    runs = [
        ({"type": "cosine", "initial_learning_rate": 0.1, "decay_steps": 100}, S.CosineDecay(0.1, 100)),
        ({"type": "cosine", "initial_learning_rate": 0.1, "decay_steps": 100, "alpha": 0.2}, S.CosineDecay(0.1, 100, alpha=0.2)),
        ({"type": "cosine", "initial_learning_rate": 0.0, "decay_steps": 100, "alpha": 0.1, "warmup_steps": 10, "warmup_target": 0.5},
         S.CosineDecay(0.0, 100, alpha=0.1, warmup_steps=10, warmup_target=0.5)),
        # warmup_steps without warmup_target: Keras ignores the warm-up.
        ({"type": "cosine", "initial_learning_rate": 0.2, "decay_steps": 100, "warmup_steps": 10}, S.CosineDecay(0.2, 100, warmup_steps=10)),
    ]
    return [{"schedule": spec, "steps": steps, "values": [float(schedule(s)) for s in steps]} for spec, schedule in runs]


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
    out = {"generator": "make_keras_reference.py, keras " + keras.__version__ + ", tensorflow " + tf.__version__,
           "losses": losses(), "metrics": metrics(), "optimizers": optimizers(), "schedules": schedules()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_reference.json")
    write_json(path, out)


if __name__ == "__main__":
    main()
