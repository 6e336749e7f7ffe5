#!/usr/bin/env python3
"""PyTorch peer of `sluice bench train`: the same MLP, batch, loss and optimizer in PyTorch eager
on the CPU, with the same protocol: batches generated before timing and used in turn, warm-up
steps, then timed steps of zero_grad, forward, loss, backward and optimizer step. Prints one JSON
line (--json) or a short report.

The model is nn.Sequential(Linear, ReLU, ..., Linear) with Keras's initialisation (glorot
uniform kernels, zero biases) so that both start alike; the loss is CrossEntropyLoss on logits
(sparse_categorical_crossentropy with from_logits) or MSELoss (mse), averaged over the batch as
in Keras; Adam with Keras's epsilon (1e-7) or plain SGD.

usage: torch_mlp.py [--widths 128,256,10] [--batch 64] [--steps 100] [--warmup 10]
                    [--threads 2] [--optimizer adam|sgd] [--learning-rate 0.001]
                    [--loss sparse_categorical_crossentropy|mse] [--seed 1] [--variant LABEL] [--json]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch


def build(widths, activation):
    layers = []
    for i in range(1, len(widths)):
        linear = torch.nn.Linear(widths[i - 1], widths[i])
        torch.nn.init.xavier_uniform_(linear.weight)
        torch.nn.init.zeros_(linear.bias)
        layers.append(linear)
        if i + 1 < len(widths):
            layers.append({"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "sigmoid": torch.nn.Sigmoid,
                           "gelu": torch.nn.GELU}[activation]())
    return torch.nn.Sequential(*layers)


def main():
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--widths", default="128,256,10")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--optimizer", default="adam", choices=["adam", "sgd"])
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--activation", default="relu")
    p.add_argument("--loss", default="sparse_categorical_crossentropy", choices=["sparse_categorical_crossentropy", "mse"])
    p.add_argument("--distinct-batches", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--variant", default="default", help="a label for the settings it runs under, kept in the JSON")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    widths = [int(w) for w in a.widths.split(",")]
    if len(widths) < 2:
        sys.exit("torch_mlp.py: --widths needs at least two widths")
    model = build(widths, a.activation)
    if a.optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=a.learning_rate, eps=1e-7)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=a.learning_rate)
    ce = a.loss == "sparse_categorical_crossentropy"
    criterion = torch.nn.CrossEntropyLoss() if ce else torch.nn.MSELoss()

    batches = []
    for _ in range(a.distinct_batches):
        x = torch.randn(a.batch, widths[0])
        y = torch.randint(0, widths[-1], (a.batch,)) if ce else torch.randn(a.batch, widths[-1])
        batches.append((x, y))

    step_ms, losses = [], []
    start = None
    for step in range(a.warmup + a.steps):
        if step == a.warmup:
            start = time.perf_counter()
        x, y = batches[step % len(batches)]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = criterion(model(x), y)
        loss.backward()
        opt.step()
        value = loss.item()  # as a training loop reads it; also waits for nothing on the CPU
        if step >= a.warmup:
            step_ms.append((time.perf_counter() - t0) * 1e3)
            losses.append(value)
    seconds = time.perf_counter() - start
    params = sum(t.numel() for t in model.parameters())
    rec = {
        "tool": "pytorch",
        "benchmark": "train",
        "mode": "step",
        "widths": widths,
        "config": f"{a.widths}@{a.batch}",
        "batch": a.batch,
        "activation": a.activation,
        "loss": a.loss,
        "optimizer": a.optimizer,
        "threads": torch.get_num_threads(),
        "parameters": params,
        "warmup": a.warmup,
        "steps": a.steps,
        "seconds": seconds,
        "samples_per_s": a.steps * a.batch / seconds,
        "step_ms_median": statistics.median(step_ms),
        "step_ms_mean": seconds * 1e3 / a.steps,
        "first_loss": losses[0],
        "last_loss": losses[-1],
        "torch": torch.__version__,
        # The OpenMP / OpenBLAS settings it ran under: Debian's torch runs its elementwise ops on
        # OpenMP threads and its matrix products on OpenBLAS's own pthreads.
        "env": {k: os.environ[k] for k in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOMP_SPINCOUNT")
                if k in os.environ},
        "variant": a.variant,
    }
    if a.json:
        print(json.dumps(rec))
    else:
        print(f"torch_mlp {a.widths} batch {a.batch}, {a.loss}, {a.optimizer}, {rec['threads']} threads: "
              f"{rec['samples_per_s']:.0f} samples/s, step {rec['step_ms_median']:.3f} ms median")


if __name__ == "__main__":
    main()
