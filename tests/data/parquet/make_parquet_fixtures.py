#!/usr/bin/env python3
"""Writes the small Parquet files tst_parquet_source reads, with pyarrow (and one with pandas),
and next to them what each column holds, written from the same values by numpy (one .npy per
numeric or list column: <file>_<column>.npy) and as JSON for strings (<file>_<column>.json).
The references come from the values the script starts with, not from reading the Parquet back,
so the test compares Sluice with numpy; the script still reads every file back with pyarrow and
stops if pyarrow disagrees with a reference (a writer that changes values would make the test
compare against something the file does not hold).

The files are committed, so the suite needs no Python to run; rerun this script to regenerate
them (pyarrow, numpy and pandas; written with pyarrow 25).
"""
import json
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261122)
written = []


def write_table(name, table, **options):
    pq.write_table(table, os.path.join(HERE, name), **options)
    written.append(name)


def save_npy(name, a):
    np.save(os.path.join(HERE, name), np.ascontiguousarray(a), allow_pickle=False)
    written.append(name)


def save_json(name, values):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump(values, f, ensure_ascii=False, indent=1)
        f.write("\n")
    written.append(name)


def check_numeric(file, column, expected, rows=None):
    """pyarrow reads `column` of `file` (its first `rows` rows) as exactly `expected`'s bytes."""
    got = pq.read_table(os.path.join(HERE, file), columns=[column]).column(0).combine_chunks()
    if pa.types.is_list(got.type) or pa.types.is_large_list(got.type) or pa.types.is_fixed_size_list(got.type):
        got = got.flatten()
    got = got.to_numpy(zero_copy_only=False)
    want = np.ascontiguousarray(expected).reshape(-1)
    if rows is not None:
        got = got[: want.size]
    assert got.dtype == want.dtype, (file, column, got.dtype, want.dtype)
    assert got.tobytes() == want.tobytes(), (file, column, got, want)


def check_strings(file, column, expected):
    got = pq.read_table(os.path.join(HERE, file), columns=[column]).column(0).to_pylist()
    assert got == expected, (file, column, got, expected)


# --- mixed: every kind of column Sluice reads, 10 rows in row groups of 4, 4 and 2 -------------
# Extremes, negative zero, infinities and a subnormal, so that a conversion anywhere shows; no
# NaN: pandas would turn it into a null.
mixed = {
    "i32": np.array([0, 1, -1, 2**31 - 1, -(2**31), 42, -42, 7, 100000, -5], dtype=np.int32),
    "i64": np.array([0, 2**53 + 1, -(2**62), 2**63 - 1, -(2**63), 1, -1, 123456789012, 5, -7], dtype=np.int64),
    "f32": np.array([0.0, -0.0, 1.5, -2.25, 3.4028235e38, 1e-45, np.inf, -np.inf, 0.1, 7.0], dtype=np.float32),
    "f64": np.array([0.1, -0.0, 1e308, 5e-324, -1.0 / 3, np.inf, 2.5, -7.75, 1e-10, 12345.678], dtype=np.float64),
    "flag": np.array([True, False, True, True, False, False, True, False, True, False]),
    "u8": np.array([0, 255, 1, 128, 127, 3, 200, 9, 10, 254], dtype=np.uint8),
}
mixed_names = ["alpha", "", "héllo wörld", "日本語", "emoji 🙂", "with,comma", 'quote"inside', "new\nline", "tab\t", "z"]
mixed_vec = rng.standard_normal((10, 3)).astype(np.float32)
mixed_pair = rng.standard_normal((10, 2)).astype(np.float32)


def mixed_table(order=slice(None)):
    columns = {k: pa.array(v[order]) for k, v in mixed.items()}
    columns["name"] = pa.array(mixed_names[order], pa.string())
    columns["vec"] = pa.array(list(mixed_vec[order]), pa.list_(pa.float32()))
    columns["pair"] = pa.array(list(mixed_pair[order]), pa.list_(pa.float32(), 2))
    return pa.table(columns)


write_table("mixed.parquet", mixed_table(), row_group_size=4)
write_table("mixed_zstd.parquet", mixed_table(), row_group_size=4, compression="zstd", use_dictionary=True,
            data_page_version="2.0")
