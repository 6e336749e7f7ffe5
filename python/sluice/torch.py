"""Feeding a PyTorch training loop from a Sluice pipeline.

    ds = sluice.from_npy({"x": "x.npy", "y": "y.npy"}).global_shuffle(seed=1).batch(256)
    data = sluice.torch.IterableDataset(ds)
    loader = sluice.torch.DataLoader(data, num_workers=2)   # torch's DataLoader, batch_size=None
    for epoch in range(10):
        data.set_epoch(epoch)
        for batch in loader:          # dict of feature name -> torch.Tensor (no copy of fresh batches)
            ...

Each DataLoader worker, and each torch.distributed rank, reads a disjoint shard: a `shard` stage
is put before the first `batch` (after the shuffles, whose order every worker shares), as
DistributedSampler splits one permutation. set_epoch(e) reshuffles as DistributedSampler does:
every shuffle's seed becomes its seed + e, the same on every rank.
"""

import numpy as np
import torch
import torch.utils.data

from . import Dataset, Project
from ._epochs import reshuffled

__all__ = ["IterableDataset", "DataLoader"]

def _shard_plan():
    """(number of shards, this reader's index) from the torch.distributed rank and the DataLoader worker."""
    rank, world = 0, 1
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
    info = torch.utils.data.get_worker_info()
    worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
    return world * workers, rank * workers + worker


def _to_torch(array):
    if array.dtype == object:  # byte strings stay numpy
        return array
    # A fresh batch buffer is shared as it is; a read-only view (rows of a mapped file) is copied,
    # since torch tensors are writable.
    return torch.from_numpy(array if array.flags.writeable else np.array(array))


class IterableDataset(torch.utils.data.IterableDataset):
    """A Sluice pipeline (a sluice.Dataset chain or a sluice.Project) as a torch IterableDataset
    of ready batches: use DataLoader(..., batch_size=None)."""

    def __init__(self, source, seed=0, threads=None):
        super().__init__()
        if isinstance(source, Dataset):
            self._document, self._folder = source.to_dict(), source._folder
        elif isinstance(source, Project):
            self._document, self._folder = source.to_dict(), source.folder
        else:
            raise TypeError("IterableDataset takes a sluice.Dataset chain or a sluice.Project")
        self._seed = int(seed)
        self._threads = threads
        self._epoch = 0

    def set_epoch(self, epoch):
        """The next iteration's order: every rank and worker draws the same one for an epoch."""
        self._epoch = int(epoch)

    def _document_for(self, shards, index):
        document = reshuffled(self._document, self._epoch)
        if shards > 1:
            self._insert_shard(document, shards, index)
        return document

    @staticmethod
    def _insert_shard(document, shards, index):
        """A shard stage on the edge into the first batch (each reader batches its own rows), or
        after the output node when there is no batch."""
        pipeline = document["pipeline"]
        nodes, edges = pipeline["nodes"], pipeline["edges"]
        ids = {n["id"] for n in nodes}
        shard_id = "torch_shard"
        while shard_id in ids:
            shard_id += "_"
        shard = {"id": shard_id, "op": "shard", "params": {"num_shards": shards, "index": index}}
        batch = next((n["id"] for n in nodes if n["op"] == "batch"), None)
        if batch is not None:
            into = [e for e in edges if e[1] == batch]
            if len(into) != 1:
                raise ValueError(f"cannot shard before batch node {batch!r}: it has {len(into)} inputs")
            into[0][1] = shard_id
            edges.append([shard_id, batch])
        else:
            outputs = {e[0] for e in edges}
            last = pipeline.get("output") or next(n["id"] for n in reversed(nodes) if n["id"] not in outputs)
            edges.append([last, shard_id])
            pipeline.pop("output", None)
        nodes.append(shard)

    def __iter__(self):
        shards, index = _shard_plan()
        project = Project.from_dict(self._document_for(shards, index), self._folder)
        # Shuffles without a seed of their own draw from the pipeline seed: seed + epoch.
        pipeline = project.pipeline(seed=self._seed + self._epoch, threads=self._threads)
        for batch in pipeline:
            yield {name: _to_torch(array) for name, array in batch.items()}


def DataLoader(dataset, num_workers=0, **kwargs):
    """torch.utils.data.DataLoader over an IterableDataset of ready batches (batch_size=None).
    Workers are forked as usual while this process has not run a Sluice pipeline, and spawned
    once it has (a forked copy would lack the pipeline's worker threads)."""
    import sluice as _sluice_package

    kwargs.setdefault("batch_size", None)
    if num_workers > 0 and "multiprocessing_context" not in kwargs and _sluice_package._pipelines_started:
        kwargs["multiprocessing_context"] = "spawn"
    return torch.utils.data.DataLoader(dataset, num_workers=num_workers, **kwargs)
