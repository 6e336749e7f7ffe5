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
                            passes, iterated inside TensorFlow with Dataset.reduce), with
                            tf.data's default static optimizations and with them off.

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


def map_overhead(batch, seconds, k, optimize):
    """Iterates inside TensorFlow (Dataset.reduce), not from Python, so the figure is tf.data's
    own cost per element and not the Python loop's. Datasets and the reduce function are built
    (traced) before the clock starts. With `optimize` False, tf.data's static optimizations are
    off: by default they fuse the chained maps into one and may drop identity maps, which would
    measure the optimizer rather than the cost of a map stage."""
    options = tf.data.Options()
    options.experimental_optimization.apply_default_optimizations = optimize

    def chain(ds):
        for _ in range(k):
            ds = ds.map(lambda x: x)
        return ds.with_options(options)

    @tf.function
    def count(ds):
        return ds.reduce(np.int64(0), lambda s, x: s + 1)

    def per_row_ns(ds, rows):
        count(ds)  # trace once, warm up
        best = float("inf")
        deadline = time.perf_counter() + seconds / 4
        while time.perf_counter() < deadline or best == float("inf"):
            start = time.perf_counter()
            count(ds)
            best = min(best, time.perf_counter() - start)
        return best * 1e9 / rows

    n, nb = 200_000, 20_000_000
    base = tf.data.Dataset.range(n).with_options(options)
    based = tf.data.Dataset.range(nb).batch(batch).with_options(options)
    unbatched_ns = (per_row_ns(chain(tf.data.Dataset.range(n)), n) - per_row_ns(base, n)) / k
    batched_ns = (per_row_ns(chain(tf.data.Dataset.range(nb).batch(batch)), nb) - per_row_ns(based, nb)) / k
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
    for optimize in (True, False):
        batched_ns, unbatched_ns = map_overhead(args.batch, args.seconds, args.map_chain, optimize)
        peer = "tfdata_map_overhead" + ("" if optimize else "_unoptimized")
        rec = {"peer": peer, "map_chain": args.map_chain, "batch": args.batch,
               "map_overhead_batched_ns_per_element": batched_ns, "map_overhead_unbatched_ns_per_element": unbatched_ns,
               "tensorflow": tf.__version__}
        print(json.dumps(rec) if args.json else f"{peer}: {batched_ns:.2f} ns/element batched, {unbatched_ns:.1f} ns unbatched",
              flush=True)


if __name__ == "__main__":
    main()
