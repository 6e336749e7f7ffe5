"""Writes reference.npz: what tf.data gives for the reference pipeline of reference_functions.py
(from_generator -> map(numpy_function) -> filter(numpy_function) -> batch(4) -> map(numpy_function)),
one key per batch and feature ("b0_x", ...). Needs TensorFlow (pip install tensorflow-cpu);
the test suite reads the committed file only.

    python tests/data/python_functions/write_reference.py
"""
import os

import numpy as np
import tensorflow as tf

import reference_functions as ref

here = os.path.dirname(os.path.abspath(__file__))


def numpy_map(function, names, dtypes):
    """tf.numpy_function over a dict element, returning a dict (numpy_function takes and gives lists)."""
    def call(element):
        keys = sorted(element)
        def run(*values):
            out = function(dict(zip(keys, values)))
            return [np.asarray(out[n]) for n in names]
        results = tf.numpy_function(run, [element[k] for k in keys], dtypes)
        return dict(zip(names, results))
    return call


signature = {"x": tf.TensorSpec([3], tf.float32), "label": tf.TensorSpec([], tf.int64), "name": tf.TensorSpec([], tf.string)}
ds = tf.data.Dataset.from_generator(ref.counting_rows, output_signature=signature)
ds = ds.map(numpy_map(ref.scale_and_square, ["x", "x_sq", "label", "name"], [tf.float32, tf.float32, tf.int64, tf.string]))


def keep(element):
    keys = sorted(element)
    return tf.numpy_function(lambda *v: np.bool_(ref.label_not_three(dict(zip(keys, v)))), [element[k] for k in keys], tf.bool)


ds = ds.filter(keep).batch(4)
ds = ds.map(numpy_map(ref.centre_batch, ["x", "x_sq", "label"], [tf.float32, tf.float32, tf.int64]))
arrays = {}
for i, batch in enumerate(ds.as_numpy_iterator()):
    for name, value in batch.items():
        arrays[f"b{i}_{name}"] = value
np.savez(os.path.join(here, "reference.npz"), **arrays)
print(f"wrote {len(arrays)} arrays, {i + 1} batches, with TensorFlow {tf.__version__}")
