#!/usr/bin/env python3
"""Time the readers our users would otherwise pick for the job `sluice bench read` does.

Gathers batches of rows from a memory-mapped .npy, for about S seconds per peer, and
reports samples/s and bytes/s, so sluice's figures can be set against them:

  numpy_mmap_slice_copy    sequential: np.array(a[i:i+B]), a copy into a fresh array
                           (the equivalent of filling a batch buffer).
  numpy_mmap_fancy_sorted  shuffled: a[np.sort(idx)] -- indices sorted within each batch,
                           which is numpy's best case (page-order access).
  numpy_mmap_fancy_random  shuffled: a[idx] with the indices as drawn.
  numpy_mmap_fancy_sorted_threadsT, numpy_mmap_fancy_random_threadsT
                           shuffled: T Python threads each gathering a[idx] batches (indices
                           sorted or as drawn) of one shared permutation (fancy indexing copies
                           without the GIL, so the copies overlap); --threads T.
  torch_dataloader_wN      map-style Dataset returning one row per __getitem__, batched by
                           DataLoader(shuffle=..., num_workers=N); the mmap is opened lazily
                           in each worker, as users do. The clock starts after the first
                           batch, so worker start-up is not counted.
  torch_batched_wN         shuffled: the DataLoader at its strongest, a Dataset whose
                           __getitem__ takes a whole batch of indices (a BatchSampler over a
                           RandomSampler, batch_size=None), num_workers=N.

Shuffled orders draw a fresh permutation per pass, as sluice does.

The threaded numpy and batched DataLoader peers are larger_than_ram_peers.py's, run here on
a page-cached file.

usage: read_peers.py FILE [--batch 256] [--seconds S] [--order sequential|shuffled]
                          [--workers 0,2] [--threads 2] [--json]
"""
import sys

from pick_python import pick_python

# The python3 first on PATH may lack numpy/torch (e.g. a pyenv shim): re-exec under one that
# has numpy, as the bench scripts pick it ($SLUICE_PYTHON wins).
pick_python(__file__, ("numpy",))

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import larger_than_ram_peers as strongest  # noqa: E402  (numpy on threads, a batched DataLoader)
from larger_than_ram_peers import check_batch  # noqa: E402

try:
    import torch  # noqa: E402
    from torch.utils.data import DataLoader, Dataset  # noqa: E402
except ImportError:  # numpy peers still run; torch ones are reported as skipped
    torch = None
    Dataset = object

SORTED_NOTE = "indices sorted within each batch: numpy's best case"


def numpy_peer(path, order, batch_size, seconds, sort_indices):
    """Gather batches with numpy from np.load(mmap_mode='r') until `seconds` have passed."""
    a = np.load(path, mmap_mode="r")
    rows, row_shape = a.shape[0], tuple(a.shape[1:])
    # Spot-check content once, outside the clock: the gathers must return the rows asked for.
    probe = np.array([rows - 1, 0])
    assert np.array_equal(np.asarray(a[probe]), np.stack([a[rows - 1], a[0]]))
    samples = 0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds:
        perm = np.random.permutation(rows) if order == "shuffled" else None  # fresh order per pass
        for i in range(0, rows, batch_size):
            if perm is None:
                batch = np.array(a[i:i + batch_size])  # copy into a new array, like a batch buffer
            else:
                idx = perm[i:i + batch_size]
                batch = a[np.sort(idx)] if sort_indices else a[idx]
            samples += check_batch(batch, batch_size, row_shape, a.dtype, i + batch_size >= rows)
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
    return samples, elapsed, a.dtype.itemsize * int(np.prod(row_shape))


class NpyRows(Dataset):
    """One row per item, the way users wrap a .npy for DataLoader. The mmap is opened
    lazily on first use, so each worker process opens its own (nothing mapped is
    inherited across fork)."""

    def __init__(self, path):
        self.path = path
        self.rows = np.load(path, mmap_mode="r").shape[0]  # header only; not kept
        self._a = None

    def __len__(self):
        return self.rows

    def __getitem__(self, i):
        if self._a is None:
            self._a = np.load(self.path, mmap_mode="r")
        return torch.from_numpy(np.array(self._a[i]))


