"""PyTorch eager doing the work of each op bench/kernel_bench.cpp times, measured the same way
(effective bandwidth: the least bytes the op must move over its time; median over --runs timed
batches of back-to-back calls, host clock, device synchronised at both ends). Where PyTorch takes
several kernels for one of Sluice's (bias + gelu), it is timed as eager code runs it. The loss
ops return the per-sample loss and its gradient, as Sluice's do (autograd.grad). One JSON line
per op."""
import argparse
import json
import time

import torch
import torch.nn.functional as F


def timed(name, nbytes, op, args, rows, cols):
    for _ in range(3):
        op()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    op()
    torch.cuda.synchronize()
    batch = max(3, int(args.seconds / max(time.perf_counter() - t0, 1e-6)))
    gbps, us = [], []
    for _ in range(args.runs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(batch):
            op()
        torch.cuda.synchronize()
        dt = (time.perf_counter() - t0) / batch
        gbps.append(nbytes / dt / 1e9)
        us.append(dt * 1e6)
    gbps.sort()
    us.sort()
    print(json.dumps({"benchmark": "kernels", "tool": "torch", "op": name, "rows": rows, "cols": cols,
                      "median_gbps": gbps[len(gbps) // 2], "median_us": us[len(us) // 2], "min_gbps": gbps[0],
                      "max_gbps": gbps[-1], "runs": args.runs, "launches_per_run": batch,
                      "device": torch.cuda.get_device_name(0), "torch": torch.__version__}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=65536)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.2)
    args = ap.parse_args()
    R, C = args.rows, args.cols
    N, f = R * C, 4
    dev = torch.device("cuda")
    x = torch.rand(R, C, device=dev) * 6 - 3
    dy = torch.rand(R, C, device=dev) * 2 - 1
    bias = torch.rand(C, device=dev) * 2 - 1
    gamma = torch.rand(C, device=dev) + 0.5
    y = torch.empty_like(x)
    target = torch.arange(R, device=dev) % C
    run = lambda name, nbytes, op: timed(name, nbytes, op, args, R, C)

    run("copy", 2 * N * f, lambda: y.copy_(x))
    run("bias_relu_forward", 2 * N * f, lambda: torch.relu(x + bias))
    run("bias_gelu_forward", 2 * N * f, lambda: F.gelu(x + bias))
    run("gelu_backward", 3 * N * f, lambda: torch.ops.aten.gelu_backward(dy, x))
    run("softmax_rows", 2 * N * f, lambda: torch.softmax(x, -1))
    run("layer_norm_forward", 2 * N * f, lambda: F.layer_norm(x, (C,), gamma, bias, 1e-3))
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, (C,), gamma, bias, 1e-3)
    run("layer_norm_backward", 3 * N * f,
        lambda: torch.ops.aten.native_layer_norm_backward(dy, x, (C,), mean, rstd, gamma, bias, [True, True, True]))
    run("column_sums", N * f, lambda: dy.sum(0))
    xl = x.clone().requires_grad_(True)

    def sparse_ce():
        per = F.cross_entropy(xl, target, reduction="none")
        return per, torch.autograd.grad(per.sum() / R, xl)

    run("loss_sparse_ce_logits", 2 * N * f, sparse_ce)

    def mse():
        per = F.mse_loss(xl, dy, reduction="none").mean(1)
        return per, torch.autograd.grad(per.sum() / R, xl)

    run("loss_mse", 3 * N * f, mse)
    run("dropout", 2 * N * f, lambda: F.dropout(x, 0.1, training=True))
    w = torch.nn.Parameter(torch.rand(N, device=dev))
    w.grad = dy.reshape(-1).clone()
    opt = torch.optim.Adam([w], lr=1e-3, eps=1e-7, fused=True)
    run("adam", 7 * N * f, opt.step)
    run("global_norm", N * f, lambda: torch.nn.utils.clip_grad_norm_([w], 1e30))
    out = torch.empty_like(x)

    def sum4():
        torch.add(x, dy, out=out)
        out.add_(y)
        out.add_(dy)

    run("sum_4_buffers", 5 * N * f, sum4)


if __name__ == "__main__":
    main()
