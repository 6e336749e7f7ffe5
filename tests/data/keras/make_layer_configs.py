"""Writes layer_configs.json: what Keras 3's get_config() gives for every layer family Sluice has,
with their defaults and with options set, as `keras.saving.serialize_keras_object` writes each
layer into a model's config.json (module, class_name, config, registered_name). tst_keras_config
builds a Sluice layer from every entry and checks the refusals of options Sluice does not have.

Run with Keras 3 (pip install tensorflow-cpu): python3 make_layer_configs.py
"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402

L = keras.layers
I = keras.initializers

# (layer, per-sample input shape) pairs; the shapes let the test build each layer.
CASES = [
    (L.Dense(4), [3]),
    (L.Dense(4, activation="relu", use_bias=False, kernel_initializer="he_normal"), [3]),
    (L.Dense(2, kernel_initializer=I.GlorotUniform(seed=3), bias_initializer=I.RandomNormal()), [5, 3]),
    (L.Activation("softmax"), [3]),
    (L.Dropout(0.25, seed=5), [3]),
    (L.Flatten(), [2, 3]),
    (L.Reshape((3, 2)), [6]),
    (L.RepeatVector(3), [4]),
    (L.TimeDistributed(L.Dense(2, activation="tanh")), [5, 3]),
    (L.LayerNormalization(), [3]),
    (L.LayerNormalization(epsilon=1e-5, center=False), [3]),
    (L.BatchNormalization(), [3]),
    (L.BatchNormalization(momentum=0.9, scale=False), [4, 3]),
    (L.Embedding(20, 4), [3]),
    (L.GRU(4), [5, 3]),
    (L.GRU(4, return_sequences=True, recurrent_initializer="glorot_uniform", seed=2), [5, 3]),
    (L.LSTM(4), [5, 3]),
    (L.LSTM(4, return_sequences=True, unit_forget_bias=False, unroll=True), [5, 3]),
    (L.Conv1D(4, 3), [10, 2]),
    (L.Conv2D(4, 3, strides=2, padding="same", activation="relu"), [9, 9, 2]),
    (L.Conv2D(4, (2, 1), dilation_rate=(2, 1), kernel_initializer=I.Orthogonal()), [9, 9, 2]),
    (L.MaxPooling1D(2), [10, 2]),
    (L.MaxPooling2D(2, padding="same"), [9, 9, 2]),
    (L.AveragePooling1D(3, strides=1), [10, 2]),
    (L.AveragePooling2D(2), [9, 9, 2]),
    (L.GlobalAveragePooling1D(), [10, 2]),
    (L.GlobalMaxPooling2D(keepdims=True), [9, 9, 2]),
    (L.Concatenate(), None),
]

entries = []
for layer, shape in CASES:
    entries.append({"layer": keras.saving.serialize_keras_object(layer), "input_shape": shape})
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "layer_configs.json"), "w") as f:
    json.dump({"keras": keras.__version__, "entries": entries}, f, indent=1)
    f.write("\n")
