"""import sluice: projects and pipelines from Python, batches as zero-copy numpy arrays, the
tf.data-style chain, statistics, errors as the CLI words them, and Ctrl-C."""
import json
import os
import subprocess

import numpy as np
import pytest
from references import import_reference

import sluice
from conftest import assert_ctrl_c_stops


def classic(folder, seed=7, batch=256):
    return sluice.from_npy({"x": "x.npy", "y": "y.npy"}, folder=folder).global_shuffle(seed=seed).batch(batch) \
        .prefetch(sluice.AUTOTUNE)


def test_batches_equal_sluice_preview(regression, sluice_exe):
    """The same project gives the same batches in Python as `sluice preview --out` writes."""
    classic(regression).save_project(regression / "p.sluice")
    out = regression / "preview"
    subprocess.run([sluice_exe, "preview", str(regression / "p.sluice"), "--batches", "3", "--out", str(out)],
                   check=True, capture_output=True)
    batches = sluice.Project.load(regression / "p.sluice").pipeline().take(3)
    assert len(batches) == 3
    for i, batch in enumerate(batches):
        with np.load(out / f"batch_{i:05d}.npz") as expected:
            assert sorted(batch) == sorted(expected.files)
            for name in expected.files:
                assert batch[name].dtype == expected[name].dtype
                np.testing.assert_array_equal(batch[name], expected[name])


def test_every_row_once_per_pass_and_a_new_order_each_pass(regression):
    x = np.load(regression / "x.npy")
    pipeline = classic(regression).pipeline(threads=2)
    orders = []
    for _ in range(2):
        rows = np.concatenate([b["x"] for b in pipeline])
        assert rows.shape == x.shape
        # Every row exactly once: the sorted rows equal the file's sorted rows.
        np.testing.assert_array_equal(np.sort(rows, axis=0), np.sort(x, axis=0))
        orders.append(rows)
    assert not np.array_equal(orders[0], orders[1])


def test_cardinality_is_tf_datas(regression):
    """Batches per pass where known ahead (a Keras epoch's steps), INFINITE after repeat(), UNKNOWN
    after a filter, as tf.data's cardinality()."""
    assert classic(regression, batch=256).pipeline().cardinality() == 8  # 2,000 rows: 7 full batches and 1
    assert classic(regression, batch=256).batch(2).pipeline().cardinality() == 4
    assert sluice.from_npy({"x": "x.npy"}, folder=regression).repeat().batch(10).pipeline().cardinality() == sluice.INFINITE
    assert sluice.from_npy({"y": "y.npy"}, folder=regression).filter(lambda e: e["y"][0] > 0).pipeline().cardinality() == sluice.UNKNOWN


def test_batches_are_zero_copy_views(regression):
    batch = classic(regression).pipeline().take(1)[0]
    x = batch["x"]
    # A view of Sluice's batch buffer: the array owns nothing; its base keeps the buffer alive.
    assert not x.flags.owndata and x.base is not None
    assert x.flags.writeable  # a fresh batch buffer nobody else holds
    view = np.from_dlpack(x)  # numpy's __dlpack__, what torch.from_dlpack uses
    assert view.__array_interface__["data"][0] == x.__array_interface__["data"][0]
    assert np.shares_memory(view, x)
    del batch, view
    x[0, 0] = 42.0  # still alive and writable after the dict is gone
    assert x[0, 0] == 42.0


def test_torch_takes_a_batch_without_a_copy(regression):
    torch = import_reference("torch", "Debian's python3-torch, installed by scripts/setup-debian.sh")
    x = classic(regression).pipeline().take(1)[0]["x"]
    t = torch.from_dlpack(x) if hasattr(torch, "from_dlpack") else torch.utils.dlpack.from_dlpack(x.__dlpack__())
    assert t.data_ptr() == x.__array_interface__["data"][0]
    assert t.shape == x.shape


def test_rows_viewed_from_a_mapping_are_read_only(regression):
    element = sluice.from_npy({"x": "x.npy"}, folder=regression).pipeline().take(1)[0]
    x = np.load(regression / "x.npy", mmap_mode="r")
    np.testing.assert_array_equal(element["x"], x[0])
    assert not element["x"].flags.writeable  # a view into the read-only file mapping
    with pytest.raises(ValueError):
        element["x"][0] = 1.0


