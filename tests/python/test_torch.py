"""sluice.torch.IterableDataset under DataLoader workers and torch.distributed ranks: every row
exactly once per epoch, disjoint shards, the same order for every rank within an epoch and a
new one after set_epoch."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from references import import_reference  # noqa: E402

torch = import_reference("torch", "Debian's python3-torch, installed by scripts/setup-debian.sh")
import sluice  # noqa: E402
import sluice.torch  # noqa: E402


def chain(folder):
    return sluice.from_npy({"x": "x.npy", "y": "y.npy"}, folder=folder).global_shuffle(seed=5).batch(64)


def rows_of(loader):
    return np.concatenate([b["x"].numpy() for b in loader])


def test_dataloader_workers_read_disjoint_shards(regression):
    x = np.load(regression / "x.npy")
    data = sluice.torch.IterableDataset(chain(regression), threads=1)
    loader = sluice.torch.DataLoader(data, num_workers=2)
    epochs = []
    for epoch in range(2):
        data.set_epoch(epoch)
        batches = list(loader)
        assert all(isinstance(b["x"], torch.Tensor) and b["x"].dtype == torch.float32 for b in batches)
        rows = np.concatenate([b["x"].numpy() for b in batches])
        assert rows.shape == x.shape  # every row exactly once: no worker read another's rows
        np.testing.assert_array_equal(np.sort(rows, axis=0), np.sort(x, axis=0))
        epochs.append(rows)
    assert not np.array_equal(epochs[0], epochs[1])
    data.set_epoch(0)
    np.testing.assert_array_equal(rows_of(loader), epochs[0])  # an epoch's order is reproducible


def test_without_workers_one_reader_reads_everything(regression):
    data = sluice.torch.IterableDataset(chain(regression))
    rows = rows_of(torch.utils.data.DataLoader(data, batch_size=None))
    assert rows.shape == (2000, 8)


def test_distributed_ranks_read_disjoint_shards(regression, tmp_path):
    """Two gloo ranks on the CPU: the union of their rows is the file, their shards disjoint."""
    script = textwrap.dedent(f"""
        import sys, numpy as np, torch, torch.distributed as dist
        import sluice, sluice.torch
        rank = int(sys.argv[1])
        dist.init_process_group("gloo", init_method="file://{tmp_path}/rendezvous", rank=rank, world_size=2)
        ds = sluice.from_npy({{"x": "x.npy", "y": "y.npy"}}, folder={str(regression)!r}).global_shuffle(seed=5).batch(64)
        data = sluice.torch.IterableDataset(ds, threads=1)
        for epoch in (0, 1):
            data.set_epoch(epoch)
            rows = np.concatenate([b["x"].numpy() for b in torch.utils.data.DataLoader(data, batch_size=None)])
            np.save("{tmp_path}/rank%d-epoch%d.npy" % (rank, epoch), rows)
        dist.barrier()
        dist.destroy_process_group()
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(r)], env=os.environ.copy(), stderr=subprocess.PIPE, text=True)
             for r in (0, 1)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    x = np.load(regression / "x.npy")
    for epoch in (0, 1):
        a, b = (np.load(tmp_path / f"rank{r}-epoch{epoch}.npy") for r in (0, 1))
        both = np.concatenate([a, b])
        assert both.shape == x.shape
        np.testing.assert_array_equal(np.sort(both, axis=0), np.sort(x, axis=0))
    assert not np.array_equal(np.load(tmp_path / "rank0-epoch0.npy"), np.load(tmp_path / "rank0-epoch1.npy"))


def test_workers_forked_after_a_pipeline_ran_are_refused_with_the_fix(regression):
    """Forking copies no pipeline threads: a forked worker says so (never hangs), and
    sluice.torch.DataLoader spawns its workers instead."""
    list(chain(regression).pipeline())  # this process has run a pipeline
    data = sluice.torch.IterableDataset(chain(regression), threads=1)
    forked = torch.utils.data.DataLoader(data, batch_size=None, num_workers=1, multiprocessing_context="fork")
    with pytest.raises(RuntimeError, match="multiprocessing_context='spawn'"):
        list(forked)
    rows = rows_of(sluice.torch.DataLoader(data, num_workers=2))
    assert rows.shape == (2000, 8)
