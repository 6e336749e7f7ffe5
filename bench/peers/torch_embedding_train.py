#!/usr/bin/env python3
"""PyTorch CPU peer of `sluice bench train --model bench/models/embedding_*.json --ids N`: the
same recommender-style step, ids [B, 8] uniform in [0, N) -> Embedding(N, 32) -> Flatten ->
Linear(256, 64) + ReLU -> Linear(64, 1), MSE, timed with the same protocol: batches generated
before timing and used in turn, warm-up steps, then timed steps of zero_grad, forward, loss,
backward, optimizer step and loss.item().

Two ways PyTorch users train a large table, one JSON line each per table size:
  - "sparse": nn.Embedding(sparse=True) with torch.optim.SparseAdam for the table (LazyAdam: only
    the rows the batch used move) and Adam for the rest: what Sluice's `sparse_updates` does;
  - "dense": nn.Embedding with Adam over everything (Keras's semantics; the cost follows the table).
Adam: lr 1e-3, eps 1e-7 (Keras's default). Threads: torch.set_num_threads(--threads).
--zipf S draws the ids with Zipf-like popularity of exponent S, spread over the table by a seeded
permutation: the same law as `sluice bench train --ids-zipf S` (core/io/synthetic/zipf_ids.h).

usage: torch_embedding_train.py [--rows 10000,1000000] [--batch 1024] [--steps 50] [--warmup 10]
                                [--runs 3] [--threads 2] [--modes sparse,dense] [--zipf S]
"""
import argparse
import json
import math
import platform
import statistics
import time

import torch
from torch import nn

IDS_PER_SAMPLE, DIM = 8, 32


def draw_ids(rows, shape, zipf, generator):
    if not zipf:
        return torch.randint(0, rows, shape, generator=generator)
    u = torch.rand(shape, generator=generator, dtype=torch.float64)
    a = 1 - zipf
    x = (1 + u * ((rows + 1) ** a - 1)) ** (1 / a)
    rank = (x.clamp(min=1).floor().long() - 1).clamp(max=rows - 1)
    multiplier = 1 + int(torch.randint(0, 2**62, (1,), generator=generator)) % (rows - 1)
    while math.gcd(multiplier, rows) != 1:
        multiplier = multiplier % (rows - 1) + 1
    offset = int(torch.randint(0, 2**62, (1,), generator=generator)) % rows
    return (rank * multiplier + offset) % rows


def timed_run(model, opts, batches, steps, warmup):
    loss_fn = nn.MSELoss()

    def step(k):
        x, y = batches[k % len(batches)]
        for o in opts:
            o.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        for o in opts:
            o.step()
        return loss.item()

    for k in range(warmup):
        step(k)
    start = time.perf_counter()
    for k in range(steps):
        step(warmup + k)
    return time.perf_counter() - start


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", default="10000,1000000")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--modes", default="sparse,dense")
    p.add_argument("--zipf", type=float, default=0.0)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    for rows in [int(r) for r in a.rows.split(",")]:
        generator = torch.Generator().manual_seed(1)
        batches = [(draw_ids(rows, (a.batch, IDS_PER_SAMPLE), a.zipf, generator), torch.randn(a.batch, 1)) for _ in range(4)]
        for mode in a.modes.split(","):
            sparse = mode == "sparse"
            table = nn.Embedding(rows, DIM, sparse=sparse)
            nn.init.uniform_(table.weight, -0.05, 0.05)
            head = nn.Sequential(nn.Flatten(), nn.Linear(IDS_PER_SAMPLE * DIM, 64), nn.ReLU(), nn.Linear(64, 1))
            model = nn.Sequential(table, head)
            if sparse:
                opts = [torch.optim.SparseAdam(table.parameters(), lr=1e-3, eps=1e-7), torch.optim.Adam(head.parameters(), lr=1e-3, eps=1e-7)]
            else:
                opts = [torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)]
            times = [timed_run(model, opts, batches, a.steps, a.warmup) for _ in range(a.runs)]
            seconds = statistics.median(times)
            print(json.dumps({"tool": "pytorch", "torch": torch.__version__, "mode": mode, "rows": rows, "zipf": a.zipf, "batch": a.batch,
                              "threads": a.threads, "steps": a.steps, "step_ms": 1000 * seconds / a.steps,
                              "samples_per_s": a.batch * a.steps / seconds, "machine": platform.processor() or platform.machine()}),
                  flush=True)


if __name__ == "__main__":
    main()