def test_chain_saves_a_project_and_back(regression):
    ds = classic(regression, seed=3, batch=100)
    ds.save_project(regression / "chain.sluice")
    document = json.loads((regression / "chain.sluice").read_text())
    assert [n["op"] for n in document["pipeline"]["nodes"]] == ["from_npy", "global_shuffle", "batch", "prefetch"]
    assert document["pipeline"]["nodes"][2]["params"] == {"batch_size": 100}
    direct = [b["y"] for b in ds.pipeline()]
    loaded = [b["y"] for b in sluice.Project.load(regression / "chain.sluice").pipeline()]
    assert len(direct) == len(loaded) == 20
    for a, b in zip(direct, loaded):
        np.testing.assert_array_equal(a, b)


def test_stats_as_run_profile_json_reports_them(regression):
    pipeline = classic(regression).pipeline(threads=2)
    batches = sum(1 for _ in pipeline)
    stats = pipeline.stats()
    assert [s["id"] for s in stats["stages"]] == ["from_npy", "global_shuffle", "batch", "prefetch"]
    assert stats["elements"] == batches == 8
    assert stats["stages"][1]["elements"] == 2000
    assert stats["bottleneck_kind"]  # a verdict: a stage, or "no_stage" when none is busy enough
    assert stats["verdict_confidence"] == "low"  # on 8 elements


def test_errors_are_the_clis(tmp_path, regression):
    with pytest.raises(FileNotFoundError, match="missing.sluice"):
        sluice.Project.load(tmp_path / "missing.sluice")
    with pytest.raises(ValueError, match=r'node "batch" \(batch\): batch_size: must be at least 1, got 0'):
        sluice.from_npy({"x": "x.npy"}, folder=regression).batch(0).pipeline()
    with pytest.raises(ValueError, match="no_such.npy"):
        sluice.from_npy({"x": "no_such.npy"}, folder=regression).pipeline()
    with pytest.raises(AttributeError, match="no op 'shufle'"):
        sluice.from_npy({"x": "x.npy"}).shufle(10)


def test_ctrl_c_stops_iteration_cleanly(regression):
    """SIGINT while a pipeline is being read raises KeyboardInterrupt; the process ends at once."""
    assert_ctrl_c_stops(f"""
        import sys, sluice
        ds = sluice.from_npy({{"x": "x.npy"}}, folder={str(regression)!r}).repeat().batch(64).prefetch(2)
    """)


def test_profile_reports_what_the_cli_reports(regression, sluice_exe):
    """pipeline.profile(seconds) gives the figures of `sluice run --profile --json --seconds`: the
    same stages, keys and kinds of verdict."""
    classic(regression).save_project(regression / "p.sluice")
    stats = sluice.Project.load(regression / "p.sluice").pipeline(threads=2).profile(seconds=0.5)
    assert stats["elements"] > 8  # several passes
    cli = subprocess.run([sluice_exe, "run", str(regression / "p.sluice"), "--profile", "--json", "--seconds", "0.5",
                          "--threads", "2"], capture_output=True, text=True, check=True)
    events = [json.loads(line) for line in cli.stdout.splitlines() if line.startswith("{")]
    last = [e for e in events if e.get("event") == "stats"][-1]
    assert [s["id"] for s in stats["stages"]] == [s["id"] for s in last["stages"]]
    assert set(stats) <= set(last) | {"event"}
    for ours, theirs in zip(stats["stages"], last["stages"]):
        assert set(ours) == set(theirs), ours["id"]
    named = [s["id"] for s in stats["stages"]] + ["consumer", "pipeline"]  # "pipeline": CPU contention
    assert stats["bottleneck"] in named or (stats["bottleneck"] == "" and stats["bottleneck_kind"] == "no_stage")
    assert stats["consumer"] == last["consumer"] == "as fast as possible"
    assert set(stats) == set(last) - {"event"}  # the input-bound share included: both state their consumer


def test_profile_measures_the_input_bound_share_of_a_stated_step(regression):
    """With a simulated step longer than a batch takes, the pipeline keeps up: the verdict is the
    consumer, as `sluice run --profile --consumer-ms` says."""
    stats = classic(regression).pipeline(threads=2).profile(seconds=0.6, consumer_ms=20)
    assert stats["consumer"] == {"step_ms": 20.0}
    assert stats["input_bound"] == "not input-bound", stats["input_bound_share"]
    assert stats["bottleneck"] == "consumer" and stats["bottleneck_kind"] == "consumer"
    with pytest.raises(ValueError, match="consumer_ms"):
        classic(regression).pipeline().profile(seconds=0.1, consumer_ms=0)
