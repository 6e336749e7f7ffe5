"""A producer whose cost comes in bursts, for bench/autotune_bench.sh: most elements cost
nothing, every PERIOD-th waits BURST_S (as a slow read or a remote call would; the GIL is
released while it waits). On average it is faster than the simulated training step, so a
buffer deep enough to carry the consumer through a burst makes the pipeline step-bound, and a
shallow one makes the step wait at every burst."""
import time

PERIOD = 16
BURST_S = 0.024


def bursty(element):
    """Waits BURST_S seconds on every PERIOD-th element; returns the element unchanged."""
    if int(element["value"]) % PERIOD == 0:
        time.sleep(BURST_S)
    return element
