#!/usr/bin/env python3
"""PyTorch GPU peer of `sluice bench train --device cuda`: the same MLP, batch, loss and optimizer,
in PyTorch eager and with torch.compile, at fp32, TF32 and bf16, with the same protocol: batches
generated before timing and used in turn, warm-up steps (torch.compile compiles in them), then
timed steps of zero_grad, forward, loss, backward, optimizer step and loss.item() (a training
loop that reads its loss; Sluice's GPU step also waits for its loss), with the device
synchronised at both ends of each timed run. The median of --runs timed runs is reported, one
JSON line per configuration (tool, device, precision, widths, batch, samples_per_s, step_ms,
tflops, ... as `sluice bench train --json`).

The model is nn.Sequential(Linear, ReLU, ..., Linear) with Keras's initialisation (glorot
uniform kernels, zero biases); the loss is CrossEntropyLoss on logits (sparse categorical
cross-entropy with from_logits) or MSELoss (mse), averaged over the batch as in Keras; Adam with
Keras's defaults (lr 1e-3, eps 1e-7), PyTorch's fused implementation unless --adam-impl foreach.

Precision: fp32 (torch.backends.cuda.matmul.allow_tf32 = False), tf32 (allow_tf32 = True),
bf16 (torch.autocast to bfloat16 around the forward pass, fp32 master weights, loss in fp32).

Data: "resident" (the batches in GPU memory: the model alone), "pinned" (each batch copied from
pinned host memory every step, non_blocking, as Sluice's GPU step stages and copies its batch),
"pageable" (copied from ordinary host memory; PyTorch stages it itself).

TFLOP/s: 6 x the Linear layers' weights x samples/s / 1e12 (forward 2, backward 4 flops per
weight per sample), the formula of `sluice bench train`. --peak instead measures the matrix-product
peak those figures are compared with: square --peak-size products at fp32, TF32 and bf16.

usage: torch_mlp_train.py [--widths 1024,1024,1024,1024,1024] [--batches 512,2048] [--precisions fp32,tf32,bf16]
                          [--modes eager,compile] [--data resident,pinned] [--steps 50] [--warmup 5] [--runs 5]
                          [--loss mse|sparse_categorical_crossentropy] [--learning-rate 0.001] [--adam-impl fused|foreach]
                          [--compile-mode default] [--no-loss-read] [--device cuda:0] [--seed 1] [--peak [--peak-size 8192]]
(--device cpu only checks the script on a machine without a GPU; its figures mean nothing here.)
"""
import argparse
import importlib
import json
import statistics
import sys
import time

import torch

PRECISIONS = ("fp32", "tf32", "bf16")
MODES = ("eager", "compile")
DATA = ("resident", "pinned", "pageable")


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


def set_precision(precision):
    # fp32 and bf16 keep fp32 products exact (bf16's products are in bf16 under autocast).
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    torch.set_float32_matmul_precision("high" if precision == "tf32" else "highest")


