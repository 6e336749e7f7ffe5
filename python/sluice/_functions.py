"""Python functions in pipelines by name: what the host (python/src/python_host.cpp) calls to
turn "module:function" into a function. Pure Python with no import of the package, so that the
`sluice` executable runs the same code in the interpreter it embeds."""
import importlib
import os
import sys
import threading

# Python functions in pipelines are named "module:function" in projects. Functions handed over as
# objects are remembered here under that name, or under "<python>:ID" when no import can find
# them (a lambda, a nested function): those run in this process but cannot be saved.
_callables = {}
_module_stamps = {}  # module name -> modification time of its file when imported
_import_lock = threading.Lock()


def _callable_name(function):
    if not callable(function):
        raise TypeError(f"expected a function, got {type(function).__name__}")
    module = getattr(function, "__module__", None)
    qualname = getattr(function, "__qualname__", None)
    if module and qualname and "<" not in qualname:
        name = f"{module}:{qualname}"
    else:
        name = f"<python>:{id(function)}"
    _callables[name] = function
    return name


def _unsaveable(name):
    return name.startswith("<python>:") or name.startswith("__main__:")


def _module_file_stamp(module):
    path = getattr(module, "__file__", None)
    try:
        return os.stat(path).st_mtime_ns if path else None
    except OSError:
        return None


def _resolve_callable(name, search_path):
    """The function a pipeline names ("module:function"), importing its module with the project's
    folders first on sys.path; a module whose file changed since it was imported is reloaded."""
    if name in _callables:
        return _callables[name]
    module_name, _, qualname = name.partition(":")
    with _import_lock:
        added = [p for p in search_path if p not in sys.path]
        sys.path[:0] = added
        try:
            module = sys.modules.get(module_name)
            if module is None:
                module = importlib.import_module(module_name)
            elif _module_stamps.get(module_name) not in (None, _module_file_stamp(module)):
                module = importlib.reload(module)
            _module_stamps[module_name] = _module_file_stamp(module)
        finally:
            for p in added:
                if p in sys.path:
                    sys.path.remove(p)
    target = module
    for part in qualname.split("."):
        if not hasattr(target, part):
            raise AttributeError(f"module {module_name!r} ({getattr(module, '__file__', 'built in')}) has no {qualname!r}")
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{name} is a {type(target).__name__}, not a function")
    return target
