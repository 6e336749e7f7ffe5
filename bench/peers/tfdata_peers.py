#!/usr/bin/env python3
"""tf.data doing what `sluice bench pipeline` does, the ways users write it today.

  tfdata_from_generator     the classic from the seeds: Dataset.from_generator over a Python
                            generator that draws a fresh permutation per pass and yields
                            x[idx] batches of a np.load(mmap_mode='r') array; prefetch(AUTOTUNE).
  tfdata_index_map          Dataset.range(n).shuffle(n).batch(B).map(numpy_function gather,
                            num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE): indices through
                            tf.data, rows gathered by numpy in parallel calls.
  tfdata_gather             tf.data's in-memory path at its strongest: the array loaded into a
                            tf.Tensor; each pass a tf.random.shuffle of the row numbers cut into
                            [B] index tensors (from_tensor_slices of the reshaped permutation,
                            so tf.data handles one element per batch, not per row), then
                            .map(tf.gather, num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE).
  tfdata_tensor_slices      Dataset.from_tensor_slices(tensor).shuffle(S).batch(B).prefetch(AUTOTUNE)
                            over the same in-memory tensor: the element-wise path users write
                            first. S = n (a full shuffle, as the others) unless --slices-buffer.
  tfdata_map_overhead       the per-element cost of an identity map stage: range(N) with and
                            without K chained .map(lambda x: x), on single elements and after
                            batch(B), as `sluice bench pipeline` measures it (best of repeated
                            passes, iterated inside TensorFlow with Dataset.reduce), with
                            tf.data's default static optimizations and with them off.

The clock starts after the first batch (graph tracing and thread start-up are not counted);
batches are then taken inside a tf.function, CHUNK at a time, as a compiled training loop does.

The in-memory peers need the whole array in RAM (read before the clock); they are the
fastest tf.data gets on a file that fits, not a way to read one larger than RAM.

usage: tfdata_peers.py FILE [--batch 256] [--seconds S] [--map-chain 10] [--slices-buffer S] [--json]
"""
import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

CHUNK = 200  # batches per tf.function call of the timing loop


def timed(dataset, seconds):
    """Iterates `dataset` (repeating passes) for about `seconds`; returns (rows, elapsed).
    Batches are taken inside a tf.function, CHUNK at a time, as a compiled training loop
    takes them: a Python `for` over the iterator would add its own cost per batch."""
    it = iter(dataset.repeat())

    @tf.function
    def take(k):
        rows = tf.constant(0, tf.int64)
        for _ in tf.range(k):
            rows += tf.cast(tf.shape(next(it))[0], tf.int64)
        return rows

    take(tf.constant(1, tf.int64))  # tracing, thread start-up, a shuffle buffer's first fill
    chunk = tf.constant(CHUNK, tf.int64)
    rows = 0
    start = time.perf_counter()
    while True:
        rows += int(take(chunk))
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
    return timed(ds.prefetch(tf.data.AUTOTUNE), seconds), a


def index_map(path, batch, seconds):
    a = np.load(path, mmap_mode="r")
    gather = lambda idx: a[idx]  # noqa: E731
    ds = (tf.data.Dataset.range(a.shape[0]).shuffle(a.shape[0], reshuffle_each_iteration=True).batch(batch)
          .map(lambda idx: tf.numpy_function(gather, [idx], tf.as_dtype(a.dtype)), num_parallel_calls=tf.data.AUTOTUNE)
          .prefetch(tf.data.AUTOTUNE))
    return timed(ds, seconds), a


def in_memory(path):
    """The whole array as a tf.Tensor (one copy in RAM) and the mapped array for its metadata."""
    a = np.load(path, mmap_mode="r")
    return tf.convert_to_tensor(np.ascontiguousarray(a)), a


def gather(path, batch, seconds):
    x, a = in_memory(path)
    n = a.shape[0]
    full = n // batch * batch

    def one_pass(_):
        """A fresh permutation per pass, cut into index batches as whole tensors: tf.data then
        handles one element per batch, never one per row."""
        perm = tf.random.shuffle(tf.range(n, dtype=tf.int64))
        batches = tf.data.Dataset.from_tensor_slices(tf.reshape(perm[:full], [-1, batch]))
        return batches.concatenate(tf.data.Dataset.from_tensors(perm[full:])) if full < n else batches

    ds = (tf.data.Dataset.range(1 << 62).flat_map(one_pass)
          .map(lambda idx: tf.gather(x, idx), num_parallel_calls=tf.data.AUTOTUNE)
          .prefetch(tf.data.AUTOTUNE))
    return timed(ds, seconds), a


def tensor_slices(path, batch, seconds, buffer):
    x, a = in_memory(path)
    ds = (tf.data.Dataset.from_tensor_slices(x).shuffle(buffer or a.shape[0], reshuffle_each_iteration=True)
          .batch(batch).prefetch(tf.data.AUTOTUNE))
    return timed(ds, seconds), a


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
    ap.add_argument("--slices-buffer", type=int, default=0, help="shuffle buffer of tfdata_tensor_slices (0: all rows)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    peers = (("tfdata_from_generator", from_generator), ("tfdata_index_map", index_map), ("tfdata_gather", gather),
             ("tfdata_tensor_slices", lambda p, b, s: tensor_slices(p, b, s, args.slices_buffer)))
    for peer, fn in peers:
        (rows, elapsed), a = fn(args.file, args.batch, args.seconds)
        row_bytes = a.dtype.itemsize * int(np.prod(a.shape[1:]))
        rec = {"peer": peer, "order": "shuffled", "batch": args.batch, "seconds": elapsed, "samples": rows,
               "samples_per_s": rows / elapsed, "bytes_per_s": rows * row_bytes / elapsed, "tensorflow": tf.__version__,
               "cpu_threads": os.cpu_count()}
        if peer == "tfdata_tensor_slices":
            rec["shuffle_buffer"] = args.slices_buffer or int(a.shape[0])
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
