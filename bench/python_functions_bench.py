"""Python functions in pipelines, Sluice against tf.data on the same Python code; prints one JSON
line per measurement. Run by bench/python_functions_bench.sh (each tool in its own interpreter:
Sluice's package with the system Python, TensorFlow from its virtual environment).

  --case map        per-batch overhead of a Python map: batches of --batch rows of 256 float32
                    from an in-memory source, mapped by a function that adds 1 (Sluice: map(fn);
                    tf.data: map(tf.numpy_function(fn))), against the same chain without the map;
                    overhead = (time with - time without) / batches.
  --case generator  from_generator over the same generator of dicts (x: 64 float32, y: int64),
                    batched by --batch: rows per second through the whole chain.
"""
import argparse
import json
import time

import numpy as np

WIDTH = 256


def add_one(x):
    return x + np.float32(1)


def rows(n):
    def generate():
        x = np.arange(64, dtype=np.float32)
        for i in range(n):
            yield {"x": x, "y": np.int64(i)}
    return generate


def timed(iterate):
    start = time.perf_counter()
    count = 0
    for _ in iterate():
        count += 1
    return time.perf_counter() - start, count


def sluice_case(args):
    import sluice
    if args.case == "map":
        data = np.random.default_rng(1).random((args.rows, WIDTH), dtype=np.float32)
        path = f"{args.scratch}/x.npy"
        np.save(path, data)
        base = sluice.from_npy({"x": path}).batch(args.batch)
        plain = base.pipeline(threads=args.threads)
        mapped = base.map(lambda e: {"x": add_one(e["x"])}, num_parallel_calls=args.parallel).pipeline(threads=args.threads)
        list(plain), list(mapped)  # warm: the mapping paged in, the pools started
        t0, n = timed(lambda: plain)
        t1, _ = timed(lambda: mapped)
        return {"batches": n, "seconds_without": t0, "seconds_with": t1, "overhead_us_per_batch": 1e6 * (t1 - t0) / n}
    ds = sluice.from_generator(rows(args.rows), {"x": ("float32", [64]), "y": ("int64", [])}).batch(args.batch)
    pipeline = ds.pipeline(threads=args.threads)
    t, n = timed(lambda: pipeline)
    return {"batches": n, "seconds": t, "rows_per_s": args.rows / t}


def tfdata_case(args):
    import tensorflow as tf
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    if args.case == "map":
        data = np.random.default_rng(1).random((args.rows, WIDTH), dtype=np.float32)
        base = tf.data.Dataset.from_tensor_slices({"x": data}).batch(args.batch)
        parallel = tf.data.AUTOTUNE if args.parallel == "AUTOTUNE" else int(args.parallel)
        mapped = base.map(lambda e: {"x": tf.numpy_function(add_one, [e["x"]], tf.float32)}, num_parallel_calls=parallel)
        for ds in (base, mapped):
            for _ in ds:
                pass
        t0, n = timed(lambda: base.as_numpy_iterator())
        t1, _ = timed(lambda: mapped.as_numpy_iterator())
        return {"batches": n, "seconds_without": t0, "seconds_with": t1, "overhead_us_per_batch": 1e6 * (t1 - t0) / n}
    signature = {"x": tf.TensorSpec([64], tf.float32), "y": tf.TensorSpec([], tf.int64)}
    ds = tf.data.Dataset.from_generator(rows(args.rows), output_signature=signature).batch(args.batch)
    t, n = timed(lambda: ds.as_numpy_iterator())
    return {"batches": n, "seconds": t, "rows_per_s": args.rows / t}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tool", choices=["sluice", "tfdata"], required=True)
    p.add_argument("--case", choices=["map", "generator"], required=True)
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--parallel", default="AUTOTUNE")
    p.add_argument("--scratch", default="/tmp")
    args = p.parse_args()
    result = sluice_case(args) if args.tool == "sluice" else tfdata_case(args)
    print(json.dumps({"tool": args.tool, "case": args.case, "rows": args.rows, "batch": args.batch, "threads": args.threads,
                      "parallel": args.parallel, **result}), flush=True)


if __name__ == "__main__":
    main()
