#!/usr/bin/env python3
"""Shuffled batch reading from a memory-mapped .npy larger than RAM, the ways users do it.

One tool per invocation, for bench/larger_than_ram.sh (which evicts the file from the page
cache before each one and records the peak RSS with GNU time):

  numpy          a = np.load(FILE, mmap_mode='r'); per batch a[np.sort(idx)], idx a slice of
                 a fresh np.random.permutation per pass (sorted: page order, numpy's best).
  numpy_random   the same gather, but over a Python mmap on which madvise(MADV_RANDOM) was
                 called, so a fault reads one page instead of the kernel's read-ahead window:
                 on a cold file most of that window is never used by a random 1 KiB row.
  torch_batched  a map-style Dataset whose __getitem__ takes a batch of indices and returns
                 torch.from_numpy(a[np.sort(idx)]), driven by DataLoader(sampler=
                 BatchSampler(RandomSampler(ds), B, False), batch_size=None, num_workers=W),
                 the mmap opened lazily in each worker.

numpy and numpy_random run --threads Python threads, each gathering its own batches from
one shared permutation: numpy's fancy indexing releases the GIL while it copies, so the
threads' page faults overlap. torch_batched takes --threads as num_workers (0: in-process).

Every batch is checked for shape and dtype on the clock (cheap comparisons); once, off the
clock, a batch's rows are compared with the same rows read from the file with os.pread.

usage: larger_than_ram_peers.py FILE --tool numpy|numpy_random|torch_batched
                                [--threads N] [--batch B] [--seconds S] [--json]
"""
import sys

from pick_python import pick_python

# numpy for every tool, torch too for torch_batched (looked at before argparse, which
# needs no third-party module, because the re-exec must happen before numpy is imported).
pick_python(__file__, ("numpy", "torch") if "torch_batched" in sys.argv else ("numpy",))

import argparse  # noqa: E402
import json  # noqa: E402
import mmap  # noqa: E402
import os  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402


