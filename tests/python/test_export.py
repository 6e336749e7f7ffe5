"""sluice export: for each layer family a small model is trained with `sluice run`, exported, and
predicted with `sluice predict`.
- --format safetensors: the generated torch.nn.Module, loaded from the exported file, must predict
  the same (1e-5 relative to the outputs' scale); where the safetensors package is importable,
  its reader must give back exactly the weights of weights.npz.
- --format keras: Keras 3 itself (from .deps/keras, scripts/fetch-python-test-deps.sh, in a
  subprocess with its JAX backend) loads the .keras archive with keras.saving.load_model and
  must predict the same.
- --format onnx: the graph passes onnx's full checker (Debian's python3-onnx) and onnxruntime
  (from .deps/onnx, in a subprocess) must predict the same."""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from references import import_reference, reference_missing  # noqa: E402

torch = import_reference("torch", "Debian's python3-torch, installed by scripts/setup-debian.sh")

ROWS = 96


def write_features(folder, features):
    for name, values in features.items():
        np.save(folder / f"{name}.npy", values.astype(np.float32))


def project(folder, features, model, epochs=2):
    document = {
        "format": "sluice-project", "version": 1, "name": "export-" + folder.name,
        "pipeline": {
            # No shuffle: sluice predict then gives the rows in file order.
            "nodes": [{"id": "arrays", "op": "from_npy", "params": {"features": {n: f"{n}.npy" for n in features}}},
                      {"id": "batch", "op": "batch", "params": {"batch_size": 32}}],
            "edges": [["arrays", "batch"]]},
        "model": model,
        "training": {"epochs": epochs, "seed": 7, "threads": 2, "optimizer": {"type": "adam", "learning_rate": 0.01},
                     "checkpoint": {"every_epoch": False}},
    }
    path = folder / "p.sluice"
    path.write_text(json.dumps(document))
    return path


