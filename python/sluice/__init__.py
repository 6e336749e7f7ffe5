"""Sluice from Python: projects and tf.data-style pipelines whose batches are numpy arrays
that share the pipeline's own buffers (no copy).

    import sluice
    project = sluice.Project.load("projects/classic-pipeline.sluice")
    for batch in project.pipeline(seed=1):          # one pass; iterate again for the next
        x, y = batch["x"], batch["y"]                # numpy.ndarray views of Sluice's buffers

    ds = sluice.from_npy({"x": "x.npy", "y": "y.npy"}).global_shuffle(seed=1).batch(256).prefetch(sluice.AUTOTUNE)
    ds.save_project("p.sluice")                      # a project the workbench opens

A fresh batch buffer is writable, so numpy's ``__dlpack__`` hands it to ``torch.from_dlpack``
without a copy; rows viewed straight from a memory-mapped file are read-only.
"""
import json
import os

import numpy

from . import _sluice

if int(numpy.__version__.split(".")[0]) >= 2 and tuple(_sluice.pybind11_version) < (2, 12):
    raise ImportError(
        f"this build of sluice uses pybind11 {'.'.join(map(str, _sluice.pybind11_version))}, which cannot read numpy "
        f"{numpy.__version__}'s arrays (numpy 2 needs pybind11 2.12 or later): install the package with "
        "`pip install ./python` from the source tree (it builds with a current pybind11), or use numpy 1.x")

__all__ = ["AUTOTUNE", "Project", "Pipeline", "Dataset", "ops", "run"]

AUTOTUNE = "AUTOTUNE"
INFINITE = -1  # Pipeline.cardinality() of a pipeline that repeats forever (tf.data.INFINITE_CARDINALITY)
UNKNOWN = -2   # ... of one whose length is not known ahead (tf.data.UNKNOWN_CARDINALITY)
_OPS = {op["name"]: op for op in json.loads(_sluice.ops_json())}

# A pipeline runs on a pool of worker threads that lives as long as the process. fork() copies
# only the forking thread, so a process forked after a pipeline ran (DataLoader workers start
# that way by default) would wait forever on threads it does not have: it is refused instead.
_pipelines_started = False
_forked_after_start = False


def _after_fork_in_child():
    global _forked_after_start
    _forked_after_start = _forked_after_start or _pipelines_started


os.register_at_fork(after_in_child=_after_fork_in_child)


from ._functions import _callable_name, _callables, _unsaveable


def _signature(output_signature):
    """{"x": ("float32", [None, 3])} or {"x": {"dtype": ..., "shape": ...}} or numpy dtypes -> the project's form."""
    out = {}
    for feature, spec in output_signature.items():
        if isinstance(spec, dict):
            dtype, shape = spec["dtype"], spec.get("shape", [])
        elif isinstance(spec, (tuple, list)) and len(spec) == 2:
            dtype, shape = spec
        else:
            raise TypeError(f"output_signature[{feature!r}]: give (dtype, shape) or {{'dtype': ..., 'shape': ...}}")
        dtype = getattr(dtype, "name", None) or getattr(getattr(dtype, "dtype", None), "name", None) or str(dtype)
        out[feature] = {"dtype": dtype, "shape": [None if d is None or d == -1 else int(d) for d in shape]}
    return out


def ops():
    """The pipeline ops (tf.data's names), as dicts: name, group, summary, params."""
    return [dict(op) for op in _OPS.values()]


class Project:
    """A Sluice project file: its pipeline, and its model and training settings when it has them."""

    def __init__(self, core):
        self._core = core

    @classmethod
    def load(cls, path):
        """Reads and checks a project; FileNotFoundError or ValueError say what and why, as the CLI."""
        return cls(_sluice.Project.load(os.fspath(path)))

    @classmethod
    def from_dict(cls, document, folder="."):
        """A project from its document; relative paths resolve against `folder`."""
        return cls(_sluice.Project.from_json(json.dumps(document), os.path.abspath(os.fspath(folder))))

    def to_dict(self):
        return json.loads(self._core.to_json())

    def save(self, path):
        """Writes the project atomically (the workbench opens it)."""
        self._core.save(os.fspath(path))

    @property
    def path(self):
        return self._core.path

    @property
    def folder(self):
        return self._core.folder

    def pipeline(self, node=None, seed=None, threads=None):
        """The pipeline up to `node` (default: the project's output): an iterable of batches,
        each a dict of feature name -> numpy.ndarray. `threads`: the CPU budget (default: all cores)."""
        return Pipeline(self, node=node, seed=seed, threads=threads)


