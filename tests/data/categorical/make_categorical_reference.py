#!/usr/bin/env python3
"""Writes categorical_reference.json (with vocabulary.txt and int_vocabulary.txt): the columns
tst_categorical_functions feeds through map's hashing, lookup, bucketize and discretize, and
what real Keras 3 / TensorFlow give for them: keras.layers.Hashing (FarmHash, SipHash with one
or two salts, a mask), StringLookup and IntegerLookup (vocabulary lists and files, adapted
vocabularies, 1 and 3 OOV indices, floormod and farmhash OOV, masks, max_tokens),
tf.raw_ops.Bucketize and keras.layers.Discretization (bin_boundaries, and num_bins adapted
over the same elements Sluice adapts over, unbatched and batched).

The files are committed, so the suite needs no TensorFlow; rerun this script (pip install
tensorflow keras) to regenerate them. Each case says how the test builds its pipeline: the
feature, map's parameters, an optional cast before and batch size, and adapt_elements (the
elements adapted over, as Keras's adapt(dataset.take(n)) sees them).
"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20260611)

ROWS = 400
ADAPT_ROWS = 320  # rows the adapted cases learn from; the rest probe what they learned

# Strings: a Zipf-like draw from a small vocabulary (so adapted orders have ties and a tail),
# then strings of every FarmHash length branch (0, 1-3, 4-7, 8-16, 17-32, 33-64, over 64 and
# over 128 bytes), UTF-8, spaces and quotes (CSV quoting), and words never seen while adapting.
BASE = ["cat", "dog", "bird", "fish", "horse", "cow", "sheep", "goat", "ant", "bee", "owl", "yak"]
weights = 1.0 / np.arange(1, len(BASE) + 1)
words = list(rng.choice(BASE, size=ADAPT_ROWS, p=weights / weights.sum()))
words[5] = words[17] = ""  # the mask token of some cases
words[40] = words[41] = "[UNK]"  # the OOV token: left out of an adapted vocabulary
tail = ["", "a", "ab", "abc", "abcd", "abcdefg", "abcdefgh", "0123456789abcdef", "0123456789abcdefg",
        "x" * 31, "y" * 32, "z" * 33, "w" * 63, "v" * 64, "u" * 65, "t" * 100, "s" * 128, "r" * 129, "q" * 300,
        "naïve", "日本語", "a,b", "say \"hi\"", " lead", "trail ", "CAT", "Cat", "zebra", "lion", "[UNK]", "-1", "42"]
words += tail + list(rng.choice(BASE + ["zebra", "lion", "tiger"], size=ROWS - ADAPT_ROWS - len(tail)))
assert len(words) == ROWS

# int64: repeated small values (negative too) for IntegerLookup's adapt, then extremes for
# tf.as_string and floormod.
ints = list(rng.choice([3, 7, 7, 9, 9, 9, 12, -4, 0, 0, -1, 100, 5, 5, 5, 5], size=ADAPT_ROWS).astype(int))
int_tail = [-(2**63), 2**63 - 1, 2**53 + 1, -(2**31), 2**31, -1, 0, 1, -7, 8, 1000003, 123456789012]
ints += int_tail + list(rng.integers(-50, 50, size=ROWS - ADAPT_ROWS - len(int_tail)).astype(int))
ints = [int(v) for v in ints]

# int32: distinct values to adapt over (ties, see check_discretization_tie_free), then values
# a float32 cannot hold (int32 → float conversion in Bucketize).
ints32 = list(rng.choice(np.arange(-500, 500), size=ROWS, replace=False).astype(int))
ints32[ADAPT_ROWS:ADAPT_ROWS + 8] = [16777215, 16777216, 16777217, 16777219, -16777217, 2**31 - 1, -(2**31), 0]
ints32 = [int(v) for v in ints32]

# float64: distinct values to adapt over (no ties, see check_discretization_tie_free), then
# probes: the learned boundaries, their float32 neighbours, NaN and infinities.
adapt_floats = rng.normal(3.0, 10.0, size=ADAPT_ROWS)
floats = list(adapt_floats) + [0.0] * (ROWS - ADAPT_ROWS)


def f32(values):
    return np.asarray(values, dtype=np.float32)


def run_layer(layer, column, dtype):
    return [int(v) for v in np.asarray(layer(np.asarray(column, dtype=dtype))).reshape(-1)]


def dataset(column, dtype, batch, elements):
    ds = tf.data.Dataset.from_tensor_slices(np.asarray(column, dtype=dtype))
    if batch:
        ds = ds.batch(batch)
    return ds.take(elements)


def adapted_discretization(column, num_bins, epsilon, batch, elements, dtype="float64"):
    layer = keras.layers.Discretization(num_bins=num_bins, epsilon=epsilon)
    layer.adapt(dataset(column, dtype, batch, elements))
    return layer


def check_discretization_tie_free(column, num_bins, epsilon, batch, elements, dtype="float64"):
    """numpy's default argsort does not keep tied values in order, and where tied summary values
    carry different weights Keras's boundaries depend on the order it happens to give. Sluice
    sorts stably: the committed cases must be ones where that makes no difference."""
    plain = adapted_discretization(column, num_bins, epsilon, batch, elements, dtype).bin_boundaries
    argsort = np.argsort
    np.argsort = lambda a, *args, **kw: argsort(a, kind="stable")
    try:
        stable = adapted_discretization(column, num_bins, epsilon, batch, elements, dtype).bin_boundaries
    finally:
        np.argsort = argsort
    assert plain == stable, "tie order changes Keras's boundaries; pick other data"


discretize_adapted = [  # (feature, num_bins, epsilon, batch, adapt_elements)
    ("floats", 5, 0.01, 0, ADAPT_ROWS),
    ("floats", 7, 0.01, 8, ADAPT_ROWS // 8),
    ("floats", 4, 0.05, 16, ADAPT_ROWS // 16),
    ("floats", 12, 0.001, 32, ADAPT_ROWS // 32),
]
probes = []
for feature, num_bins, epsilon, batch, elements in discretize_adapted:
    check_discretization_tie_free(adapt_floats, num_bins, epsilon, batch, elements)
    for b in adapted_discretization(adapt_floats, num_bins, epsilon, batch, elements).bin_boundaries:
        b = np.float32(b)
        probes += [float(b), float(np.nextafter(b, np.float32(np.inf))), float(np.nextafter(b, np.float32(-np.inf)))]
probes += [float("nan"), float("inf"), float("-inf"), 3e38, -3e38, 0.5, -0.5, 2.9999999]  # finite ones fit a float32
assert len(probes) <= ROWS - ADAPT_ROWS
floats[ADAPT_ROWS:ADAPT_ROWS + len(probes)] = probes

raw = [b"", b"\xff", b"\x00\x01\x02", b"\xc3\x28 not utf-8", bytes(range(256)), b"cat", b"dog", b"\x80" * 70]

columns = {"words": words, "ints": ints, "ints32": ints32, "floats": floats}
dtypes = {"words": object, "ints": "int64", "ints32": "int32", "floats": "float64"}

with open(os.path.join(HERE, "vocabulary.txt"), "w", encoding="utf-8") as f:
    f.write("dog\r\ncat\nbird\nnaïve\n a\nzebra\n")  # a CRLF line end, a leading space
with open(os.path.join(HERE, "int_vocabulary.txt"), "w") as f:
    f.write("9\n-4\n+100\n 5\n123456789012\n")  # TensorFlow's integer parse takes '+' and spaces

cases = []


def case(name, function, feature, params, expected, batch=0, cast=None, adapt_elements=None, **extra):
    c = {"name": name, "function": function, "feature": feature, "params": params, "batch": batch, "expected": expected}
    if cast:
        c["cast"] = cast
    if adapt_elements is not None:
        c["params"] = dict(params, adapt_elements=adapt_elements)
    c.update(extra)
    cases.append(c)


def keras_column(feature):
    return np.asarray(columns[feature], dtype=dtypes[feature])


# --- Hashing -------------------------------------------------------------------------------
for feature in ["words", "ints", "floats"]:
    col = keras_column(feature)
    case(f"hashing {feature}", "hashing", feature, {"num_bins": 17}, run_layer(keras.layers.Hashing(num_bins=17), col, col.dtype))
    case(f"hashing {feature} batched", "hashing", feature, {"num_bins": 17},
         run_layer(keras.layers.Hashing(num_bins=17), col, col.dtype), batch=4)
    case(f"hashing {feature} salt", "hashing", feature, {"num_bins": 1000, "salt": 133},
         run_layer(keras.layers.Hashing(num_bins=1000, salt=133), col, col.dtype))
    case(f"hashing {feature} two salts", "hashing", feature, {"num_bins": 5, "salt": [133, 137]},
         run_layer(keras.layers.Hashing(num_bins=5, salt=[133, 137]), col, col.dtype))
mask_words = keras_column("words")
case("hashing words mask", "hashing", "words", {"num_bins": 8, "mask_value": ""},
     run_layer(keras.layers.Hashing(num_bins=8, mask_value=""), mask_words, object))
case("hashing words mask salt", "hashing", "words", {"num_bins": 8, "mask_value": "cat", "salt": [1, 2]},
     run_layer(keras.layers.Hashing(num_bins=8, mask_value="cat", salt=[1, 2]), mask_words, object))
case("hashing ints mask", "hashing", "ints", {"num_bins": 6, "mask_value": 0},
     run_layer(keras.layers.Hashing(num_bins=6, mask_value=0), keras_column("ints"), "int64"))
case("hashing ints32", "hashing", "ints32", {"num_bins": 23}, run_layer(keras.layers.Hashing(num_bins=23), keras_column("ints32"), "int32"))
case("hashing ints mask one bin", "hashing", "ints", {"num_bins": 1, "mask_value": 0},
     run_layer(keras.layers.Hashing(num_bins=1, mask_value=0), keras_column("ints"), "int64"))
case("hashing raw bytes", "hashing", "raw", {"num_bins": 1000},
     [int(v) for v in keras.layers.Hashing(num_bins=1000)(tf.constant(raw)).numpy()])
case("hashing raw bytes salt", "hashing", "raw", {"num_bins": 1000, "salt": 99},
     [int(v) for v in keras.layers.Hashing(num_bins=1000, salt=99)(tf.constant(raw)).numpy()])

# --- StringLookup / IntegerLookup ----------------------------------------------------------
vocab = ["dog", "cat", "bird", "zebra", "naïve", "", "x" * 31]
vocab_no_mask = [w for w in vocab if w]


def lookup(name, feature, params, layer, batch=0, adapt_elements=None, adapt_batch=0):
    col = keras_column(feature)
    if adapt_elements is not None:
        layer.adapt(dataset(columns[feature], dtypes[feature], adapt_batch, adapt_elements))
    case(name, "lookup", feature, params, run_layer(layer, col, col.dtype), batch=batch, adapt_elements=adapt_elements,
         vocabulary=[v if isinstance(v, str) else int(v) for v in layer.get_vocabulary()])


lookup("lookup words", "words", {"vocabulary": vocab_no_mask}, keras.layers.StringLookup(vocabulary=vocab_no_mask))
lookup("lookup words batched", "words", {"vocabulary": vocab_no_mask}, keras.layers.StringLookup(vocabulary=vocab_no_mask), batch=5)
lookup("lookup words 3 oov", "words", {"vocabulary": vocab_no_mask, "num_oov_indices": 3},
       keras.layers.StringLookup(vocabulary=vocab_no_mask, num_oov_indices=3))
lookup("lookup words 3 oov salt", "words", {"vocabulary": vocab_no_mask, "num_oov_indices": 3, "salt": [5, 6]},
       keras.layers.StringLookup(vocabulary=vocab_no_mask, num_oov_indices=3, salt=[5, 6]))
lookup("lookup words mask", "words", {"vocabulary": vocab_no_mask, "mask_token": ""},
       keras.layers.StringLookup(vocabulary=vocab_no_mask, mask_token=""))
lookup("lookup words special tokens first", "words", {"vocabulary": ["", "[UNK]", "[UNK]"] + vocab_no_mask, "mask_token": "", "num_oov_indices": 2},
       keras.layers.StringLookup(vocabulary=["", "[UNK]", "[UNK]"] + vocab_no_mask, mask_token="", num_oov_indices=2))
lookup("lookup words no oov token", "words", {"vocabulary": vocab, "oov_token": "zebra", "num_oov_indices": 1},
       keras.layers.StringLookup(vocabulary=vocab, oov_token="zebra"))
lookup("lookup words file", "words", {"vocabulary_file": "vocabulary.txt", "num_oov_indices": 2, "mask_token": ""},
       keras.layers.StringLookup(vocabulary=os.path.join(HERE, "vocabulary.txt"), num_oov_indices=2, mask_token=""))
lookup("lookup words file as vocabulary", "words", {"vocabulary": "vocabulary.txt"},
       keras.layers.StringLookup(vocabulary=os.path.join(HERE, "vocabulary.txt")))
lookup("lookup words adapted", "words", {}, keras.layers.StringLookup(), adapt_elements=ADAPT_ROWS)
lookup("lookup words adapted max_tokens", "words", {"max_tokens": 7, "num_oov_indices": 3, "mask_token": ""},
       keras.layers.StringLookup(max_tokens=7, num_oov_indices=3, mask_token=""), adapt_elements=ADAPT_ROWS)
lookup("lookup words adapted batched", "words", {"num_oov_indices": 2}, keras.layers.StringLookup(num_oov_indices=2),
       batch=8, adapt_elements=ADAPT_ROWS // 8, adapt_batch=8)

int_vocab = [9, 7, -4, 100, 123456789012, 2**63 - 1]
lookup("lookup ints", "ints", {"vocabulary": int_vocab}, keras.layers.IntegerLookup(vocabulary=int_vocab))
lookup("lookup ints 3 oov floormod", "ints", {"vocabulary": int_vocab, "num_oov_indices": 3},
       keras.layers.IntegerLookup(vocabulary=int_vocab, num_oov_indices=3))
lookup("lookup ints 3 oov farmhash", "ints", {"vocabulary": int_vocab, "num_oov_indices": 3, "oov_method": "farmhash"},
       keras.layers.IntegerLookup(vocabulary=int_vocab, num_oov_indices=3, oov_method="farmhash"))
lookup("lookup ints 4 oov farmhash salt mask", "ints",
       {"vocabulary": int_vocab, "num_oov_indices": 4, "oov_method": "farmhash", "salt": 42, "mask_token": 0},
       keras.layers.IntegerLookup(vocabulary=int_vocab, num_oov_indices=4, oov_method="farmhash", salt=42, mask_token=0))
lookup("lookup ints file", "ints", {"vocabulary_file": "int_vocabulary.txt", "mask_token": 0},
       keras.layers.IntegerLookup(vocabulary=os.path.join(HERE, "int_vocabulary.txt"), mask_token=0))
lookup("lookup ints adapted", "ints", {"mask_token": 0, "max_tokens": 8}, keras.layers.IntegerLookup(mask_token=0, max_tokens=8),
       adapt_elements=ADAPT_ROWS)
lookup("lookup ints32 adapted", "ints32", {"num_oov_indices": 2}, keras.layers.IntegerLookup(num_oov_indices=2), adapt_elements=ADAPT_ROWS)

# --- Bucketize (tf.raw_ops.Bucketize) --------------------------------------------------------
boundaries = [-10.0, -0.5, 0.0, 0.1, 2.9999999, 3.0, 16777216.5, 1e10]
for feature, dtype, cast in [("floats", "float64", None), ("floats", "float32", "float32"), ("ints32", "int32", None), ("ints", "int64", None)]:
    values = tf.constant(np.asarray(columns[feature]).astype(dtype))  # the float32 cast keeps infinities
    out = tf.raw_ops.Bucketize(input=values, boundaries=boundaries).numpy()
    case(f"bucketize {feature} {dtype}", "bucketize", feature, {"boundaries": boundaries}, [int(v) for v in out], cast=cast)

# --- Discretization ----------------------------------------------------------------------------
bins = [-5.0, 0.0, 0.1, 3.0, 3.0, 12.25]
case("discretize floats bin_boundaries", "discretize", "floats", {"bin_boundaries": bins},
     run_layer(keras.layers.Discretization(bin_boundaries=bins), keras_column("floats"), "float64"))
case("discretize ints32 bin_boundaries", "discretize", "ints32", {"bin_boundaries": [-3.5, 0.0, 16777216.5]},
     run_layer(keras.layers.Discretization(bin_boundaries=[-3.5, 0.0, 16777216.5]), keras_column("ints32"), "int32"))
for feature, num_bins, epsilon, batch, elements in discretize_adapted:
    layer = adapted_discretization(adapt_floats, num_bins, epsilon, batch, elements)
    params = {"num_bins": num_bins} if epsilon == 0.01 else {"num_bins": num_bins, "epsilon": epsilon}
    case(f"discretize adapted {num_bins} bins, batch {batch}", "discretize", feature, params,
         run_layer(layer, keras_column(feature), "float64"), batch=batch, adapt_elements=elements,
         bin_boundaries=[float(b) for b in layer.bin_boundaries])
check_discretization_tie_free(ints32[:ADAPT_ROWS], 3, 0.01, 0, ADAPT_ROWS, "int32")
ints_layer = adapted_discretization(ints32[:ADAPT_ROWS], 3, 0.01, 0, ADAPT_ROWS, "int32")
case("discretize adapted ints32", "discretize", "ints32", {"num_bins": 3}, run_layer(ints_layer, keras_column("ints32"), "int32"),
     adapt_elements=ADAPT_ROWS, bin_boundaries=[float(b) for b in ints_layer.bin_boundaries])


def json_number(v):
    if isinstance(v, float) and not np.isfinite(v):
        return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


out = {
    "generator": f"make_categorical_reference.py with keras {keras.__version__}, tensorflow {tf.__version__}, numpy {np.__version__}",
    "rows": ROWS,
    "columns": {"words": words, "ints": ints, "ints32": ints32, "floats": [json_number(v) for v in floats]},
    "raw_hex": [r.hex() for r in raw],
    "cases": cases,
}
with open(os.path.join(HERE, "categorical_reference.json"), "w", encoding="utf-8") as f:
    json.dump(out, f, ensure_ascii=False, indent=None, separators=(",", ":"))
    f.write("\n")
print(f"{len(cases)} cases written")
