"""Writes small Keras 3 models of every layer family Sluice imports, with Keras's own predictions,
for tst_cli_import (sluice import, then sluice predict, must give Keras's outputs to 1e-5):

  <model>.keras                    the model as keras.Model.save writes it
  recurrent.json, recurrent.weights.h5   the same model as model.to_json() and save_weights() write them
  <model>.<input>.npy              16 rows of each input (float32; the Embedding's ids as whole numbers)
  <model>.<output>.npy             Keras's predictions for them (model.predict, inference mode)
  not_keras.h5                     an HDF5 file that is not Keras's (import must refuse it by name)
  <model>.config.json              each archive's config.json (seeds of tests/fuzz/fuzz_keras_config)

Weights are random (seeded), not trained, BatchNormalization's moving statistics too, so that
every weight matters. Run with Keras 3 (pip install tensorflow-cpu): python3 make_keras_models.py
"""
import os
import zipfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
L = keras.layers
ROWS = 16
rng = np.random.default_rng(20261128)


def randomize(model):
    weights = []
    for w in model.weights:
        values = rng.normal(scale=0.5, size=w.shape)
        if "variance" in w.path:
            values = rng.uniform(0.5, 2.0, size=w.shape)
        weights.append(values.astype(np.float32))
    model.set_weights(weights)


def mlp():
    model = keras.Sequential([keras.Input((6,), name="x"), L.Dense(8, activation="relu", name="hidden"), L.Dropout(0.2, name="drop"),
                              L.BatchNormalization(name="bn"), L.Dense(3, activation="softmax", name="probs")], name="mlp")
    model.compile(optimizer="adam", loss="categorical_crossentropy")
    return model, {"x": rng.normal(size=(ROWS, 6))}


def two_branches():
    a, b = keras.Input((5,), name="a"), keras.Input((3,), name="b")
    x = L.LayerNormalization(name="a_norm")(L.Dense(6, activation="gelu", name="a_enc")(a))
    y = L.Dense(4, activation="tanh", use_bias=False, name="b_enc")(b)
    joined = L.Concatenate(name="joined")([x, y])
    out_y = L.Dense(2, name="y")(joined)
    out_p = L.Dense(1, activation="sigmoid", name="p")(joined)
    model = keras.Model([a, b], [out_y, out_p], name="two_branches")
    model.compile(optimizer="adam", loss={"y": "mse", "p": "binary_crossentropy"})
    return model, {"a": rng.normal(size=(ROWS, 5)), "b": rng.normal(size=(ROWS, 3))}


def recurrent():
    s = keras.Input((7, 3), name="s")
    h = L.GRU(5, return_sequences=True, name="gru1")(s)
    h = L.LSTM(4, name="lstm")(h)
    h = L.RepeatVector(3, name="repeat")(h)
    h = L.GRU(6, return_sequences=True, use_bias=False, name="gru2")(h)
    h = L.TimeDistributed(L.Dense(2), name="td")(h)
    h = L.Flatten(name="flat")(h)
    out = L.Reshape((3, 2), name="out")(h)
    return keras.Model(s, out, name="recurrent"), {"s": rng.normal(size=(ROWS, 7, 3))}


def conv():
    img, seq = keras.Input((9, 9, 2), name="img"), keras.Input((11, 3), name="seq")
    x = L.Conv2D(4, 3, strides=2, padding="same", activation="relu", name="c1")(img)
    x = L.MaxPooling2D(2, strides=1, padding="same", name="mp")(x)
    x = L.AveragePooling2D(3, strides=2, padding="same", name="ap")(x)
    x = L.Conv2D(3, (2, 1), dilation_rate=(2, 1), name="c2")(x)
    x = L.GlobalAveragePooling2D(name="gap")(x)
    y = L.Conv1D(4, 3, strides=2, padding="same", activation="sigmoid", name="c3")(seq)
    y = L.AveragePooling1D(2, padding="same", name="ap1")(y)
    y = L.GlobalMaxPooling1D(name="gmp")(y)
    out = L.Dense(1, name="out")(L.Concatenate(name="both")([x, y]))
    model = keras.Model([img, seq], out, name="conv")
    model.compile(optimizer="adam", loss="mse")
    return model, {"img": rng.normal(size=(ROWS, 9, 9, 2)), "seq": rng.normal(size=(ROWS, 11, 3))}


def embedding():
    ids = keras.Input((4,), name="ids")
    h = L.Flatten(name="flat")(L.Embedding(30, 3, name="emb")(ids))
    out = L.Dense(1, name="out")(h)
    return keras.Model(ids, out, name="embedding"), {"ids": rng.integers(0, 30, size=(ROWS, 4)).astype(np.float64)}


def output_layer_names(model):
    """The layers whose outputs the model returns: Sluice names the model's outputs after them."""
    if isinstance(model, keras.Sequential):
        return [model.layers[-1].name]
    outputs = model.get_config()["output_layers"]
    return [outputs[0]] if isinstance(outputs[0], str) else [o[0] for o in outputs]


for make in (mlp, two_branches, recurrent, conv, embedding):
    model, inputs = make()
    randomize(model)
    name = model.name
    model.save(os.path.join(HERE, f"{name}.keras"))
    with zipfile.ZipFile(os.path.join(HERE, f"{name}.keras")) as archive, open(os.path.join(HERE, f"{name}.config.json"), "wb") as f:
        f.write(archive.read("config.json"))
    arrays = [inputs[i.name].astype(np.float32) for i in model.inputs]
    for i, values in zip(model.inputs, arrays):
        np.save(os.path.join(HERE, f"{name}.{i.name}.npy"), values)
    predictions = model.predict(arrays if len(arrays) > 1 else arrays[0], verbose=0)
    predictions = predictions if isinstance(predictions, list) else [predictions]
    for layer_name, values in zip(output_layer_names(model), predictions):
        np.save(os.path.join(HERE, f"{name}.{layer_name}.npy"), np.asarray(values, dtype=np.float32))
    if name == "recurrent":
        with open(os.path.join(HERE, "recurrent.json"), "w") as f:
            f.write(model.to_json())
        model.save_weights(os.path.join(HERE, "recurrent.weights.h5"))
import h5py  # noqa: E402  (Keras's own dependency)

with h5py.File(os.path.join(HERE, "not_keras.h5"), "w") as f:
    f.create_dataset("measurements/temperature", data=np.arange(6, dtype=np.float32))
print("keras", keras.__version__)