def run(sluice_exe, *args):
    done = subprocess.run([sluice_exe, *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def import_model_py(path):
    spec = importlib.util.spec_from_file_location(f"exported_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KERAS_PREDICT = textwrap.dedent("""
    import sys
    import keras
    import numpy as np
    archive, folder, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    model = keras.saving.load_model(archive)
    inputs = [np.load(f"{folder}/in{i}.npy") for i in range(count)]
    outputs = model.predict(inputs if count > 1 else inputs[0], verbose=0)
    for i, values in enumerate(outputs if isinstance(outputs, list) else [outputs]):
        np.save(f"{folder}/out{i}.npy", np.asarray(values, dtype=np.float32))
""")


def reference_env(path_variable, module, **extra):
    """The environment of a subprocess that imports `module` from the folder $path_variable names
    (scripts/fetch-python-test-deps.sh fills it); reference_missing where it cannot."""
    path = os.environ.get(path_variable, "")
    where = f"${path_variable}, filled by scripts/fetch-python-test-deps.sh"
    if not path or not os.path.isdir(path):
        reference_missing(module, where + f": no folder {path!r}")
    env = dict(os.environ, PYTHONPATH=path, **extra)
    env.pop("LD_PRELOAD", None)  # the sanitizer runtime is for the sluice package, not for the reference
    probe = subprocess.run([sys.executable, "-c", f"import {module}"], env=env, capture_output=True, text=True)
    if probe.returncode != 0:
        reference_missing(module, where + ": " + probe.stderr.strip().splitlines()[-1])
    return env


def keras_env():
    return reference_env("SLUICE_KERAS_PATH", "keras", KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")


def reference_predictions(script, env, model_file, arrays, folder):
    """What `script` (KERAS_PREDICT or ONNX_PREDICT) predicts from `model_file` for `arrays`, as
    .npy paths in output order."""
    folder.mkdir()
    for i, values in enumerate(arrays):
        np.save(folder / f"in{i}.npy", values)
    done = subprocess.run([sys.executable, "-c", script, str(model_file), str(folder), str(len(arrays))], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return sorted(folder.glob("out*.npy"))


def keras_predictions(archive, arrays, folder):
    return reference_predictions(KERAS_PREDICT, keras_env(), archive, arrays, folder)


ONNX_PREDICT = textwrap.dedent("""
    import sys
    import numpy as np
    import onnxruntime
    graph, folder, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    session = onnxruntime.InferenceSession(graph, providers=["CPUExecutionProvider"])
    feeds = {i.name: np.load(f"{folder}/in{k}.npy") for k, i in enumerate(session.get_inputs())}
    for k, values in enumerate(session.run(None, feeds)):
        np.save(f"{folder}/out{k}.npy", values)
""")


def onnx_predictions(graph, arrays, folder):
    """onnxruntime's outputs for `arrays` (in the graph's input order)."""
    return reference_predictions(ONNX_PREDICT, reference_env("SLUICE_ONNX_PATH", "onnxruntime"), graph, arrays, folder)


def check_onnx(graph):
    """ONNX's own checker, from .deps/onnx in a subprocess (it brings its own numpy)."""
    env = reference_env("SLUICE_ONNX_PATH", "onnx")
    script = "import sys, onnx; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)"
    done = subprocess.run([sys.executable, "-c", script, str(graph)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


def close(actual, expected, what):
    assert actual.shape == expected.shape, what
    scale = max(1.0, float(np.abs(expected).max()))
    assert float(np.abs(actual - expected).max()) <= 1e-5 * scale, what


def export_and_compare(tmp_path, sluice_exe, features, model):
    write_features(tmp_path, features)
    p = project(tmp_path, features, model)
    run(sluice_exe, "run", p, "--out", tmp_path / "run")
    out = tmp_path / "export" / "weights.safetensors"
    run(sluice_exe, "export", tmp_path / "run", "--project", p, "--format", "safetensors", "--out", out)
    run(sluice_exe, "predict", p, "--weights", tmp_path / "run", "--out", tmp_path / "pred")

    exported = import_model_py(tmp_path / "export" / "model.py")
    module = exported.load()  # the file beside model.py
    assert not module.training
    args = [torch.from_numpy(features[name].astype(np.float32)) for name in (i["feature"] for i in model["inputs"])]
    with torch.no_grad():
        got = module(*args)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(model["outputs"]) == len(exported.OUTPUTS)
    for output, tensor in zip(model["outputs"], got):
        close(tensor.numpy(), np.load(tmp_path / "pred" / f"{output['name']}.npy"), output["name"])

    # The same model as a .keras archive, loaded and run by Keras itself.
    archive = tmp_path / "export" / "model.keras"
    run(sluice_exe, "export", tmp_path / "run", "--project", p, "--format", "keras", "--out", archive)
    inputs = [features[i["feature"]].astype(np.float32) for i in model["inputs"]]
    predicted = keras_predictions(archive, inputs, tmp_path / "keras")
    if predicted is not None:
        assert len(predicted) == len(model["outputs"])
        for output, path in zip(model["outputs"], predicted):
            close(np.load(path), np.load(tmp_path / "pred" / f"{output['name']}.npy"), "keras " + output["name"])

    # And as an ONNX graph, run by onnxruntime.
    graph = tmp_path / "export" / "model.onnx"
    run(sluice_exe, "export", tmp_path / "run", "--project", p, "--format", "onnx", "--out", graph)
    check_onnx(graph)
    predicted = onnx_predictions(graph, inputs, tmp_path / "onnx")
    if predicted is not None:
        assert len(predicted) == len(model["outputs"])
        for output, path in zip(model["outputs"], predicted):
            close(np.load(path), np.load(tmp_path / "pred" / f"{output['name']}.npy"), "onnx " + output["name"])

    # The file itself: every weight of weights.npz, by name, in Sluice's layout.
    npz = np.load(tmp_path / "run" / "weights.npz")
    read = exported.read_safetensors(out)
    assert sorted(read) == sorted(npz.files)
    for name in npz.files:
        np.testing.assert_array_equal(read[name].numpy(), npz[name])
    load_file = import_reference("safetensors.numpy", "scripts/fetch-python-test-deps.sh fetches it into .deps/python").load_file
    official = load_file(str(out))
    assert sorted(official) == sorted(npz.files)
    for name in npz.files:
        np.testing.assert_array_equal(official[name], npz[name])


def test_dense_branches_normalisation_and_two_outputs(tmp_path, sluice_exe):
    rng = np.random.default_rng(1)
    features = {"a": rng.normal(size=(ROWS, 6)), "b": rng.normal(size=(ROWS, 4)),
                "y1": rng.normal(size=(ROWS, 5)), "y2": rng.uniform(size=(ROWS, 3))}
    model = {
        "inputs": [{"name": "a", "feature": "a"}, {"name": "b", "feature": "b"}],
        "layers": [
            {"class_name": "Dense", "name": "a.enc", "inputs": ["a"], "units": 8, "activation": "relu"},
            {"class_name": "LayerNormalization", "name": "a_norm"},
            {"class_name": "Dense", "name": "b_enc", "inputs": ["b"], "units": 8, "activation": "gelu", "use_bias": False},
            {"class_name": "Concatenate", "name": "joined", "inputs": ["a_norm", "b_enc"]},
            {"class_name": "BatchNormalization", "name": "bn"},
            {"class_name": "Dropout", "name": "drop", "rate": 0.25},
            {"class_name": "Dense", "name": "y1_head", "inputs": ["drop"], "units": 5, "activation": "tanh"},
            {"class_name": "Dense", "name": "keys", "inputs": ["joined"], "units": 3},
            {"class_name": "Activation", "name": "y2_soft", "activation": "softmax"},
        ],
        "outputs": [{"name": "y1", "layer": "y1_head", "target": "y1", "loss": "mse"},
                    {"name": "y2", "layer": "y2_soft", "target": "y2", "loss": "mse"}],
    }
    export_and_compare(tmp_path, sluice_exe, features, model)


def test_recurrent_layers(tmp_path, sluice_exe):
    rng = np.random.default_rng(2)
    features = {"s": rng.normal(size=(ROWS, 7, 3)), "y": rng.normal(size=(ROWS, 3, 2))}
    model = {
        "inputs": [{"name": "s", "feature": "s"}],
        "layers": [
            {"class_name": "GRU", "name": "gru1", "units": 5, "return_sequences": True},
            {"class_name": "LSTM", "name": "lstm", "units": 4},
            {"class_name": "RepeatVector", "name": "repeat", "n": 3},
            {"class_name": "GRU", "name": "gru2", "units": 6, "return_sequences": True, "use_bias": False},
            {"class_name": "TimeDistributed", "name": "td", "layer": {"class_name": "Dense", "units": 2}},
            {"class_name": "Flatten", "name": "flat"},
            {"class_name": "Reshape", "name": "back", "target_shape": [3, 2]},
        ],
        "outputs": [{"name": "y", "layer": "back", "target": "y", "loss": "mse"}],
    }
    export_and_compare(tmp_path, sluice_exe, features, model)


def test_convolutions_and_pooling_with_same_padding(tmp_path, sluice_exe):
    rng = np.random.default_rng(3)
    features = {"img": rng.normal(size=(ROWS, 9, 9, 2)), "seq": rng.normal(size=(ROWS, 11, 3)),
                "y": rng.normal(size=(ROWS, 1))}
    model = {
        "inputs": [{"name": "img", "feature": "img"}, {"name": "seq", "feature": "seq"}],
        "layers": [
            # TensorFlow's "same" pads after more than before where the sum is odd (AveragePooling2D here: 0 and 1).
            {"class_name": "Conv2D", "name": "c1", "inputs": ["img"], "filters": 4, "kernel_size": 3, "strides": 2,
             "padding": "same", "activation": "relu"},
            {"class_name": "MaxPooling2D", "name": "mp", "pool_size": 2, "strides": 1, "padding": "same"},
            {"class_name": "AveragePooling2D", "name": "ap", "pool_size": 3, "strides": 2, "padding": "same"},
            {"class_name": "Conv2D", "name": "c2", "filters": 3, "kernel_size": [2, 1], "padding": "valid"},
            {"class_name": "GlobalAveragePooling2D", "name": "gap"},
            {"class_name": "Conv1D", "name": "c3", "inputs": ["seq"], "filters": 4, "kernel_size": 3, "strides": 2,
             "padding": "same", "activation": "sigmoid"},
            {"class_name": "Conv1D", "name": "c4", "filters": 2, "kernel_size": 2, "dilation_rate": 2},
            {"class_name": "MaxPooling1D", "name": "mp1", "pool_size": 2, "padding": "same"},
            {"class_name": "AveragePooling1D", "name": "ap1", "pool_size": 2, "strides": 1, "padding": "same"},
            {"class_name": "GlobalMaxPooling1D", "name": "gmp", "keepdims": True},
            {"class_name": "Flatten", "name": "flat"},
            {"class_name": "Concatenate", "name": "both", "inputs": ["gap", "flat"]},
            {"class_name": "Dense", "name": "out", "units": 1},
        ],
        "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse"}],
    }
    export_and_compare(tmp_path, sluice_exe, features, model)


def test_embedding(tmp_path, sluice_exe):
    rng = np.random.default_rng(4)
    features = {"ids": rng.integers(0, 50, size=(ROWS, 4)), "y": rng.normal(size=(ROWS, 1))}
    model = {
        "inputs": [{"name": "ids", "feature": "ids"}],
        "layers": [{"class_name": "Embedding", "name": "emb", "input_dim": 50, "output_dim": 3},
                   {"class_name": "Flatten", "name": "flat"},
                   {"class_name": "Dense", "name": "out", "units": 1}],
        "outputs": [{"name": "y", "layer": "out", "target": "y", "loss": "mse"}],
    }
    export_and_compare(tmp_path, sluice_exe, features, model)


def test_bad_input_exits_2_naming_the_problem(tmp_path, sluice_exe):
    rng = np.random.default_rng(5)
    features = {"x": rng.normal(size=(ROWS, 8, 1)), "y": rng.normal(size=(ROWS, 2))}
    model = {"inputs": [{"name": "x", "feature": "x"}],
             "layers": [{"class_name": "GRU", "name": "g", "units": 2, "activation": "sigmoid"}],
             "outputs": [{"name": "y", "layer": "g", "target": "y", "loss": "mse"}]}
    write_features(tmp_path, features)
    p = project(tmp_path, features, model, epochs=1)
    run(sluice_exe, "run", p, "--out", tmp_path / "run")

    def refused(*args):
        done = subprocess.run([sluice_exe, "export", *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 2, done.stderr
        return done.stderr

    out = tmp_path / "e" / "m.safetensors"
    assert "activation" in refused(tmp_path / "run", "--project", p, "--format", "safetensors", "--out", out)
    assert "unknown format" in refused(tmp_path / "run", "--project", p, "--format", "pt", "--out", out)
    assert "--project" in refused(tmp_path / "run", "--format", "safetensors", "--out", out)
    assert "nothing.npz: no such file" in refused(tmp_path / "nothing.npz", "--project", p, "--format", "safetensors", "--out", out)
    assert not out.exists()
    # A model.py the user wrote is never overwritten.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "model.py").write_text("print('my own code')\n")
    ok_model = dict(model, layers=[{"class_name": "GRU", "name": "g", "units": 2}])
    p2 = project(tmp_path, features, ok_model, epochs=1)
    run(sluice_exe, "run", p2, "--out", tmp_path / "run2")
    assert "not written by sluice export" in refused(tmp_path / "run2", "--project", p2, "--format", "safetensors",
                                                     "--out", tmp_path / "mine" / "w.safetensors")
    assert (tmp_path / "mine" / "model.py").read_text() == "print('my own code')\n"


KERAS_FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "keras")


@pytest.mark.parametrize("name, inputs, outputs", [
    ("mlp", ["x"], ["probs"]), ("two_branches", ["a", "b"], ["y", "p"]), ("recurrent", ["s"], ["out"]),
    ("conv", ["img", "seq"], ["out"]), ("embedding", ["ids"], ["out"])])
def test_keras_to_sluice_to_keras_predicts_the_same(tmp_path, sluice_exe, name, inputs, outputs):
    """A model Keras wrote (tests/data/keras), imported into a project and exported again: Keras
    predicts with the exported archive what it predicted with its own."""
    keras_env()  # fails (CI) or skips here where Keras 3 cannot be had
    arrays = {i: np.load(os.path.join(KERAS_FIXTURES, f"{name}.{i}.npy")) for i in inputs}
    document = {"format": "sluice-project", "version": 1, "name": name,
                "pipeline": {"nodes": [{"id": "arrays", "op": "from_npy",
                                        "params": {"features": {i: os.path.join(KERAS_FIXTURES, f"{name}.{i}.npy") for i in inputs}}},
                                       {"id": "batch", "op": "batch", "params": {"batch_size": 8}}],
                             "edges": [["arrays", "batch"]]}}
    project = tmp_path / "p.sluice"
    project.write_text(json.dumps(document))
    run(sluice_exe, "import", os.path.join(KERAS_FIXTURES, f"{name}.keras"), "--into", project)
    archive = tmp_path / "again.keras"
    run(sluice_exe, "export", tmp_path / f"{name}.weights.npz", "--project", project, "--format", "keras", "--out", archive)
    predicted = keras_predictions(archive, [arrays[i] for i in inputs], tmp_path / "keras")
    assert len(predicted) == len(outputs)
    for output, path in zip(outputs, predicted):
        close(np.load(path), np.load(os.path.join(KERAS_FIXTURES, f"{name}.{output}.npy")), output)
