#!/usr/bin/env python3
"""PyTorch CPU peer of `sluice bench train --model bench/models/image_cnn.json`: the example
image classifier's CNN (projects/image-classifier.sluice) with the same batch, loss and
optimizer, timed with the same protocol: batches generated before timing and used in turn,
warm-up steps, then timed steps of zero_grad, forward, loss, backward, optimizer step and
loss.item(). One JSON line per memory format (NCHW, PyTorch's default, and channels_last),
samples/s the median over --runs timed runs.

Model: Conv2d(3→16, 3, padding 1, no bias) → BatchNorm2d(eps 1e-3, momentum 0.1) → ReLU →
MaxPool2d(2) → Conv2d(16→32, no bias) → BatchNorm2d → ReLU → MaxPool2d(2) → Conv2d(32→32) →
ReLU → global average pool → Linear(32→5); CrossEntropyLoss on logits; Adam (lr 1e-3, eps
1e-7, foreach). Threads: torch.set_num_threads(--threads), intra-op; the step is one process.
--compile adds a third line: channels_last with the model under torch.compile (Inductor's C++
code for the elementwise work around oneDNN's convolutions, forward and backward); the
compilation happens in the warm-up steps, outside the clock.

usage: torch_cnn_train.py [--batch 64] [--size 48] [--steps 20] [--warmup 10] [--runs 5] [--threads 2] [--compile]
"""
import argparse
import json
import platform
import statistics
import time

import torch
from torch import nn


def model():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16, eps=1e-3, momentum=0.1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32, eps=1e-3, momentum=0.1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 5))


def timed_run(net, opt, loss_fn, batches, steps, warmup):
    def step(k):
        x, y = batches[k % len(batches)]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    for k in range(warmup):
        step(k)
    start = time.perf_counter()
    for k in range(steps):
        step(k)
    return time.perf_counter() - start


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--size", type=int, default=48)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    formats = ["nchw", "channels_last"] + (["channels_last+compile"] if args.compile else [])
    for fmt in formats:
        memory = torch.contiguous_format if fmt == "nchw" else torch.channels_last
        net = model().to(memory_format=memory)
        if fmt.endswith("+compile"):
            net = torch.compile(net)
        opt = torch.optim.Adam(net.parameters(), lr=1e-3, eps=1e-7, foreach=True)
        loss_fn = nn.CrossEntropyLoss()
        batches = [(torch.randn(args.batch, 3, args.size, args.size).contiguous(memory_format=memory),
                    torch.randint(0, 5, (args.batch,))) for _ in range(4)]
        rates = [args.batch * args.steps / timed_run(net, opt, loss_fn, batches, args.steps, args.warmup) for _ in range(args.runs)]
        print(json.dumps({"tool": "torch", "format": fmt, "samples_per_s": round(statistics.median(rates), 1), "batch": args.batch,
                          "input": [args.size, args.size, 3], "threads": args.threads, "runs": args.runs, "torch": torch.__version__,
                          "python": platform.python_version()}), flush=True)


if __name__ == "__main__":
    main()
