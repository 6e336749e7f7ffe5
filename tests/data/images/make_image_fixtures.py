#!/usr/bin/env python3
"""Writes the image files tst_image_decode reads and what TensorFlow itself makes of them:
JPEG and PNG files of several kinds (4:2:0 and 4:4:4 chroma, progressive, gray, RGBA, gray +
alpha, palette, 16-bit), damaged files (cut short, a bad CRC, not an image), and as .npy
files tf.io.decode_image's pixels for each channel count and tf.image.resize's output for
bilinear and nearest. images.json lists every case. The files are committed, so the suite
needs no TensorFlow; rerun this script (pip install tensorflow-cpu pillow) to regenerate them.
"""
import io
import json
import os

import numpy as np
import tensorflow as tf
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = os.path.join(HERE, "files")
EXPECTED = os.path.join(HERE, "expected")
rng = np.random.default_rng(20261125)


def picture(h, w, c):
    """Smooth gradients plus noise: chroma subsampling and the IDCT both matter."""
    y, x = np.mgrid[0:h, 0:w]
    planes = [(x * 255 // max(w - 1, 1)), (y * 255 // max(h - 1, 1)), ((x + y) * 7) % 256, (x * y) % 256]
    img = np.stack(planes[:c], axis=-1).astype(np.int32) + rng.integers(-20, 20, size=(h, w, c))
    return np.clip(img, 0, 255).astype(np.uint8)


def write(name, data):
    with open(os.path.join(FILES, name), "wb") as f:
        f.write(data)
    return name


os.makedirs(FILES, exist_ok=True)
os.makedirs(EXPECTED, exist_ok=True)
files = {}
rgb = picture(19, 26, 3)
files["rgb420.jpg"] = write("rgb420.jpg", tf.io.encode_jpeg(rgb, quality=90).numpy())
files["rgb444.jpg"] = write("rgb444.jpg", tf.io.encode_jpeg(rgb, quality=95, chroma_downsampling=False).numpy())
files["progressive.jpg"] = write("progressive.jpg", tf.io.encode_jpeg(rgb, quality=85, progressive=True).numpy())
files["gray.jpg"] = write("gray.jpg", tf.io.encode_jpeg(picture(17, 12, 1), quality=90).numpy())
files["rgb.png"] = write("rgb.png", tf.io.encode_png(picture(13, 17, 3)).numpy())
files["rgba.png"] = write("rgba.png", tf.io.encode_png(picture(11, 9, 4)).numpy())
files["gray.png"] = write("gray.png", tf.io.encode_png(picture(10, 14, 1)).numpy())
files["gray_alpha.png"] = write("gray_alpha.png", tf.io.encode_png(picture(8, 7, 2)).numpy())
files["rgb16.png"] = write("rgb16.png", tf.io.encode_png((picture(9, 10, 3).astype(np.uint16) * 257 + rng.integers(0, 257, size=(9, 10, 3))).astype(np.uint16)).numpy())
palette = Image.fromarray(picture(12, 15, 3)).convert("P", palette=Image.ADAPTIVE, colors=16)
buf = io.BytesIO()
palette.save(buf, format="PNG")
files["palette.png"] = write("palette.png", buf.getvalue())

# Damaged files: TensorFlow refuses each of them.
whole = open(os.path.join(FILES, "rgb420.jpg"), "rb").read()
write("truncated.jpg", whole[: len(whole) // 2])
png = bytearray(open(os.path.join(FILES, "rgb.png"), "rb").read())
idat = png.index(b"IDAT")
png[idat + 6] ^= 0x55  # inside the compressed data: the chunk's CRC no longer matches
write("bad_crc.png", bytes(png))
write("not_an_image.jpg", b"this is a text file, not a picture\n")
bad = {}
for name in ("truncated.jpg", "bad_crc.png", "not_an_image.jpg"):
    try:
        tf.io.decode_image(open(os.path.join(FILES, name), "rb").read(), expand_animations=False).numpy()
        bad[name] = "decoded"
    except tf.errors.InvalidArgumentError:
        bad[name] = "refused"

cases = []
for name in files:
    data = open(os.path.join(FILES, name), "rb").read()
    channel_counts = (0, 1, 3) if name.endswith(".jpg") else (0, 1, 3, 4)
    for channels in channel_counts:
        for dtype in (tf.uint8, tf.uint16) if name == "rgb16.png" else (tf.uint8,):
            pixels = tf.io.decode_image(data, channels=channels, dtype=dtype, expand_animations=False).numpy()
            out = "%s_c%d_%s.npy" % (name.replace(".", "_"), channels, dtype.name)
            np.save(os.path.join(EXPECTED, out), pixels)
            cases.append({"file": name, "channels": channels, "dtype": dtype.name, "expected": out})

# tf.image.resize (TF2: half-pixel centres, no antialiasing) of one decoded picture, down and
# up, and of a batch.
source = tf.io.decode_image(open(os.path.join(FILES, "rgb.png"), "rb").read(), channels=3).numpy()
np.save(os.path.join(EXPECTED, "resize_source.npy"), source)
resizes = []
for method in ("bilinear", "nearest"):
    for size in ((7, 5), (13, 17), (30, 41), (4, 40)):
        out = tf.image.resize(source, size, method=method).numpy()
        if method == "nearest":
            out = out.astype(np.uint8)
        name = "resize_%s_%dx%d.npy" % (method, size[0], size[1])
        np.save(os.path.join(EXPECTED, name), out)
        resizes.append({"method": method, "size": list(size), "expected": name})

with open(os.path.join(HERE, "images.json"), "w") as f:
    json.dump({"generator": "make_image_fixtures.py, tensorflow " + tf.__version__, "decode": cases, "bad": bad,
               "resize_source": "resize_source.npy", "resize": resizes}, f, indent=1)
print(len(cases), "decode cases,", len(resizes), "resize cases;", bad)
