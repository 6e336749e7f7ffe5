#!/usr/bin/env python3
"""tf.data doing what `sluice bench pipeline` does, the ways users write it today.

  tfdata_from_generator     the classic from the seeds: Dataset.from_generator over a Python
                            generator that draws a fresh permutation per pass and yields
                            x[idx] batches of a np.load(mmap_mode='r') array; prefetch(AUTOTUNE).
  tfdata_index_map          Dataset.range(n).shuffle(n).batch(B).map(numpy_function gather,
                            num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE): indices through
                            tf.data, rows gathered by numpy in parallel calls.
  tfdata_map_overhead       the per-element cost of an identity map stage: range(N) with and
                            without K chained .map(lambda x: x), on single elements and after
                            batch(B), as `sluice bench pipeline` measures it (best of repeated
                            passes, iterated inside TensorFlow with Dataset.reduce).

The clock starts after the first batch (graph tracing and thread start-up are not counted).

usage: tfdata_peers.py FILE [--batch 256] [--seconds S] [--map-chain 10] [--json]
"""
import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def timed(dataset, seconds, rows_of):
    """Iterates `dataset` (repeating passes) for about `seconds`; returns (rows, elapsed)."""
    it = iter(dataset.repeat())
    next(it)  # tracing, thread start-up
    rows = 0
    start = time.perf_counter()
    while True:
        rows += rows_of(next(it))
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return rows, elapsed


def from_generator(path, batch, seconds):
    a = np.load(path, mmap_mode="r")

    def gen():
        perm = np.random.permutation(a.shape[0])
        for i in range(0, a.shape[0], batch):
            yield a[perm[i:i + batch]]

    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((None,) + a.shape[1:], tf.as_dtype(a.dtype)))
    return timed(ds.prefetch(tf.data.AUTOTUNE), seconds, lambda x: int(x.shape[0])), a


def index_map(path, batch, seconds):
    a = np.load(path, mmap_mode="r")
    gather = lambda idx: a[idx]  # noqa: E731
    ds = (tf.data.Dataset.range(a.shape[0]).shuffle(a.shape[0], reshuffle_each_iteration=True).batch(batch)
          .map(lambda idx: tf.numpy_function(gather, [idx], tf.as_dtype(a.dtype)), num_parallel_calls=tf.data.AUTOTUNE)
          .prefetch(tf.data.AUTOTUNE))
    return timed(ds, seconds, lambda x: int(x.shape[0])), a


def map_overhead(batch, seconds, k):
    """Iterates inside TensorFlow (Dataset.reduce), not from Python, so the figure is tf.data's
    own cost per element and not the Python loop's."""
    def chain(ds):
        for _ in range(k):
            ds = ds.map(lambda x: x)
        return ds

    def per_row_ns(make, rows):
        make(1000).reduce(np.int64(0), lambda s, x: s + 1)  # trace once
        best = float("inf")
        deadline = time.perf_counter() + seconds / 4
        while time.perf_counter() < deadline or best == float("inf"):
            start = time.perf_counter()
            make(rows).reduce(np.int64(0), lambda s, x: s + 1)
            best = min(best, time.perf_counter() - start)
        return best * 1e9 / rows

    n = 200_000
    unbatched_ns = (per_row_ns(lambda r: chain(tf.data.Dataset.range(r)), n)
                    - per_row_ns(lambda r: tf.data.Dataset.range(r), n)) / k
    nb = 20_000_000
    batched_ns = (per_row_ns(lambda r: chain(tf.data.Dataset.range(r).batch(batch)), nb)
                  - per_row_ns(lambda r: tf.data.Dataset.range(r).batch(batch), nb)) / k
    return batched_ns, unbatched_ns


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--map-chain", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    for peer, fn in (("tfdata_from_generator", from_generator), ("tfdata_index_map", index_map)):
        (rows, elapsed), a = fn(args.file, args.batch, args.seconds)
        row_bytes = a.dtype.itemsize * int(np.prod(a.shape[1:]))
        rec = {"peer": peer, "order": "shuffled", "batch": args.batch, "seconds": elapsed, "samples": rows,
               "samples_per_s": rows / elapsed, "bytes_per_s": rows * row_bytes / elapsed, "tensorflow": tf.__version__}
        print(json.dumps(rec) if args.json else f"{peer:<24} {rec['samples_per_s']:>12,.0f} samples/s", flush=True)
    batched_ns, unbatched_ns = map_overhead(args.batch, args.seconds, args.map_chain)
    rec = {"peer": "tfdata_map_overhead", "map_chain": args.map_chain, "batch": args.batch,
           "map_overhead_batched_ns_per_element": batched_ns, "map_overhead_unbatched_ns_per_element": unbatched_ns,
           "tensorflow": tf.__version__}
    print(json.dumps(rec) if args.json else f"identity map: {batched_ns:.2f} ns/element batched, {unbatched_ns:.1f} ns unbatched", flush=True)


if __name__ == "__main__":
    main()
