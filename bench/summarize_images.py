"""Medians of bench/image_bench.sh's JSON lines, as the table of BENCHMARKS.md."""
import json
import statistics
import sys
from collections import defaultdict

NAMES = {
    "sluice": "Sluice: from_files → decode_image → resize → batch",
    "tfdata": "tf.data: decode_jpeg + tf.image.resize, AUTOTUNE",
    "torch_pil": "torchvision ImageFolder (PIL) + DataLoader",
    "torch_decode_jpeg": "torchvision.io.decode_jpeg + v2.Resize + DataLoader",
}


def main(path):
    groups = defaultdict(list)
    for line in open(path):
        r = json.loads(line)
        groups[r["tool"]].append(r)
    print("| tool | threads | images/s (median) | runs |")
    print("|---|---|---:|---:|")
    for tool in NAMES:
        rs = groups.get(tool)
        if rs:
            print(f"| {NAMES[tool]} ({rs[0]['version']}) | {rs[0]['threads']} | {statistics.median(r['images_per_s'] for r in rs):,.0f} | {len(rs)} |")


if __name__ == "__main__":
    main(sys.argv[1])