def torch_peer(path, order, batch_size, seconds, workers):
    ds = NpyRows(path)
    # persistent_workers: new passes reuse the workers instead of re-forking them (the
    # usual advice, and the peer's best case); drop_last=False is the default users get.
    loader = DataLoader(ds, batch_size=batch_size, shuffle=(order == "shuffled"),
                        num_workers=workers, persistent_workers=workers > 0)
    it = iter(loader)  # forks the workers; map the file here only after that
    first = next(it)  # waits for worker start-up; not timed
    a = np.load(path, mmap_mode="r")  # for the checks only
    row_shape, dtype = tuple(a.shape[1:]), a.dtype
    tdtype = torch.from_numpy(np.empty(0, dtype)).dtype  # what batches must come back as
    check_batch(first, batch_size, row_shape, tdtype, len(loader) == 1)
    if order == "sequential":  # content check: pass 1 starts at row 0
        assert np.array_equal(first.numpy(), np.asarray(a[:first.shape[0]]))
    samples = 0
    start = time.perf_counter()
    elapsed = 0.0
    n_batches = len(loader)
    k0 = 2  # batch number within the pass: the first pass already gave up batch 1
    try:
        while elapsed < seconds:
            for k, batch in enumerate(it, start=k0):
                samples += check_batch(batch, batch_size, row_shape, tdtype, k == n_batches)
                elapsed = time.perf_counter() - start
                if elapsed >= seconds:
                    break
            else:
                it, k0 = iter(loader), 1  # next pass (a fresh shuffle); workers persist
    finally:
        # Breaking out mid-pass leaves workers with batches in flight: shut them down
        # explicitly rather than relying on garbage collection at exit.
        shutdown = getattr(it, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()
        del it, loader
    return samples, elapsed, dtype.itemsize * int(np.prod(row_shape))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--order", choices=("sequential", "shuffled"), default="shuffled")
    ap.add_argument("--workers", default="0,2", help="DataLoader num_workers values, comma-separated")
    ap.add_argument("--threads", type=int, default=2, help="Python threads of the threaded numpy gather")
    ap.add_argument("--label", default="", help="appended to every peer's name (e.g. pypi: the PyPI numpy and torch)")
    ap.add_argument("--json", action="store_true", help="one JSON object per line")
    args = ap.parse_args()
    workers = [int(w) for w in args.workers.split(",") if w.strip()]

    runs = []  # (peer, thunk, note)
    if args.order == "sequential":
        runs.append(("numpy_mmap_slice_copy",
                     lambda: numpy_peer(args.file, args.order, args.batch, args.seconds, False), None))
    else:
        runs.append(("numpy_mmap_fancy_sorted",
                     lambda: numpy_peer(args.file, args.order, args.batch, args.seconds, True), SORTED_NOTE))
        runs.append(("numpy_mmap_fancy_random",
                     lambda: numpy_peer(args.file, args.order, args.batch, args.seconds, False), None))
        for sort_indices in (True, False):
            runs.append((f"numpy_mmap_fancy_{'sorted' if sort_indices else 'random'}_threads{args.threads}",
                         (lambda s=sort_indices: strongest.numpy_peer(args.file, strongest.open_default, args.threads,
                                                                      args.batch, args.seconds, s)),
                         f"{args.threads} Python threads" + (", " + SORTED_NOTE if sort_indices else "")))
    for w in workers:
        runs.append((f"torch_dataloader_w{w}",
                     (lambda w=w: torch_peer(args.file, args.order, args.batch, args.seconds, w)), None))
    if args.order == "shuffled":
        for w in workers:
            runs.append((f"torch_batched_w{w}",
                         (lambda w=w: strongest.torch_peer(args.file, w, args.batch, args.seconds)),
                         "a batched __getitem__ over a BatchSampler"))

    if not args.json:
        print(f"{'peer':<26} {'order':<10} {'batch':>5} {'samples/s':>12} {'GB/s':>7} {'seconds':>7}")
    for peer, thunk, note in runs:
        if peer.startswith("torch") and torch is None:
            print(f"read_peers.py: skipping {peer}: torch not importable", file=sys.stderr)
            continue
        samples, seconds, row_bytes = thunk()
        peer += f"_{args.label}" if args.label else ""
        rec = {"peer": peer, "order": args.order, "batch": args.batch,
               "samples_per_s": samples / seconds, "bytes_per_s": samples * row_bytes / seconds,
               "seconds": seconds, "numpy": np.__version__, "torch": torch.__version__ if torch else None}
        if note:
            rec["note"] = note
        if args.json:
            print(json.dumps(rec), flush=True)
        else:
            print(f"{peer:<26} {args.order:<10} {args.batch:>5} {rec['samples_per_s']:>12,.0f} "
                  f"{rec['bytes_per_s'] / 1e9:>7.2f} {seconds:>7.2f}" + (f"  ({note})" if note else ""),
                  flush=True)


if __name__ == "__main__":
    main()
