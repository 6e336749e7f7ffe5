"""Python functions of the reference pipeline that both tf.data (write_reference.py, with
TensorFlow) and Sluice (tests/python/test_python_functions.py) run: a generator, an element map,
a predicate and a batch map, as a user migrating from tf.data would have them."""
import numpy as np

ROWS = 23


def counting_rows():
    """Rows i = 0..22: x = [i, i + 0.5, -i] (float32), label = i % 5 (int64), name = b"row-i"."""
    for i in range(ROWS):
        yield {"x": np.array([i, i + 0.5, -i], np.float32), "label": np.int64(i % 5), "name": f"row-{i}".encode()}


def scale_and_square(element):
    """x * 0.5 + 1 and its square as a new feature; label and name unchanged."""
    x = element["x"] * np.float32(0.5) + np.float32(1)
    return {"x": x.astype(np.float32), "x_sq": (x * x).astype(np.float32), "label": element["label"], "name": element["name"]}


def label_not_three(element):
    """Drops the rows whose label is 3."""
    return bool(element["label"] != 3)


def centre_batch(batch):
    """Subtracts the batch's mean from x (a function over whole batches)."""
    x = batch["x"]
    return {"x": (x - x.mean(axis=0, keepdims=True)).astype(np.float32), "x_sq": batch["x_sq"], "label": batch["label"] * 10}
