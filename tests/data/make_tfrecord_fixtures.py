#!/usr/bin/env python3
"""Writes the reference TFRecord files the test suite reads, with TensorFlow itself
(tf.io.TFRecordWriter, tf.train.Example), and tfrecord.json: the values TensorFlow parses
back from each record. The files are committed, so the suite needs no TensorFlow to run;
rerun this script (pip install tensorflow-cpu) to regenerate them.
"""
import json
import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tfrecord")
rng = np.random.default_rng(20261122)


def example(i):
    x = rng.standard_normal(3).astype(np.float32)
    label = int(rng.integers(-5, 5)) * (10 ** 12 if i == 2 else 1)  # one label needs all 64 bits
    tokens = rng.integers(0, 1000, size=i + 1).astype(np.int64)       # variable length
    return tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=x)),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
        "tokens": tf.train.Feature(int64_list=tf.train.Int64List(value=tokens)),
        "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"row-%d" % i])),
    }))


os.makedirs(OUT, exist_ok=True)
examples = [example(i) for i in range(5)]
for name, options in (("plain.tfrecord", None), ("gzip.tfrecord.gz", tf.io.TFRecordOptions(compression_type="GZIP"))):
    with tf.io.TFRecordWriter(os.path.join(OUT, name), options=options) as w:
        for e in examples:
            w.write(e.SerializeToString())
with tf.io.TFRecordWriter(os.path.join(OUT, "empty.tfrecord")) as w:
    pass

# What TensorFlow reads back: parse every record of the plain file with tf.io.
expected = []
for raw in tf.data.TFRecordDataset(os.path.join(OUT, "plain.tfrecord")):
    e = tf.train.Example.FromString(raw.numpy())
    f = e.features.feature
    expected.append({
        "x": [float(v) for v in f["x"].float_list.value],
        "label": list(f["label"].int64_list.value),
        "tokens": list(f["tokens"].int64_list.value),
        "name": [v.decode() for v in f["name"].bytes_list.value],
    })
with open(os.path.join(HERE, "tfrecord.json"), "w") as f:
    json.dump({"records": expected, "tensorflow": tf.__version__}, f, indent=1)
print("wrote", sorted(os.listdir(OUT)))
