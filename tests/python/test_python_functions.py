"""Python functions inside pipelines: from_generator, map and filter over the user's own
functions, checked against what tf.data gives for the same functions (reference.npz, written by
TensorFlow with tests/data/python_functions/write_reference.py), in chains and project files;
errors that name the node and feature; the GIL in the profile; Ctrl-C."""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import sluice
from conftest import assert_ctrl_c_stops

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "python_functions")
sys.path.insert(0, DATA)
import reference_functions as ref  # noqa: E402

SIGNATURE = {"x": ("float32", [3]), "label": ("int64", []), "name": ("string", [])}


def reference_batches():
    with np.load(os.path.join(DATA, "reference.npz")) as archive:
        count = 1 + max(int(key.split("_")[0][1:]) for key in archive.files)
        return [{name: archive[f"b{i}_{name}"] for name in ("x", "x_sq", "label")} for i in range(count)]


def assert_batches_equal(batches, reference):
    assert len(batches) == len(reference)
    for got, want in zip(batches, reference):
        assert sorted(got) == sorted(want)
        for name in want:
            assert got[name].dtype == want[name].dtype, name
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)


def reference_chain(parallel=None):
    extra = {} if parallel is None else {"num_parallel_calls": parallel}
    return (sluice.from_generator(ref.counting_rows, SIGNATURE)
            .map(ref.scale_and_square, **extra)
            .filter(ref.label_not_three)
            .batch(4)
            .map(ref.centre_batch, **extra))


@pytest.mark.parametrize("parallel", [None, 2, sluice.AUTOTUNE])
def test_functions_give_what_tf_data_gives(parallel):
    """from_generator -> map -> filter -> batch -> map over the same Python functions: the batches
    tf.data gave, sequentially and with parallel calls, pass after pass."""
    pipeline = reference_chain(parallel).pipeline(threads=2)
    reference = reference_batches()
    for _ in range(2):
        assert_batches_equal(list(pipeline), reference)


def test_element_signature_is_traced_or_given():
    """Without output_signature the map's output is learned by calling it on zeros (a batch's first
    size stays unknown), in the order the function returns; with one, it is taken as given (the
    project file keeps a signature's features in name order)."""
    traced = sluice.from_generator(ref.counting_rows, SIGNATURE).map(ref.scale_and_square).batch(4).map(ref.centre_batch)
    assert traced.pipeline().element_spec == "{x: float32 (None, 3), x_sq: float32 (None, 3), label: int64 (None,)}"
    given = sluice.from_generator(ref.counting_rows, SIGNATURE).map(
        ref.scale_and_square, output_signature={"x": ("float32", [3]), "x_sq": ("float32", [3]), "label": ("int64", []),
                                                "name": ("string", [])})
    assert given.pipeline().element_spec == "{label: int64 (), name: string (), x: float32 (3,), x_sq: float32 (3,)}"


def write_module(folder, name, body):
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_project_files_name_functions_by_module(tmp_path):
    """A saved chain names its functions "module:function"; the project reopens next to its module,
    or with the module on the project's python_path."""
    shutil.copy(os.path.join(DATA, "reference_functions.py"), tmp_path / "reference_functions.py")
    reference_chain().save_project(tmp_path / "p.sluice")
    document = json.loads((tmp_path / "p.sluice").read_text())
    maps = [n for n in document["pipeline"]["nodes"] if n["op"] == "map"]
    assert [m["params"]["callable"] for m in maps] == ["reference_functions:scale_and_square", "reference_functions:centre_batch"]
    assert_batches_equal(list(sluice.Project.load(tmp_path / "p.sluice").pipeline()), reference_batches())

    # The module elsewhere: found through python_path (relative to the project's folder).
    (tmp_path / "lib").mkdir()
    shutil.move(tmp_path / "reference_functions.py", tmp_path / "lib" / "reference_functions.py")
    document["python_path"] = ["lib"]
    (tmp_path / "q.sluice").write_text(json.dumps(document))
    sys.modules.pop("reference_functions", None)  # as a fresh process would find it
    try:
        assert_batches_equal(list(sluice.Project.load(tmp_path / "q.sluice").pipeline()), reference_batches())
    finally:
        sys.modules["reference_functions"] = ref


