#!/usr/bin/env python3
"""Decode + resize + batch throughput over a folder of JPEG files (one sub-folder per class),
the way users feed an image model today, against Sluice's from_files → decode_image → resize →
batch on the same files. One JSON line per measurement.

  sluice            from_files → global_shuffle → map(decode_image) → map(resize, bilinear) →
                    batch(B) → prefetch, parallel maps AUTOTUNE'd on --threads cores (the Python
                    package; batches arrive as numpy arrays).
  tfdata            tf.data at its strongest for this job: list of paths → shuffle →
                    map(read_file + decode_jpeg + resize, num_parallel_calls=AUTOTUNE) →
                    batch(B) → prefetch(AUTOTUNE); TensorFlow's own thread pools sized by the machine.
  torch_pil         torchvision's ImageFolder (PIL decode, transforms.Resize, antialiased as PIL
                    always is, ToTensor) in a DataLoader with --workers worker processes.
  torch_decode_jpeg the stronger torchvision path: torchvision.io.decode_jpeg (libjpeg-turbo) of
                    the file bytes, then v2.Resize(antialias=False) as tf.image.resize does, in a
                    DataLoader with --workers workers, each single-threaded.

The clock starts after the first batch (threads, workers and graphs are started by then) and runs
for --seconds over as many passes as that takes.

usage: image_peers.py TOOL DIR [--size 224] [--batch 64] [--seconds 20] [--threads 2] [--workers 2]
"""
import argparse
import glob
import json
import os
import platform
import sys
import time


def paths_of(root):
    return sorted(glob.glob(os.path.join(root, "*", "*.jpg")))


def timed(batches, seconds, batch_size):
    it = batches()
    first = next(it)
    del first
    start, images = time.perf_counter(), 0
    while True:
        for b in it:
            images += batch_size if not hasattr(b, "shape") else b.shape[0]
            if time.perf_counter() - start >= seconds:
                return images / (time.perf_counter() - start)
        it = batches()


def run_sluice(args):
    import sluice
    doc = {"format": "sluice-project", "version": 1, "name": "image-bench", "pipeline": {"nodes": [
        {"id": "files", "op": "from_files", "params": {"directory": args.dir}},
        {"id": "shuffle", "op": "global_shuffle", "params": {"seed": 1}},
        {"id": "decode", "op": "map", "params": {"function": "decode_image", "features": "image", "channels": 3,
                                                 "num_parallel_calls": "AUTOTUNE"}},
        {"id": "resize", "op": "map", "params": {"function": "resize", "features": "image", "size": [args.size, args.size],
                                                 "num_parallel_calls": "AUTOTUNE"}},
        {"id": "batch", "op": "batch", "params": {"batch_size": args.batch}},
        {"id": "prefetch", "op": "prefetch", "params": {"buffer_size": "AUTOTUNE"}}],
        "edges": [["files", "shuffle"], ["shuffle", "decode"], ["decode", "resize"], ["resize", "batch"], ["batch", "prefetch"]]}}
    pipe = sluice.Project.from_dict(doc).pipeline(threads=args.threads)
    return timed(lambda: (b["image"] for b in pipe), args.seconds, args.batch), "sluice " + sluice.__version__ if hasattr(sluice, "__version__") else "sluice"


def run_tfdata(args):
    import tensorflow as tf
    paths = paths_of(args.dir)

    def load(path):
        image = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
        return tf.image.resize(image, [args.size, args.size])

    ds = (tf.data.Dataset.from_tensor_slices(paths).shuffle(len(paths), seed=1)
          .map(load, num_parallel_calls=tf.data.AUTOTUNE).batch(args.batch).prefetch(tf.data.AUTOTUNE))
    return timed(lambda: iter(ds), args.seconds, args.batch), "tensorflow " + tf.__version__


def run_torch(args, decode_jpeg):
    import torch
    import torchvision
    from torch.utils.data import DataLoader, Dataset

    if decode_jpeg:
        from torchvision.io import decode_jpeg as decode
        from torchvision.transforms import v2
        resize = v2.Resize((args.size, args.size), antialias=False)

        class Files(Dataset):
            def __init__(self, paths):
                self.paths = paths

            def __len__(self):
                return len(self.paths)

            def __getitem__(self, i):
                with open(self.paths[i], "rb") as f:
                    data = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)
                return resize(decode(data)).float()

        dataset = Files(paths_of(args.dir))
    else:
        from torchvision import datasets, transforms
        dataset = datasets.ImageFolder(args.dir, transform=transforms.Compose(
            [transforms.Resize((args.size, args.size)), transforms.ToTensor()]))

    def init(_):
        torch.set_num_threads(1)

    loader = DataLoader(dataset, batch_size=args.batch, shuffle=True, num_workers=args.workers, worker_init_fn=init,
                        persistent_workers=args.workers > 0)

    def batches():
        for b in loader:
            yield b if decode_jpeg else b[0]
    return timed(batches, args.seconds, args.batch), "torch " + torch.__version__ + ", torchvision " + torchvision.__version__


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tool", choices=["sluice", "tfdata", "torch_pil", "torch_decode_jpeg"])
    p.add_argument("dir")
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    if args.tool == "sluice":
        rate, version = run_sluice(args)
        threads = "%d (oneTBB arena)" % args.threads
    elif args.tool == "tfdata":
        rate, version = run_tfdata(args)
        threads = "TensorFlow's default pools (%d cores)" % os.cpu_count()
    else:
        rate, version = run_torch(args, args.tool == "torch_decode_jpeg")
        threads = "%d worker processes, 1 thread each" % args.workers
    print(json.dumps({"tool": args.tool, "images_per_s": round(rate, 1), "size": args.size, "batch": args.batch, "files": len(paths_of(args.dir)),
                      "threads": threads, "version": version, "python": platform.python_version()}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