write_table("mixed_gzip.parquet", mixed_table(), row_group_size=4, compression="gzip", use_dictionary=False)
# The rows backwards, in row groups of 3: a second file with the same columns and other values,
# for the order in which several files are read.
write_table("mixed_reversed.parquet", mixed_table(slice(None, None, -1)), row_group_size=3)
# pandas: numeric and string columns, with pandas' metadata (its strings become large_string).
frame = pd.DataFrame({**mixed, "name": mixed_names})
frame.to_parquet(os.path.join(HERE, "mixed_pandas.parquet"), engine="pyarrow", row_group_size=4)
written.append("mixed_pandas.parquet")

for column, values in mixed.items():
    save_npy("mixed_%s.npy" % column, values)
save_npy("mixed_vec.npy", mixed_vec)
save_npy("mixed_pair.npy", mixed_pair)
save_json("mixed_name.json", mixed_names)
for file in ("mixed.parquet", "mixed_zstd.parquet", "mixed_gzip.parquet", "mixed_pandas.parquet"):
    for column, values in mixed.items():
        check_numeric(file, column, values)
    check_strings(file, "name", mixed_names)
for file in ("mixed.parquet", "mixed_zstd.parquet", "mixed_gzip.parquet"):
    check_numeric(file, "vec", mixed_vec)
    check_numeric(file, "pair", mixed_pair)
check_numeric("mixed_reversed.parquet", "i64", mixed["i64"][::-1])
assert [pq.ParquetFile(os.path.join(HERE, f)).metadata.num_row_groups for f in
        ("mixed.parquet", "mixed_zstd.parquet", "mixed_gzip.parquet", "mixed_pandas.parquet", "mixed_reversed.parquet")] == [3, 3, 3, 3, 4]

# --- more_types: the other numeric widths, float16, large strings, binary, large lists --------
more = {
    "i8": np.array([-128, 127, 0, -1, 5, 9], dtype=np.int8),
    "i16": np.array([-32768, 32767, 0, -1, 300, 9], dtype=np.int16),
    "u16": np.array([0, 65535, 1, 2, 40000, 9], dtype=np.uint16),
    "u32": np.array([0, 2**32 - 1, 1, 2**31, 7, 9], dtype=np.uint32),
    "u64": np.array([0, 2**64 - 1, 1, 2**63, 2**53 + 1, 9], dtype=np.uint64),
    "f16": np.array([0.0, -0.0, 65504.0, 6e-8, -1.5, np.inf], dtype=np.float16),
}
more_lstr = ["x", "", "ü", "long " * 5, "y", "z"]
more_bin = [b"\x00\x01", b"", b"\xff\xfe\x00", b"text", b"\x80", b"\x00"]
more_llist = rng.standard_normal((6, 2))
columns = {k: pa.array(v) for k, v in more.items()}
columns["lstr"] = pa.array(more_lstr, pa.large_string())
columns["bin"] = pa.array(more_bin, pa.binary())
columns["llist"] = pa.array(list(more_llist), pa.large_list(pa.float64()))
write_table("more_types.parquet", pa.table(columns), row_group_size=4)
for column, values in more.items():
    save_npy("more_types_%s.npy" % column, values)
    check_numeric("more_types.parquet", column, values)
save_npy("more_types_llist.npy", more_llist)
check_numeric("more_types.parquet", "llist", more_llist)
save_json("more_types_lstr.json", more_lstr)
check_strings("more_types.parquet", "lstr", more_lstr)
save_json("more_types_bin.json", [list(b) for b in more_bin])  # bytes as lists of byte values
check_strings("more_types.parquet", "bin", more_bin)

# --- nulls: a null float in row 5, a null list in row 6, a null string in row 7 (groups of 4) --
# The references hold NaN (numbers, lists) and null (strings) where the file has a null.
nulls_x = np.arange(10, dtype=np.float32) * 0.5
nulls_x[5] = np.nan
nulls_k = np.arange(100, 110, dtype=np.int64)
nulls_v = np.stack([np.arange(10), -np.arange(10)], axis=1).astype(np.float32)
nulls_v[6] = np.nan
nulls_s = ["s%d" % i for i in range(10)]
nulls_s[7] = None
write_table("nulls.parquet", pa.table({
    "x": pa.array(nulls_x, pa.float32(), mask=np.isnan(nulls_x)),
    "s": pa.array(nulls_s, pa.string()),
    "k": pa.array(nulls_k),
    "v": pa.array([None if np.isnan(r).any() else list(r) for r in nulls_v], pa.list_(pa.float32())),
}), row_group_size=4)
save_npy("nulls_x.npy", nulls_x)
save_npy("nulls_k.npy", nulls_k)
save_npy("nulls_v.npy", nulls_v)
save_json("nulls_s.json", nulls_s)
check_strings("nulls.parquet", "s", nulls_s)
assert pq.read_table(os.path.join(HERE, "nulls.parquet")).column("x").null_count == 1
assert pq.read_table(os.path.join(HERE, "nulls.parquet")).column("v").to_pylist()[6] is None

