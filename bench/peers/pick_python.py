"""Re-exec a peer script under the Python the bench scripts agree on.

Shared by the peers in this folder (`from pick_python import pick_python` works because a
script's own folder is first on sys.path). Standard library only: it runs before we know
whether this interpreter has numpy at all.
"""
import importlib
import os
import shutil
import subprocess
import sys


def pick_python(script, imports=("numpy",)):
    """Re-exec `script` (pass __file__) with the same arguments under $SLUICE_PYTHON if set,
    else stay here if this interpreter imports every module in `imports`, else under the
    first of `python3`, /usr/bin/python3 that does. Needed because the python3 first on
    PATH may lack numpy/torch (e.g. a pyenv shim), while Debian's python3 has both."""
    name = os.path.basename(script)
    if os.environ.get("_SLUICE_PEERS_REEXEC"):
        return  # already re-executed once; never loop
    want = os.environ.get("SLUICE_PYTHON")
    if not want:
        try:
            for module in imports:
                importlib.import_module(module)
            return  # this interpreter will do
        except ImportError:
            pass
        probe = "import " + ", ".join(imports)
        for cand in ("python3", "/usr/bin/python3"):
            exe = shutil.which(cand)
            if exe and subprocess.run([exe, "-c", probe],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
                want = exe
                break
        if not want:
            sys.exit(f"{name}: no python that can `{probe}` found (set SLUICE_PYTHON)")
    exe = shutil.which(want)
    if not exe:
        sys.exit(f"{name}: SLUICE_PYTHON={want} is not an executable")
    if os.path.realpath(exe) == os.path.realpath(sys.executable):
        return
    os.environ["_SLUICE_PEERS_REEXEC"] = "1"
    os.execv(exe, [exe, os.path.abspath(script)] + sys.argv[1:])
