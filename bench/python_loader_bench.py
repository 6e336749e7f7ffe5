"""Feeding a PyTorch CPU training loop from a .npy file: sluice.torch against the DataLoader a
PyTorch user writes at its strongest (a BatchSampler over a RandomSampler, a Dataset whose
__getitem__ takes a whole batch of indices and reads them, sorted, from np.load(mmap_mode="r"),
batch_size=None; 0 or 2 workers). Prints one JSON line per measurement; run by
bench/python_loader_bench.sh.

  --mode loader   the loader alone: batches turned into torch tensors, samples/s
  --mode train    a training loop (an MLP of --hidden units, Adam) fed by the loader: samples/s and
                  the input-bound share (time waiting for the next batch / loop time)
"""
import argparse
import json
import os
import time

import numpy as np
import torch


class BatchedNpy(torch.utils.data.Dataset):
    """Indices in, a batch out: one fancy-indexed read per batch, in file order within the batch."""

    def __init__(self, folder):
        self.folder = folder
        self.x = self.y = None

    def __len__(self):
        return np.load(os.path.join(self.folder, "y.npy"), mmap_mode="r").shape[0]

    def __getitem__(self, indices):
        if self.x is None:  # opened in each worker
            self.x = np.load(os.path.join(self.folder, "x.npy"), mmap_mode="r")
            self.y = np.load(os.path.join(self.folder, "y.npy"), mmap_mode="r")
        order = np.sort(np.asarray(indices))
        return {"x": torch.from_numpy(self.x[order]), "y": torch.from_numpy(self.y[order])}


def dataloader_batches(folder, batch, workers, seed):
    data = BatchedNpy(folder)
    sampler = torch.utils.data.BatchSampler(torch.utils.data.RandomSampler(data, generator=torch.Generator().manual_seed(seed)),
                                            batch_size=batch, drop_last=True)
    parallel = {"persistent_workers": True, "prefetch_factor": 4} if workers else {}
    loader = torch.utils.data.DataLoader(data, sampler=sampler, batch_size=None, num_workers=workers, **parallel)
    return loader


def sluice_batches(folder, batch, threads, seed):
    import sluice
    ds = sluice.from_npy({"x": "x.npy", "y": "y.npy"}, folder=folder).global_shuffle(seed=seed).batch(batch, drop_remainder=True) \
        .prefetch(sluice.AUTOTUNE)
    pipeline = ds.pipeline(threads=threads)

    class Loader:
        def __iter__(self):
            for b in pipeline:
                yield {"x": torch.from_dlpack(b["x"]), "y": torch.from_dlpack(b["y"])}

        def stats(self):
            return pipeline.stats()
    return Loader()


def run(loader, steps, train, hidden, width):
    model = torch.nn.Sequential(torch.nn.Linear(width, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    waiting = 0.0
    samples = 0
    it = iter(loader)
    start = time.perf_counter()
    for _ in range(steps):
        t = time.perf_counter()
        try:
            b = next(it)
        except StopIteration:
            it = iter(loader)
            b = next(it)
        waiting += time.perf_counter() - t
        samples += b["x"].shape[0]
        if train:
            loss = torch.nn.functional.mse_loss(model(b["x"]), b["y"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    seconds = time.perf_counter() - start
    return {"samples_per_s": samples / seconds, "seconds": seconds, "input_bound_share": waiting / seconds}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tool", choices=["sluice", "dataloader"], required=True)
    p.add_argument("--data", required=True, help="folder with x.npy and y.npy")
    p.add_argument("--mode", choices=["loader", "train"], required=True)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--steps", type=int, default=None, help="batches timed (default: 8000 for loader, 2000 for train)")
    p.add_argument("--threads", type=int, default=2, help="Sluice's pipeline threads")
    p.add_argument("--workers", type=int, default=0, help="DataLoader workers")
    p.add_argument("--torch-threads", type=int, default=2)
    p.add_argument("--hidden", type=int, default=256)
    args = p.parse_args()
    torch.set_num_threads(args.torch_threads)
    args.steps = args.steps or (8000 if args.mode == "loader" else 2000)
    width = np.load(os.path.join(args.data, "x.npy"), mmap_mode="r").shape[1]
    if args.tool == "sluice":
        loader = sluice_batches(args.data, args.batch, args.threads, seed=1)
    else:
        loader = dataloader_batches(args.data, args.batch, args.workers, seed=1)
    run(loader, min(50, args.steps), args.mode == "train", args.hidden, width)  # warm-up: workers, pools, pages
    result = run(loader, args.steps, args.mode == "train", args.hidden, width)
    print(json.dumps({"tool": args.tool, "mode": args.mode, "batch": args.batch, "steps": args.steps,
                      "threads": args.threads if args.tool == "sluice" else args.workers,
                      "threads_meaning": "pipeline threads" if args.tool == "sluice" else "DataLoader workers",
                      "torch_threads": args.torch_threads, "torch": torch.__version__, **result}), flush=True)


if __name__ == "__main__":
    main()
