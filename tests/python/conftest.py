"""Shared fixtures of the Python package's tests: the built `sluice` executable and small
datasets it writes (tests make their own data)."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest


@pytest.fixture(scope="session")
def sluice_exe():
    exe = os.environ.get("SLUICE")
    if not exe:
        pytest.fail("set SLUICE to the built sluice executable (ctest does)")
    return exe


@pytest.fixture
def regression(tmp_path, sluice_exe):
    """x.npy (float32, 8 wide) and y.npy (float32, 1 wide), 2,000 rows, in tmp_path."""
    subprocess.run([sluice_exe, "gen", "regression", "--out", str(tmp_path), "--rows", "2000",
                    "--feature", "x:8", "--target", "y:1"], check=True, capture_output=True)
    return tmp_path


def assert_ctrl_c_stops(dataset_code):
    """Runs a child that reads `ds` (built by `dataset_code`) and sends it SIGINT while it reads:
    it must raise KeyboardInterrupt and end at once."""
    script = textwrap.dedent(dataset_code) + textwrap.dedent("""
        print("reading", flush=True)
        try:
            for batch in ds.pipeline(threads=2):
                pass
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=os.environ.copy(), text=True)
    assert child.stdout.readline().strip() == "reading"
    time.sleep(0.5)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert child.returncode == 3, err
    assert "interrupted" in out