class Pipeline:
    """A running pipeline. Iterating it makes one pass (an epoch); each new iteration starts the
    next pass, with the next shuffle order. Ctrl-C while it waits raises KeyboardInterrupt and
    stops it (build a new one to go on)."""

    def __init__(self, project, node=None, seed=None, threads=None):
        global _pipelines_started
        if _forked_after_start:
            raise RuntimeError(
                "this process was forked from one that had already run a Sluice pipeline, whose worker threads a fork "
                "does not copy: start DataLoader workers with multiprocessing_context='spawn' (sluice.torch.DataLoader "
                "does), or create them before the parent runs a pipeline")
        self._core = _sluice.Pipeline(project._core, node, seed, int(threads or 0))
        _pipelines_started = True
        self._passes = 0

    @property
    def features(self):
        return self._core.feature_names()

    @property
    def element_spec(self):
        return self._core.element_spec()

    def cardinality(self):
        """Elements (batches, after batch) per pass, as tf.data's cardinality(): sluice.INFINITE for a
        pipeline that repeats forever, sluice.UNKNOWN where it cannot be known ahead (a filter)."""
        return self._core.cardinality()

    def feature_specs(self):
        """[(name, dtype, shape)] per feature; None in a shape where a size is not known ahead."""
        return [(name, dtype, tuple(None if d < 0 else d for d in shape)) for name, dtype, shape in self._core.feature_specs()]

    def __iter__(self):
        if self._passes:
            self._core.restart()
        self._passes += 1
        while True:
            batch = self._core.next()
            if batch is None:
                return
            yield batch

    def take(self, n):
        """The next `n` elements of the current pass (fewer at its end)."""
        out = []
        while len(out) < n:
            batch = self._core.next()
            if batch is None:
                break
            out.append(batch)
        return out

    def stats(self):
        """Per-stage figures, the bottleneck and the input-bound share, as `sluice run --profile
        --json` reports them."""
        return json.loads(self._core.snapshot_json())

    def profile(self, seconds=3.0, consumer_ms=None):
        """Reads batches pass after pass for `seconds` and returns stats(): what `sluice run
        --profile --seconds N [--consumer-ms MS]` reports for a pipeline. The input-bound share is
        measured against a consumer that takes each batch as fast as it comes, or with
        `consumer_ms`, a simulated training step of that many milliseconds (a sleep, as a GPU step
        leaves the CPU free)."""
        import time
        if consumer_ms is not None and not consumer_ms > 0:
            raise ValueError(f"consumer_ms: {consumer_ms!r} is not a positive number of milliseconds")
        self.attach_consumer()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            count = 0
            for _ in self:
                count += 1
                if consumer_ms is not None:
                    time.sleep(consumer_ms / 1000)
                if time.monotonic() >= end:
                    break
            if count == 0:
                break  # an empty pipeline: nothing more to read
        stats = self.stats()
        stats["consumer"] = "as fast as possible" if consumer_ms is None else {"step_ms": float(consumer_ms)}
        return stats

    def attach_consumer(self, attached=True):
        """Say that a training loop works between batches, so stats() reports the input-bound
        share of its time."""
        self._core.set_consumer_attached(attached)


def run(project, overrides=None, on_event=None, seed=None, threads=None, epochs=None):
    """Trains a project's model headless, as `sluice run` does: `overrides` is a dict of its
    --set keys ({"training.optimizer.learning_rate": 0.01, "nodes.batch.batch_size": 256}),
    `on_event` receives each event of `sluice run --json` as a dict. Returns the outcome
    ({"status": "ok", "steps", "epochs"}); a failed run raises RuntimeError with its message, an
    exception raised by on_event (or Ctrl-C) stops the run and is raised here."""
    if not isinstance(project, Project):
        project = Project.load(project)
    assignments = [f"{key}={json.dumps(value) if not isinstance(value, str) else value}"
                   for key, value in (overrides or {}).items()]
    callback = None if on_event is None else (lambda text: on_event(json.loads(text)))
    return _sluice.train(project._core, assignments, seed, threads, epochs, callback)


