#!/usr/bin/env python3
"""Writes the reference .npy/.npz files the test suite reads, with numpy itself, and a
manifest (fixtures.json) of what numpy says is inside each: dtype, shape, order, format
version, every value in C order, and numpy's own statistics. The files are committed, so
the suite needs no numpy to run; rerun this script to regenerate them.
"""
import json
import math
import os

import numpy as np
from numpy.lib import format as npformat

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "npy")
rng = np.random.default_rng(20261122)


def value_list(a):
    """Values in C order, JSON-safe (NaN and infinities as strings)."""
    out = []
    for v in np.ascontiguousarray(a).reshape(-1).tolist():
        if isinstance(v, float) and not math.isfinite(v):
            v = "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        out.append(v)
    return out


def safe(v):
    """A float for JSON: NaN and infinities as the strings numpy prints."""
    if v is None or math.isfinite(v):
        return v
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def stats(a):
    """numpy's answer for what `sluice inspect --stats` computes."""
    f = np.asarray(a, dtype=np.float64).reshape(-1)
    nan = int(np.isnan(f).sum())
    finite = f[~np.isnan(f)]
    s = {"nan_count": nan, "sum": float(finite.sum()) if finite.size else 0.0}
    s["mean"] = float(finite.mean()) if finite.size else None
    s["min"] = float(finite.min()) if finite.size else None
    s["max"] = float(finite.max()) if finite.size else None
    return {k: safe(v) if k != "nan_count" else v for k, v in s.items()}


manifest = {}


def record(name, a, version, file_order=None):
    manifest[name] = {
        "descr": npformat.dtype_to_descr(a.dtype),
        "shape": list(a.shape),
        "fortran_order": bool(a.flags.f_contiguous and not a.flags.c_contiguous),
        "version": "%d.%d" % version,
        "values": value_list(a),
        "stats": stats(a),
    }


def save(name, a, version=(1, 0)):
    with open(os.path.join(OUT, name), "wb") as f:
        npformat.write_array(f, a, version=version)
    record(name, a, version)


os.makedirs(OUT, exist_ok=True)

# Every numeric dtype, little- and big-endian where byte order applies.
for code in ["?", "i1", "u1", "i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8"]:
    for order in ("<", ">") if code not in ("?", "i1", "u1") else ("|",):
        dt = np.dtype(order + code if order != "|" else code)
        if dt.kind == "b":
            a = rng.integers(0, 2, size=(4, 3)).astype(dt)
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            a = np.array([[info.min, info.max, 0], [1, 2, 3], [info.max - 1, info.min + 1, 7], [5, 6, 8]], dtype=dt)
        else:
            a = rng.standard_normal((4, 3)).astype(dt)
        tag = {"<": "le", ">": "be", "|": "na"}[order]
        save("%s_%s.npy" % (dt.name, tag), a)

# Format versions 2.0 and 3.0 (numpy only picks them for huge or non-latin-1 headers).
save("float32_v2.npy", rng.standard_normal((5, 2)).astype("<f4"), version=(2, 0))
save("int16_v3.npy", np.arange(12, dtype="<i2").reshape(3, 4), version=(3, 0))

# Fortran order (2-d and 3-d), 0-d, empty, N-d, NaNs and infinities.
save("fortran_f8.npy", np.asfortranarray(np.arange(12, dtype="<f8").reshape(3, 4)))
save("fortran_be_i4_3d.npy", np.asfortranarray(np.arange(24, dtype=">i4").reshape(2, 3, 4)))
save("scalar_f8.npy", np.array(3.25, dtype="<f8"))
save("empty_f4.npy", np.zeros((0, 5), dtype="<f4"))
save("nd_u1.npy", np.arange(2 * 3 * 4 * 5, dtype="u1").reshape(2, 3, 4, 5))
save("nan_f4.npy", np.array([[1.0, np.nan, -2.5], [np.inf, 4.0, np.nan]], dtype="<f4"))
save("allnan_f8.npy", np.array([np.nan, np.nan], dtype="<f8"))

# Arrays numpy writes but Sluice refuses: an object array and a structured array.
np.save(os.path.join(OUT, "object.npy"), np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
np.save(os.path.join(OUT, "structured.npy"), np.zeros(3, dtype=[("x", "<f4"), ("y", "<i4")]))
np.save(os.path.join(OUT, "unicode.npy"), np.array(["ab", "cd"]))

# .npz, stored and deflated, as users write them.
features = rng.standard_normal((6, 4)).astype("<f4")
labels = np.arange(6, dtype="<i8")
weights = np.asfortranarray(rng.standard_normal((3, 2)))
np.savez(os.path.join(OUT, "stored.npz"), features=features, labels=labels, weights=weights)
np.savez_compressed(os.path.join(OUT, "deflated.npz"), features=features, labels=labels, weights=weights)
manifest["npz"] = {}
for name, a in (("features", features), ("labels", labels), ("weights", weights)):
    manifest["npz"][name] = {
        "descr": npformat.dtype_to_descr(a.dtype),
        "shape": list(a.shape),
        "fortran_order": bool(a.flags.f_contiguous and not a.flags.c_contiguous),
        "values": value_list(a),
    }

with open(os.path.join(HERE, "fixtures.json"), "w") as f:
    json.dump(manifest, f, indent=1, sort_keys=True)
print("wrote", len(os.listdir(OUT)), "files to", OUT)
