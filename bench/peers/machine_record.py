#!/usr/bin/env python3
"""One JSON line describing the machine a benchmark ran on, for the head of its raw results:
CPU model, cores, memory, kernel, and the versions of the peers' libraries this Python has.

usage: machine_record.py [--threads N]
"""
import argparse
import importlib
import json
import os
import platform


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def versions():
    found = {}
    for module in ("numpy", "torch", "tensorflow"):
        try:
            found[module] = importlib.import_module(module).__version__
        except Exception:  # absent or broken: the peer is skipped and says so itself
            pass
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, help="threads the benchmark was told to use")
    args = ap.parse_args()
    rec = {"machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "memory_bytes": memory_bytes(),
                       "kernel": platform.release(), "python": platform.python_version(), "packages": versions()}}
    if args.threads is not None:
        rec["machine"]["benchmark_threads"] = args.threads
    print(json.dumps(rec))


if __name__ == "__main__":
    main()
