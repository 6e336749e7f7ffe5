"""sluice.tf.dataset for Keras: the elements of the Sluice pipeline, as (x, y) when asked, a new
order each pass (each epoch) and the same order on every run; model.fit trains on it. TensorFlow
comes from .deps/tensorflow (scripts/fetch-python-test-deps.sh); ctest runs this file as pytest_tf."""
import warnings

import numpy as np
import pytest

from references import import_reference  # noqa: E402

tf = import_reference("tensorflow", "scripts/fetch-python-test-deps.sh fetches it into .deps/tensorflow")
import sluice  # noqa: E402
import sluice.tf  # noqa: E402


def chain(folder):
    return sluice.from_npy({"x": "x.npy", "y": "y.npy"}, folder=folder).global_shuffle(seed=3).batch(100)


def test_elements_are_the_pipeline_batches(regression):
    ds = sluice.tf.dataset(chain(regression), seed=7)
    want = list(chain(regression).pipeline(seed=7))
    got = [{k: v.numpy() for k, v in element.items()} for element in ds]
    assert len(got) == len(want) == 20
    for g, w in zip(got, want):
        assert sorted(g) == ["x", "y"]
        np.testing.assert_array_equal(g["x"], w["x"])
        np.testing.assert_array_equal(g["y"], w["y"])
    assert ds.element_spec["x"].shape.as_list() == [None, 8] and ds.element_spec["x"].dtype == tf.float32
    assert int(ds.cardinality()) == 20  # known ahead, so Keras counts an epoch's steps


def test_each_pass_reshuffles_reproducibly(regression):
    first = np.concatenate([x.numpy() for x, _ in sluice.tf.dataset(chain(regression), x="x", y="y")])
    ds = sluice.tf.dataset(chain(regression), x="x", y="y")
    passes = [np.concatenate([x.numpy() for x, _ in ds]) for _ in range(2)]
    np.testing.assert_array_equal(passes[0], first)  # the same order on every run
    assert not np.array_equal(passes[0], passes[1])  # a new order in the next pass
    np.testing.assert_array_equal(np.sort(passes[1], axis=0), np.sort(np.load(regression / "x.npy"), axis=0))


def test_model_fit_learns_from_it(regression):
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mse")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = model.fit(sluice.tf.dataset(chain(regression), x="x", y="y"), epochs=4, verbose=0)
    assert not [w for w in caught if "ran out of data" in str(w.message)]
    losses = history.history["loss"]
    assert len(losses) == 4 and losses[-1] < 0.5 * losses[0], losses
