#!/usr/bin/env python3
"""Writes the reference files that tst_tfrecord_writer compares Sluice's TFRecord writer
with, using TensorFlow itself (tf.io.TFRecordWriter, tf.train.Example):

  plain.tfrecord   the records below, uncompressed
  gzip.tfrecord    the same records with compression_type="GZIP"
  examples.json    the records as values (features in the order given here, not sorted), so
                   that the test can build the same Examples with Sluice's encoder

Records are serialized with SerializeToString(deterministic=True): protobuf then writes the
entries of the `feature` map sorted by key, which is what Sluice's encoder does. Without it,
Python's protobuf (upb) writes map entries in hash-table order, which is neither sorted nor
promised to be stable, so no writer could match it byte for byte. Either order decodes to
the same Example.

The outputs are committed, so the suite needs no TensorFlow; rerun this script
(pip install tensorflow-cpu) to regenerate them.
"""
import gzip
import json
import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261203)

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def record(i):
    """One record: (name, kind, values) in a deliberately unsorted order."""
    labels = [-3, 2 ** 40, INT64_MIN, INT64_MAX, 0]
    names = [b"row-0", b"\x00\xff binary", b"", "caf\u00e9".encode(), b"row-4"]
    features = [
        ("x", "float32", [float(v) for v in rng.standard_normal(3).astype(np.float32)]),
        ("label", "int64", [labels[i]]),
        ("name", "string", [names[i]]),
        ("tokens", "int64", [int(v) for v in rng.integers(-300, 300, size=i)]),  # record 0: an empty list
        ("Weights", "float32", [float(v) for v in rng.uniform(-1e6, 1e6, size=2 * i).astype(np.float32)]),
    ]
    if i == 3:
        features.append(("a_extra", "string", [b"", b"two", b"strings"]))
    return features


def to_example(features):
    def feature(kind, values):
        if kind == "float32":
            return tf.train.Feature(float_list=tf.train.FloatList(value=values))
        if kind == "int64":
            return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    return tf.train.Example(features=tf.train.Features(feature={n: feature(k, v) for n, k, v in features}))


records = [record(i) for i in range(5)] + [[]]  # the last record: an Example with no features
serialized = [to_example(r).SerializeToString(deterministic=True) for r in records]

for name, options in (("plain.tfrecord", None), ("gzip.tfrecord", tf.io.TFRecordOptions(compression_type="GZIP"))):
    with tf.io.TFRecordWriter(os.path.join(HERE, name), options=options) as w:
        for s in serialized:
            w.write(s)

# The GZIP file is the plain file, compressed: the test relies on it.
with open(os.path.join(HERE, "plain.tfrecord"), "rb") as f:
    plain = f.read()
with open(os.path.join(HERE, "gzip.tfrecord"), "rb") as f:
    assert gzip.decompress(f.read()) == plain

# What TensorFlow reads back agrees with the values given.
for raw, features in zip(tf.data.TFRecordDataset(os.path.join(HERE, "plain.tfrecord")), records):
    parsed = tf.train.Example.FromString(raw.numpy()).features.feature
    assert sorted(parsed.keys()) == sorted(n for n, _, _ in features)

with open(os.path.join(HERE, "examples.json"), "w") as f:
    json.dump({
        "tensorflow": tf.__version__,
        "records": [[{"name": n, "kind": k, "values": [v.hex() for v in vs] if k == "string" else vs}
                     for n, k, vs in r] for r in records],
    }, f, indent=1)
print("wrote", sorted(os.listdir(HERE)))