def test_a_changed_module_is_reloaded_at_the_next_run(tmp_path):
    module = write_module(tmp_path, "editable_fn", """
        def shift(e):
            return {"value": e["value"] + 1}
    """)
    project = {"format": "sluice-project", "version": 1, "name": "edit", "pipeline": {
        "nodes": [{"id": "r", "op": "range", "params": {"stop": 3}},
                  {"id": "m", "op": "map", "params": {"function": "python", "callable": "editable_fn:shift"}}],
        "edges": [["r", "m"]]}}
    (tmp_path / "p.sluice").write_text(json.dumps(project))
    values = lambda: [int(e["value"]) for e in sluice.Project.load(tmp_path / "p.sluice").pipeline()]  # noqa: E731
    assert values() == [1, 2, 3]
    module.write_text(module.read_text().replace("+ 1", "+ 10"))
    later = time.time() + 5
    os.utime(module, (later, later))  # a new modification time even within the file system's granularity
    assert values() == [10, 11, 12]


def test_lambdas_run_but_cannot_be_saved(tmp_path):
    ds = sluice.range(stop=4).map(lambda e: {"value": e["value"] * 3}).filter(lambda e: e["value"] > 3)
    assert [int(e["value"]) for e in ds] == [6, 9]
    with pytest.raises(ValueError, match="cannot be saved in a project.*define it at the top level of a module"):
        ds.save_project(tmp_path / "p.sluice")
    assert not (tmp_path / "p.sluice").exists()


def failing(e):
    raise KeyError("no such column")


@pytest.mark.parametrize("function, signature, message", [
    (failing, {"value": ("int64", [])},
     r'(?s)node "map" \(map\): the Python function raised:\nTraceback .*in failing\n.*KeyError: .no such column.'),
    (lambda e: {"value": e["value"].astype(np.float32)}, {"value": ("int64", [])},
     r'node "map" \(map\): feature "value" is float32 \(\); the output signature says int64 \(\)'),
    (lambda e: {"value": np.stack([e["value"]] * 2)}, {"value": ("int64", [])},
     r'node "map" \(map\): feature "value" is int64 \(2,\); the output signature says int64 \(\)'),
    (lambda e: {"other": e["value"]}, {"value": ("int64", [])},
     r'node "map" \(map\): returned feature "other", which the output signature lacks \(it has: value\)'),
    (lambda e: {}, {"value": ("int64", [])}, r'node "map" \(map\): returned no feature "value" \(it returned: nothing\)'),
    (lambda e: [e["value"]], {"value": ("int64", [])},
     r'node "map" \(map\): the Python function returned a list; it must give a dict of arrays'),
])
def test_wrong_results_name_node_and_feature(function, signature, message):
    with pytest.raises(ValueError, match=message) as raised:
        list(sluice.range(stop=3).map(function, output_signature=signature))
    assert "Traceback" in str(raised.value) or function is not failing


@pytest.mark.parametrize("callable_name, message", [
    ("no_such_module_here:f", r'callable: "no_such_module_here:f": No module named .no_such_module_here.'),
    ("json:no_such_function", r"callable: \"json:no_such_function\": module 'json' \(.*\) has no 'no_such_function'"),
    ("json", r'callable: "json" is not of the form "module:function"'),
])
def test_functions_that_do_not_resolve_are_build_errors(callable_name, message):
    ds = sluice.range(stop=3)._then("map", (), {"function": "python", "callable": callable_name})
    with pytest.raises(ValueError, match=r'node "map" \(map\): ' + message):
        ds.pipeline()


def test_generators_are_checked_too():
    def wrong():
        yield {"x": np.zeros(2, np.float32)}
    with pytest.raises(ValueError, match=r'node "from_generator" \(from_generator\): feature "x" is float32 \(2,\); the output '
                                         r'signature says float32 \(3,\)'):
        list(sluice.from_generator(wrong, {"x": ("float32", [3])}))

    def raises():
        yield {"x": np.zeros(3, np.float32)}
        raise RuntimeError("the source file went away")
    pipeline = sluice.from_generator(raises, {"x": ("float32", [3])}).pipeline()
    with pytest.raises(ValueError, match=r"(?s)from_generator.*the Python function raised:.*RuntimeError: the source file went away"):
        list(pipeline)