def distinct_batches(batch, widths, ce, wanted):
    """As Sluice: the pre-generated batches kept to about 2 GiB (at least one)."""
    row_bytes = 4 * (widths[0] + (1 if ce else widths[-1]))
    return max(1, min(wanted, (2 << 30) // (batch * row_bytes)))


def make_batches(a, widths, batch, ce, data, dev):
    gen = torch.Generator(device=dev).manual_seed(a.seed)
    out = []
    for _ in range(distinct_batches(batch, widths, ce, a.distinct_batches)):
        x = torch.randn(batch, widths[0], device=dev, generator=gen)
        y = (torch.randint(0, widths[-1], (batch,), device=dev, generator=gen) if ce
             else torch.randn(batch, widths[-1], device=dev, generator=gen))
        if data != "resident":
            x, y = x.cpu(), y.cpu()
            if data == "pinned" and dev.type == "cuda":
                x, y = x.pin_memory(), y.pin_memory()
        out.append((x, y))
    return out


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def device_name(dev):
    return torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"


def dense_weights(widths):
    return sum(widths[i - 1] * widths[i] for i in range(1, len(widths)))


def peak(a, dev):
    """Square matrix products back to back, median TFLOP/s over --runs batches of them."""
    n = a.peak_size
    gen = torch.Generator(device=dev).manual_seed(0)
    p = torch.rand(n, n, device=dev, generator=gen) * 2 - 1
    q = torch.rand(n, n, device=dev, generator=gen) * 2 - 1
    for precision in PRECISIONS:
        set_precision(precision)
        x, y = (p.bfloat16(), q.bfloat16()) if precision == "bf16" else (p, q)
        for _ in range(3):
            torch.matmul(x, y)
        sync(dev)
        t0 = time.perf_counter()
        torch.matmul(x, y)
        sync(dev)
        count = max(3, int(0.25 / max(time.perf_counter() - t0, 1e-6)))
        tflops = []
        for _ in range(a.runs):
            sync(dev)
            t0 = time.perf_counter()
            for _ in range(count):
                torch.matmul(x, y)
            sync(dev)
            tflops.append(2.0 * n ** 3 * count / (time.perf_counter() - t0) / 1e12)
        print(json.dumps({"tool": "pytorch", "benchmark": "peak", "device": str(dev), "device_name": device_name(dev),
                          "precision": precision, "size": n, "tflops": statistics.median(tflops), "min_tflops": min(tflops),
                          "max_tflops": max(tflops), "runs": a.runs, "products_per_run": count, "torch": torch.__version__}),
              flush=True)


def measure(a, dev, widths, batch, precision, mode, datas):
    """One model (and one compilation) per (batch, precision, mode); every data variant in turn,
    each from the same initial weights and a fresh optimizer. Yields one record per variant."""
    ce = a.loss == "sparse_categorical_crossentropy"
    set_precision(precision)
    torch.manual_seed(a.seed)
    model = build(widths, a.activation).to(dev)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    criterion = torch.nn.CrossEntropyLoss() if ce else torch.nn.MSELoss()
    bf16 = precision == "bf16"

    def forward_loss(x, y):
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=bf16):
            out = model(x)
        return criterion(out.float(), y)

    fn = torch.compile(forward_loss, mode=a.compile_mode, dynamic=False) if mode == "compile" else forward_loss
    for data in datas:
        model.load_state_dict(initial)
        adam_impl = a.adam_impl if dev.type == "cuda" else "foreach"  # fused needs CUDA
        opt = torch.optim.Adam(model.parameters(), lr=a.learning_rate, eps=1e-7, **{adam_impl: True})
        batches = make_batches(a, widths, batch, ce, data, dev)
        losses = []

        def step(i):
            x, y = batches[i % len(batches)]
            if data != "resident":
                x, y = x.to(dev, non_blocking=data == "pinned"), y.to(dev, non_blocking=data == "pinned")
            opt.zero_grad(set_to_none=True)
            loss = fn(x, y)
            loss.backward()
            opt.step()
            if not a.no_loss_read:
                losses.append(loss.item())

        sync(dev)
        t0 = time.perf_counter()
        step(0)  # compiles, for torch.compile
        sync(dev)
        first_step_s = time.perf_counter() - t0
        for i in range(1, a.warmup):
            step(i)
        seconds = []
        i = a.warmup
        for _ in range(a.runs):
            sync(dev)
            t0 = time.perf_counter()
            for _ in range(a.steps):
                step(i)
                i += 1
            sync(dev)
            seconds.append(time.perf_counter() - t0)
        med = statistics.median(seconds)
        samples = a.steps * batch / med
        yield {
            "tool": "pytorch", "benchmark": "train", "mode": "step", "variant": f"{mode}-{data}",
            "torch_mode": mode, "data": data, "device": str(dev), "device_name": device_name(dev),
            "precision": precision, "widths": widths, "config": ",".join(map(str, widths)) + f"@{batch}", "batch": batch,
            "activation": a.activation, "loss": a.loss, "optimizer": "adam", "adam_impl": adam_impl,
            "compile_mode": a.compile_mode if mode == "compile" else None,
            "parameters": sum(t.numel() for t in model.parameters()), "dense_weights": dense_weights(widths),
            "warmup": a.warmup, "steps": a.steps, "runs": a.runs, "distinct_batches": len(batches),
            "seconds": med, "samples_per_s": samples, "step_ms": med * 1e3 / a.steps,
            "samples_per_s_runs": [a.steps * batch / s for s in seconds],
            "tflops": 6.0 * dense_weights(widths) * samples / 1e12,
            "first_step_s": first_step_s, "loss_read_every_step": not a.no_loss_read,
            "first_loss": losses[a.warmup] if len(losses) > a.warmup else None, "last_loss": losses[-1] if losses else None,
            "torch": torch.__version__,
        }
        del opt, batches


def main():
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--widths", default="1024,1024,1024,1024,1024")
    p.add_argument("--batches", default="512", help="comma-separated global batch sizes")
    p.add_argument("--precisions", default="fp32,tf32,bf16")
    p.add_argument("--modes", default="eager,compile")
    p.add_argument("--data", default="resident,pinned")
    p.add_argument("--steps", type=int, default=50, help="timed steps per run")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--learning-rate", type=float, default=1e-3)
    p.add_argument("--activation", default="relu")
    p.add_argument("--loss", default="sparse_categorical_crossentropy", choices=["sparse_categorical_crossentropy", "mse"])
    p.add_argument("--adam-impl", default="fused", choices=["fused", "foreach"])
    p.add_argument("--compile-mode", default="default", choices=["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"])
    p.add_argument("--no-loss-read", action="store_true", help="do not read the loss every step (no per-step synchronisation)")
    p.add_argument("--distinct-batches", type=int, default=4)
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--peak", action="store_true", help="measure the matrix-product peak instead of training")
    p.add_argument("--peak-size", type=int, default=8192)
    a = p.parse_args()

    def listed(text, known, name):
        items = [s for s in text.split(",") if s]
        bad = [s for s in items if s not in known]
        if bad or not items:
            sys.exit(f"torch_mlp_train.py: --{name}: {','.join(bad) or 'nothing'} is not one of {', '.join(known)}")
        return items

    precisions = listed(a.precisions, PRECISIONS, "precisions")
    modes = listed(a.modes, MODES, "modes")
    datas = listed(a.data, DATA, "data")
    try:
        widths = [int(w) for w in a.widths.split(",")]
        batches = [int(b) for b in a.batches.split(",")]
    except ValueError as e:
        sys.exit(f"torch_mlp_train.py: {e}")
    if len(widths) < 2 or min(widths) < 1 or not batches or min(batches) < 1:
        sys.exit("torch_mlp_train.py: --widths needs at least two widths and --batches positive sizes")
    if a.steps < 1 or a.warmup < 1 or a.runs < 1:
        sys.exit("torch_mlp_train.py: --steps, --warmup and --runs must be at least 1")
    dev = torch.device(a.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        sys.exit("torch_mlp_train.py: no CUDA device for PyTorch")
    if dev.type == "cpu" and a.peak:
        sys.exit("torch_mlp_train.py: --peak measures a GPU; --device cpu only checks this script")
    if a.peak:
        peak(a, dev)
        return
    for batch in batches:
        for precision in precisions:
            for mode in modes:
                if mode == "compile" and not hasattr(torch, "compile"):
                    print(json.dumps({"tool": "pytorch", "benchmark": "train", "mode": "step", "torch_mode": mode, "device": str(dev),
                                      "precision": precision, "widths": widths, "batch": batch,
                                      "skipped": f"torch {torch.__version__} has no torch.compile"}), flush=True)
                    continue
                try:
                    for rec in measure(a, dev, widths, batch, precision, mode, datas):
                        print(json.dumps(rec), flush=True)
                except RuntimeError as e:  # torch.cuda.OutOfMemoryError is one
                    # Out of memory at a large batch, or torch.compile unavailable (no Triton):
                    # say so in the results and go on with the next configuration.
                    print(json.dumps({"tool": "pytorch", "benchmark": "train", "mode": "step", "torch_mode": mode, "device": str(dev),
                                      "precision": precision, "widths": widths, "batch": batch,
                                      "skipped": f"{type(e).__name__}: {str(e)[:300]}"}), flush=True)
                finally:
                    if mode == "compile":
                        importlib.import_module("torch._dynamo").reset()
                    if dev.type == "cuda":
                        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
