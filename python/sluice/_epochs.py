"""A new order each epoch, the same on every run and every reader: what sluice.torch's set_epoch
and each pass of sluice.tf's dataset use. Shuffles with a seed of their own get seed + epoch (as
DistributedSampler's seed + epoch); the others draw from the pipeline seed, which the caller
shifts the same way."""
import copy

SHUFFLES = ("shuffle", "global_shuffle")


def reshuffled(document, epoch):
    """A copy of a project document whose seeded shuffles draw the order of `epoch`."""
    document = copy.deepcopy(document)
    for node in document["pipeline"]["nodes"]:
        if node["op"] in SHUFFLES and "seed" in node.get("params", {}):
            node["params"]["seed"] = int(node["params"]["seed"]) + int(epoch)
    return document