class Dataset:
    """A pipeline built in Python with the tf.data chain (a linear chain of Sluice's ops):

        sluice.from_npy({"x": "x.npy"}).global_shuffle(seed=1).batch(256).prefetch(sluice.AUTOTUNE)

    Positional arguments fill an op's parameters in their documented order (`sluice ops`)."""

    def __init__(self, nodes, folder="."):
        self._nodes = nodes
        self._folder = folder

    def _then(self, op, args, kwargs):
        info = _OPS[op]
        names = [p["name"] for p in info["params"]]
        if len(args) > len(names):
            raise TypeError(f"{op}() takes at most {len(names)} positional arguments ({', '.join(names)})")
        params = dict(zip(names, args))
        for key, value in kwargs.items():
            if key in params:
                raise TypeError(f"{op}() got {key!r} twice")
            params[key] = value
        used = {n["id"] for n in self._nodes}
        node_id, i = op, 2
        while node_id in used:
            node_id, i = f"{op}_{i}", i + 1
        return Dataset(self._nodes + [{"id": node_id, "op": op, "params": params}], self._folder)

    def map(self, function, *args, **kwargs):
        """tf.data's map: a built-in function by name (`sluice ops`), or a Python function called
        with a dict of numpy arrays and returning one (as tf.py_function; batch first to call it
        once per batch). `output_signature` fixes what it returns; without it the function is
        called once on zeros shaped as its input to learn that."""
        if callable(function):
            params = {"function": "python", "callable": _callable_name(function)}
            if "output_signature" in kwargs:
                kwargs["output_signature"] = _signature(kwargs["output_signature"])
            return self._then("map", (), {**params, **dict(zip(["num_parallel_calls", "deterministic"], args)), **kwargs})
        return self._then("map", (function,) + args, kwargs)

    def filter(self, predicate=None, *args, **kwargs):
        """tf.data's filter: a Python predicate over a dict of numpy arrays, or the built-in
        comparison (feature, op, value)."""
        if callable(predicate):
            return self._then("filter", (), {"predicate": _callable_name(predicate)})
        return self._then("filter", ((predicate,) if predicate is not None else ()) + args, kwargs)

    def __getattr__(self, name):
        info = _OPS.get(name)
        if info is None or info["group"] == "sources":
            raise AttributeError(f"'Dataset' has no op {name!r} (ops: {', '.join(sorted(_OPS))})")
        return lambda *args, **kwargs: self._then(name, args, kwargs)

    def to_dict(self, name="python-pipeline"):
        edges = [[a["id"], b["id"]] for a, b in zip(self._nodes, self._nodes[1:])]
        return {"format": "sluice-project", "version": 1, "name": name,
                "pipeline": {"nodes": self._nodes, "edges": edges}}

    def project(self, name="python-pipeline"):
        return Project.from_dict(self.to_dict(name), self._folder)

    def save_project(self, path, name=None):
        """Writes the chain as a project file (relative data paths resolve against its folder).
        Python functions are saved by name: they must be importable from a module."""
        for node in self._nodes:
            for key in ("callable", "predicate", "generator"):
                value = node["params"].get(key)
                if isinstance(value, str) and _unsaveable(value):
                    raise ValueError(f"node {node['id']!r}: the function {_callables[value].__qualname__!r} cannot be saved in a "
                                     "project (a lambda, a nested function or one defined in __main__): define it at the top "
                                     "level of a module next to the project")
        name = name or os.path.splitext(os.path.basename(os.fspath(path)))[0]
        self.project(name).save(path)

    def pipeline(self, seed=None, threads=None):
        return self.project().pipeline(seed=seed, threads=threads)

    def __iter__(self):
        return iter(self.pipeline())


def _source(op):
    def make(*args, folder=".", **kwargs):
        return Dataset([], os.path.abspath(os.fspath(folder)))._then(op, args, kwargs)
    make.__name__ = op
    make.__doc__ = _OPS[op]["summary"]
    return make


for _name, _info in _OPS.items():
    if _info["group"] == "sources":
        globals()[_name] = _source(_name)
        __all__.append(_name)


def from_generator(generator, output_signature, folder="."):
    """tf.data.Dataset.from_generator: `generator` is called with no arguments at the start of
    each pass and yields dicts of arrays, checked against `output_signature` ({"x": ("float32",
    [3]), ...}; None for a size not known ahead)."""
    return Dataset([], os.path.abspath(os.fspath(folder)))._then(
        "from_generator", (), {"generator": _callable_name(generator), "output_signature": _signature(output_signature)})
