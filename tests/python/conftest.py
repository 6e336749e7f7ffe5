"""Shared fixtures of the Python package's tests: the built `sluice` executable and small
datasets it writes (tests make their own data)."""
import os
import subprocess

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