# --- lists: lists of numbers that are not all of one length, or hold a null, or start null ----
# ragged: length 2 but row 6 has 3; holey: row 3 holds a null; first_null: row 0 is null.
lists_ragged = [[i, 10 * i] for i in range(8)]
lists_ragged[6] = [6, 60, 600]
lists_holey = [[i, -i] for i in range(8)]
lists_holey[3] = [3, None]
lists_first_null = [None] + [[float(i), 0.5] for i in range(1, 8)]
write_table("lists.parquet", pa.table({
    "id": pa.array(np.arange(8, dtype=np.int64)),
    "ragged": pa.array(lists_ragged, pa.list_(pa.int32())),
    "holey": pa.array(lists_holey, pa.list_(pa.int32())),
    "first_null": pa.array(lists_first_null, pa.list_(pa.float32())),
}), row_group_size=4)
save_npy("lists_id.npy", np.arange(8, dtype=np.int64))
save_npy("lists_ragged_head.npy", np.array(lists_ragged[:6], dtype=np.int32))  # the rows before row 6
save_npy("lists_holey_head.npy", np.array(lists_holey[:3], dtype=np.int32))    # the rows before row 3

# --- unsupported: an int64 column beside columns Sluice does not read -------------------------
when = np.array(["2024-01-01T00:00:00", "2024-06-30T12:00:00", "1970-01-01T00:00:00", "2038-01-19T03:14:08"],
                dtype="datetime64[ms]")
unsupported_id = np.array([10, 20, 30, 40], dtype=np.int64)
points = pa.array([{"x": float(i), "y": -float(i)} for i in range(4)], pa.struct([("x", pa.float64()), ("y", pa.float64())]))
write_table("unsupported.parquet", pa.table({
    "id": pa.array(unsupported_id),
    "when": pa.array(when, pa.timestamp("ms")),
    "pt": points,
    "tags": pa.array([["a"], ["b", "c"], [], ["d"]], pa.list_(pa.string())),
}))
save_npy("unsupported_id.npy", unsupported_id)
# The same kinds of column, but readable ones after a struct: a struct has a Parquet leaf column
# per member, so a column's leaf index is not its field index after it.
after_struct_score = np.array([0.25, -1.5, 3.0, 1e300])
write_table("after_struct.parquet", pa.table({
    "id": pa.array(unsupported_id),
    "pt": points,
    "when": pa.array(when, pa.timestamp("ms")),
    "score": pa.array(after_struct_score),
}))
save_npy("after_struct_id.npy", unsupported_id)
save_npy("after_struct_score.npy", after_struct_score)
check_numeric("after_struct.parquet", "score", after_struct_score)

# --- second files that do not match mixed.parquet's columns -----------------------------------
# other_columns: "i32" as float64 and nothing else; other_shapes: "vec" a scalar where mixed has
# lists of 3, "f32" lists of 1 where mixed has scalars.
write_table("other_columns.parquet", pa.table({"i32": pa.array([1.5, 2.5, 3.5])}))
write_table("other_shapes.parquet", pa.table({
    "vec": pa.array(np.array([1, 2, 3], dtype=np.float32)),
    "f32": pa.array([[1.0], [2.0], [3.0]], pa.list_(pa.float32())),
}))

# --- empty: the columns and no rows ------------------------------------------------------------
write_table("empty.parquet", pa.table({"id": pa.array([], pa.int64()), "name": pa.array([], pa.string())}))

total = sum(os.path.getsize(os.path.join(HERE, f)) for f in written)
assert total < 100 * 1024, total
print("wrote %d files, %d bytes: %s" % (len(written), total, " ".join(sorted(written))))