def npy_header(path):
    """(shape, dtype, data offset) of a C-order .npy, from its header alone."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        else:  # 2.0 (and 3.0, which differs only in the header's text encoding)
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        if fortran:
            sys.exit(f"larger_than_ram_peers.py: {path} is Fortran-ordered; rows are not contiguous")
        return tuple(shape), dtype, f.tell()


def open_default(path):
    return np.load(path, mmap_mode="r"), None


def open_random(path):
    """np.frombuffer over an mmap advised MADV_RANDOM, and the mmap, which must outlive
    the array (frombuffer holds a buffer export too; keeping it is explicit)."""
    shape, dtype, offset = npy_header(path)
    with open(path, "rb") as f:  # the mapping stays valid after the file is closed
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    m.madvise(mmap.MADV_RANDOM)
    count = int(np.prod(shape))
    return np.frombuffer(m, dtype=dtype, count=count, offset=offset).reshape(shape), m


class SharedOrder:
    """Batches of one permutation per pass, handed out to whichever thread asks next, so
    T threads together make passes as one reader would (and hold one permutation, not T)."""

    def __init__(self, rows, batch_size):
        self.rows, self.batch_size = rows, batch_size
        self.lock = threading.Lock()
        self.perm = np.random.permutation(rows)  # the first pass's, drawn before the clock
        self.pos = 0

    def next(self):
        with self.lock:
            if self.pos >= self.rows:
                self.perm, self.pos = np.random.permutation(self.rows), 0  # a fresh pass
            idx = self.perm[self.pos:self.pos + self.batch_size]
            self.pos += self.batch_size
            return idx, self.pos >= self.rows


def check_batch(batch, batch_size, row_shape, dtype, last_ok):
    """(B, *row) of the file's dtype; only a pass's last batch may be short. Cheap: on the clock."""
    shape = tuple(batch.shape)
    if shape[1:] != row_shape or not (0 < shape[0] <= batch_size) or (shape[0] != batch_size and not last_ok):
        raise AssertionError(f"bad batch shape {shape}, want ({batch_size}, {', '.join(map(str, row_shape))})")
    if batch.dtype != dtype:  # np.dtype for numpy batches, torch.dtype for torch ones
        raise AssertionError(f"bad batch dtype {batch.dtype}, want {dtype}")
    return shape[0]


def spot_check(path, rows_sorted, batch):
    """The first, middle and last rows of a batch against the same rows read with os.pread:
    the gathers must return the rows asked for, at the right offset in the file."""
    shape, dtype, offset = npy_header(path)
    row_bytes = dtype.itemsize * int(np.prod(shape[1:]))
    fd = os.open(path, os.O_RDONLY)
    try:
        for k in sorted({0, len(rows_sorted) // 2, len(rows_sorted) - 1}):
            raw = os.pread(fd, row_bytes, offset + int(rows_sorted[k]) * row_bytes)
            want = np.frombuffer(raw, dtype=dtype).reshape(shape[1:])
            if not np.array_equal(np.asarray(batch[k]), want, equal_nan=dtype.kind == "f"):
                raise AssertionError(f"row {int(rows_sorted[k])}: the gather and the file disagree")
    finally:
        os.close(fd)


def numpy_peer(path, opener, threads, batch_size, seconds, sort_indices=True):
    a, _mapping = opener(path)  # _mapping: the mmap behind `a`, if any, kept open until we return
    rows, row_shape, dtype = a.shape[0], tuple(a.shape[1:]), a.dtype
    order = SharedOrder(rows, batch_size)
    first = [None] * threads  # (sorted indices, batch) of each thread's first batch, checked later

    def work(t, deadline):
        n = 0
        while time.perf_counter() < deadline:
            idx, last = order.next()
            if sort_indices:  # page order: on a cold file, fewer and nearer page-ins
                idx = np.sort(idx)
            batch = a[idx]  # fancy indexing on the mapping: the copy runs without the GIL
            n += check_batch(batch, batch_size, row_shape, dtype, last)
            if first[t] is None:
                first[t] = (idx, batch)
        return n

    with ThreadPoolExecutor(max_workers=threads) as pool:
        start = time.perf_counter()
        futures = [pool.submit(work, t, start + seconds) for t in range(threads)]
        samples = sum(f.result() for f in futures)
        elapsed = time.perf_counter() - start  # includes each thread's last batch past the deadline
    for got in first:
        if got is not None:
            spot_check(path, *got)
    return samples, elapsed, dtype.itemsize * int(np.prod(row_shape))


def torch_peer(path, workers, batch_size, seconds):
    import torch
    from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler

    class NpyBatches(Dataset):
        """Batch-at-a-time: one __getitem__ per batch, not per row. The mmap is opened
        lazily on first use, so each worker process maps the file itself."""

        def __init__(self, path):
            self.path = path
            self.rows = np.load(path, mmap_mode="r").shape[0]  # header only; not kept
            self._a = None

        def __len__(self):
            return self.rows

        def __getitem__(self, idx):
            if self._a is None:
                self._a = np.load(self.path, mmap_mode="r")
            return torch.from_numpy(self._a[np.sort(idx)])

    ds = NpyBatches(path)
    # A seeded sampler changes no cost but lets the first batch's indices be drawn again for
    # the content check: RandomSampler's first pass is torch.randperm(n, generator) (drawn
    # here, before the loader, so that this permutation is freed before the sampler's own).
    seed = int(np.random.randint(1 << 62))
    first_idx = np.sort(torch.randperm(len(ds), generator=torch.Generator().manual_seed(seed))[:batch_size].numpy())
    sampler = BatchSampler(RandomSampler(ds, generator=torch.Generator().manual_seed(seed)), batch_size, False)
    # persistent_workers: new passes reuse the workers instead of re-forking them (the peer's
    # best case); batch_size=None: the sampler's index lists go to __getitem__ as they are.
    loader = DataLoader(ds, sampler=sampler, batch_size=None, num_workers=workers,
                        persistent_workers=workers > 0)
    shape, dtype, _ = npy_header(path)
    row_shape = tuple(shape[1:])
    tdtype = torch.from_numpy(np.empty(0, dtype)).dtype  # what batches must come back as
    n_batches = len(sampler)
    it = iter(loader)  # forks the workers
    first = next(it)  # waits for worker start-up; not timed
    check_batch(first, batch_size, row_shape, tdtype, n_batches == 1)
    samples = 0
    k0 = 2  # batch number within the pass: the first pass already gave up batch 1
    start = time.perf_counter()
    elapsed = 0.0
    try:
        while elapsed < seconds:
            for k, batch in enumerate(it, start=k0):
                samples += check_batch(batch, batch_size, row_shape, tdtype, k == n_batches)
                elapsed = time.perf_counter() - start
                if elapsed >= seconds:
                    break
            else:
                it, k0 = iter(loader), 1  # next pass (a fresh permutation); workers persist
    finally:
        # Breaking out mid-pass leaves workers with batches in flight: shut them down
        # explicitly rather than relying on garbage collection at exit.
        shutdown = getattr(it, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()
        del it, loader
    spot_check(path, first_idx, first.numpy())
    return samples, elapsed, dtype.itemsize * int(np.prod(row_shape))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--tool", required=True, choices=("numpy", "numpy_random", "torch_batched"))
    ap.add_argument("--threads", type=int, default=1,
                    help="Python threads (numpy tools) or DataLoader num_workers (torch_batched)")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args()
    if args.threads < (0 if args.tool == "torch_batched" else 1):
        ap.error("--threads must be at least 1 (0 workers for torch_batched)")

    if args.tool == "torch_batched":
        samples, seconds, row_bytes = torch_peer(args.file, args.threads, args.batch, args.seconds)
    else:
        opener = open_random if args.tool == "numpy_random" else open_default
        samples, seconds, row_bytes = numpy_peer(args.file, opener, args.threads, args.batch, args.seconds)

    rec = {"tool": args.tool, "threads": args.threads, "batch": args.batch, "rows": samples,
           "seconds": seconds, "rows_per_s": samples / seconds, "bytes_per_s": samples * row_bytes / seconds}
    if args.tool == "torch_batched":
        rec["workers"] = args.threads
    if args.json:
        print(json.dumps(rec), flush=True)
    else:
        print(f"{args.tool} x{args.threads}: {rec['rows_per_s']:,.0f} rows/s, "
              f"{rec['bytes_per_s'] / 1e6:,.1f} MB/s over {seconds:.2f} s", flush=True)


if __name__ == "__main__":
    main()
