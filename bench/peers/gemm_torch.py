"""torch.matmul throughput, measured as bench/gemm_bench.cpp measures Sluice's cuBLAS wrapper:
square products, fp32 (TF32 off), TF32 (allow_tf32 on), bf16 (bf16 in and out: PyTorch's
bf16 matmul returns bf16) and bf16_fp32out (torch.mm(..., out_dtype=torch.float32), what Sluice's
bf16 product returns, where this PyTorch has it), median over --runs timed batches of
back-to-back products, host clock with the device synchronised at both ends. One JSON line per
(size, mode)."""
import argparse
import json
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2048,4096,8192")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.25)
    args = ap.parse_args()
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(0)
    for n in [int(s) for s in args.sizes.split(",")]:
        a = torch.rand(n, n, device=dev, generator=gen) * 2 - 1
        b = torch.rand(n, n, device=dev, generator=gen) * 2 - 1
        for mode in ("fp32", "tf32", "bf16", "bf16_fp32out"):
            torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
            x, y = (a.bfloat16(), b.bfloat16()) if mode.startswith("bf16") else (a, b)
            product = torch.matmul
            if mode == "bf16_fp32out":
                def product(p, q):
                    return torch.mm(p, q, out_dtype=torch.float32)
                try:
                    product(x, y)
                except (TypeError, RuntimeError) as e:
                    print(json.dumps({"benchmark": "gemm", "tool": "torch", "size": n, "mode": mode, "skipped": str(e)[:200]}), flush=True)
                    continue
            for _ in range(3):
                product(x, y)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            product(x, y)
            torch.cuda.synchronize()
            batch = max(3, int(args.seconds / max(time.perf_counter() - t0, 1e-6)))
            tflops = []
            for _ in range(args.runs):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(batch):
                    product(x, y)
                torch.cuda.synchronize()
                tflops.append(2.0 * n ** 3 * batch / (time.perf_counter() - t0) / 1e12)
            tflops.sort()
            print(json.dumps({"benchmark": "gemm", "tool": "torch", "size": n, "mode": mode, "median_tflops": tflops[len(tflops) // 2],
                              "min_tflops": tflops[0], "max_tflops": tflops[-1], "runs": args.runs,
                              "products_per_run": batch, "device": torch.cuda.get_device_name(0),
                              "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