def burn(e):
    """Pure Python work: it holds the GIL all the time it runs."""
    total = 0
    for i in range(3000):
        total += i
    return {"value": e["value"] + total - total}


def test_the_profile_counts_python_and_the_gil():
    """Two parallel calls of a function that holds the GIL: the stage reports the time inside
    Python and the time waiting for the GIL, and the bottleneck's reason is of the kind its
    figures say (waiting for the GIL -> vectorise, never "more num_parallel_calls")."""
    pipeline = sluice.range(stop=4000).map(burn, num_parallel_calls=2).batch(100).pipeline(threads=2)
    assert sum(1 for _ in pipeline) == 40
    stats = pipeline.stats()
    stage = next(s for s in stats["stages"] if s["id"] == "map")
    assert stage["python_s"] > 0 and stage["gil_wait_s"] > 0
    assert stats["bottleneck"] == "map"
    reason = stats["bottleneck_reason"]
    if stage["gil_wait_s"] >= 0.25 * (stage["python_s"] + stage["gil_wait_s"]):
        assert "waiting for Python's GIL" in reason and "more num_parallel_calls will not help" in reason
    else:
        assert "inside the Python function" in reason
    assert "vectorise" in reason and "more num_parallel_calls would help" not in reason
    assert all("python_s" not in s for s in stats["stages"] if s["id"] != "map")


def test_ctrl_c_stops_a_pipeline_of_python_functions():
    assert_ctrl_c_stops("""
        import sys, time, sluice, numpy as np
        def forever():
            while True:
                time.sleep(0.001)
                yield {"x": np.zeros(4, np.float32)}
        ds = sluice.from_generator(forever, {"x": ("float32", [4])}).map(lambda e: {"x": e["x"] + 1}, num_parallel_calls=2) \\
            .batch(8).prefetch(2)
    """)


