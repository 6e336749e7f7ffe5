"""Sluice pipelines as tf.data datasets, for Keras's model.fit:

    import sluice, sluice.tf
    ds = sluice.from_npy({"x": "x.npy", "y": "y.npy"}).global_shuffle(seed=1).batch(256)
    model.fit(sluice.tf.dataset(ds, x="x", y="y"), epochs=3)

Each pass TensorFlow makes over the dataset (each epoch of fit) runs a pipeline of its own, whose
shuffles draw the order of that pass (seeded shuffles: their seed + pass; the others: the pipeline
seed + pass), so every epoch has a new order and the same order on every run, as sluice.torch's
set_epoch gives. Batches cross as numpy arrays (tf.data copies them into tensors).
"""
import itertools

import tensorflow as tf

import sluice
from sluice._epochs import reshuffled


def _project(source):
    if isinstance(source, sluice.Dataset):
        return source.project()
    if isinstance(source, sluice.Project):
        return source
    return sluice.Project.load(source)


def dataset(source, x=None, y=None, seed=0, threads=None, node=None):
    """A tf.data.Dataset over a Sluice chain, project or project path. Elements are dicts of
    features; with `x` (and `y`) they are (inputs, targets) as Keras expects, each a feature name
    or a list of names (a list gives a dict)."""
    project = _project(source)
    probe = project.pipeline(node=node, seed=seed, threads=threads)
    specs, cardinality = probe.feature_specs(), probe.cardinality()
    del probe
    signature = {name: tf.TensorSpec(shape, tf.as_dtype(dtype if dtype != "string" else "string")) for name, dtype, shape in specs}
    passes = itertools.count()

    document = project.to_dict()

    def generate():
        epoch = next(passes)
        this_pass = sluice.Project.from_dict(reshuffled(document, epoch), project.folder)
        yield from this_pass.pipeline(node=node, seed=seed + epoch, threads=threads)

    ds = tf.data.Dataset.from_generator(generate, output_signature=signature)
    if cardinality >= 0 or cardinality == sluice.INFINITE:
        # Known ahead: Keras shows the steps of an epoch and does not warn that the data ran out.
        ds = ds.apply(tf.data.experimental.assert_cardinality(cardinality))
    if x is None:
        return ds

    def pick(names, element):
        return element[names] if isinstance(names, str) else {n: element[n] for n in names}

    if y is None:
        return ds.map(lambda e: pick(x, e))
    return ds.map(lambda e: (pick(x, e), pick(y, e)))