def test_the_cli_runs_python_functions_in_its_embedded_interpreter(tmp_path, sluice_exe):
    """`sluice preview` and `sluice run --profile` run a project's Python functions in the interpreter
    the executable embeds: the batches tf.data gave, and the time in Python in the profile."""
    shutil.copy(os.path.join(DATA, "reference_functions.py"), tmp_path / "reference_functions.py")
    reference_chain(parallel=2).save_project(tmp_path / "p.sluice")
    out = tmp_path / "preview"
    preview = subprocess.run([sluice_exe, "preview", str(tmp_path / "p.sluice"), "--batches", "10", "--out", str(out)],
                             capture_output=True, text=True)
    assert preview.returncode == 0, preview.stderr
    written = []
    for i in range(len(reference_batches())):
        with np.load(out / f"batch_{i:05d}.npz") as archive:
            written.append({name: archive[name] for name in archive.files})
    assert not (out / f"batch_{len(written):05d}.npz").exists()
    assert_batches_equal(written, reference_batches())

    run = subprocess.run([sluice_exe, "run", str(tmp_path / "p.sluice"), "--profile", "--json", "--epochs", "2", "--threads", "2"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    stats = [e for e in events if e.get("event") == "stats"][-1]
    maps = [s for s in stats["stages"] if s["op"] == "map"]
    assert len(maps) == 2 and all(s["python_s"] > 0 for s in maps)


@pytest.mark.parametrize("function, code, message", [
    ("missing_module_here:f", 2, r'node "map" \(map\): callable: "missing_module_here:f": No module named .missing_module_here.'),
    ("cli_functions:raises", 1, r'(?s)node "map" \(map\): the Python function raised:\nTraceback.*in raises\n.*ZeroDivisionError'),
])
def test_the_cli_names_the_node_of_a_failing_python_function(tmp_path, sluice_exe, function, code, message):
    """A module that does not import: bad input (exit 2) before running. An exception in the
    function: a failed run (exit 1) with its traceback. Both name the node."""
    write_module(tmp_path, "cli_functions", """
        def raises(e):
            if int(e["value"]) == 2:
                return 1 // 0
            return e
    """)
    project = {"format": "sluice-project", "version": 1, "name": "fails", "pipeline": {
        "nodes": [{"id": "r", "op": "range", "params": {"stop": 5}},
                  {"id": "map", "op": "map", "params": {"function": "python", "callable": function,
                                                        "output_signature": {"value": {"dtype": "int64", "shape": []}}}}],
        "edges": [["r", "map"]]}}
    (tmp_path / "p.sluice").write_text(json.dumps(project))
    run = subprocess.run([sluice_exe, "run", str(tmp_path / "p.sluice"), "--profile", "--seconds", "2"], capture_output=True, text=True)
    assert run.returncode == code, run.stderr
    assert re.search(message, run.stderr), run.stderr


def test_sluice_run_trains_through_a_python_map(regression):
    """Training from Python with a Python function in the project's pipeline: the run's tasks call
    it while the trainer holds no GIL; the same losses as the built-in scale that computes it, and a
    function failing mid-run stops the run with its traceback."""
    write_module(regression, "prep", """
        import numpy as np
        def double(e):
            return {"x": e["x"] * np.float32(2), "y": e["y"]}
        def fails_later(e):
            if e["x"].shape[0] < 50:
                raise ValueError("a short batch")
            return e
    """)

    def fit(params, name):
        project = sluice.from_npy({"x": "x.npy", "y": "y.npy"}, folder=regression).batch(50)._then("map", (), params).to_dict(name)
        project["model"] = {"inputs": [{"name": "x", "feature": "x"}], "layers": [{"class_name": "Dense", "name": "d", "units": 1}],
                            "outputs": [{"name": "y", "layer": "d", "target": "y", "loss": "mse"}]}
        project["training"] = {"epochs": 2, "seed": 3, "optimizer": {"type": "adam", "learning_rate": 0.01}}
        (regression / f"{name}.sluice").write_text(json.dumps(project))
        losses = []
        outcome = sluice.run(regression / f"{name}.sluice", threads=2,
                             on_event=lambda e: e["event"] == "epoch_end" and losses.append(e["loss"]))
        return outcome, losses

    python_outcome, python_losses = fit({"function": "python", "callable": "prep:double"}, "python_map")
    builtin_outcome, builtin_losses = fit({"function": "scale", "features": ["x"], "scale": 2.0}, "builtin_map")
    assert python_outcome == builtin_outcome == {"status": "ok", "steps": 80, "epochs": 2}
    np.testing.assert_allclose(python_losses, builtin_losses, rtol=1e-6)

    project = json.loads((regression / "python_map.sluice").read_text())
    project["pipeline"]["nodes"][-1]["params"] = {"function": "python", "callable": "prep:fails_later",
                                                  "output_signature": {"x": {"dtype": "float32", "shape": [None, 8]},
                                                                       "y": {"dtype": "float32", "shape": [None, 1]}}}
    project["pipeline"]["nodes"][1]["params"]["batch_size"] = 30  # 2,000 rows: the last batch has 20
    (regression / "fails.sluice").write_text(json.dumps(project))
    with pytest.raises(RuntimeError, match=r'(?s)node "map" \(map\): the Python function raised:.*ValueError: a short batch'):
        sluice.run(regression / "fails.sluice", threads=2)


def test_a_python_that_cannot_start_is_a_message_not_a_crash(tmp_path, sluice_exe):
    """The executable's embedded Python without its standard library (here: PYTHONHOME pointing
    nowhere; on a machine without that Python, the relocatable package): the project is refused
    (exit 2) with the reason, where Python itself would end the process."""
    write_module(tmp_path, "fine", """
        def f(e):
            return e
    """)
    project = {"format": "sluice-project", "version": 1, "name": "nopython", "pipeline": {
        "nodes": [{"id": "r", "op": "range", "params": {"stop": 5}},
                  {"id": "m", "op": "map", "params": {"function": "python", "callable": "fine:f"}}],
        "edges": [["r", "m"]]}}
    (tmp_path / "p.sluice").write_text(json.dumps(project))
    env = dict(os.environ, PYTHONHOME=str(tmp_path / "no-python-here"))
    run = subprocess.run([sluice_exe, "run", str(tmp_path / "p.sluice")], capture_output=True, text=True, env=env)
    assert run.returncode == 2, run.stderr
    assert re.search(r'node "m" \(map\): callable: "fine:f": the Python embedded in sluice \(Python 3\.\d+.*\) could not start', run.stderr), run.stderr
    assert "Fatal Python error" not in run.stderr
