"""Differential harness: run the same user script against ``pyboy.PyBoy`` and
``emurust.PyBoy`` and compare everything the script records.

A script is ``script(api, rec)``: ``api`` has ``PyBoy`` and ``WindowEvent`` of one
implementation; ``rec(label, value)`` records a value, ``rec.call(label, fn)`` records a
call's result or the exception it raised (type name and message).
"""

from __future__ import annotations

import re
import types

import numpy as np


def _normal(v):
    """A comparable form of an API value (arrays keep dtype and shape)."""
    if isinstance(v, np.ndarray):
        return ("ndarray", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, np.generic):
        return ("npscalar", v.dtype.str, v.item())
    if isinstance(v, memoryview) or type(v).__name__ == "_memoryviewslice":
        mv = memoryview(v)
        return ("buffer", mv.itemsize, mv.shape, mv.tobytes())
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_normal(x) for x in v])
    if isinstance(v, dict):
        return ("dict", sorted((k, _normal(x)) for k, x in v.items()))
    if type(v).__name__ == "Image" or hasattr(v, "tobytes") and hasattr(v, "mode"):
        return ("image", v.mode, v.size, v.tobytes())
    if type(v).__name__ in ("Sprite",):
        return ("sprite", repr(v), v.x, v.y, v.tile_identifier, v.attr_obj_bg_priority, v.attr_y_flip, v.attr_x_flip,
                v.attr_palette_number, v.attr_cgb_bank_number, v.shape, v.on_screen, [repr(t) for t in v.tiles])
    if type(v).__name__ in ("Tile",):
        return ("tile", repr(v), v.tile_identifier, v.data_address, v.vram_bank, v.shape, _normal(v.ndarray()))
    if isinstance(v, (bool, int, float, str, bytes, type(None))):
        return (type(v).__name__, v)
    return ("repr", type(v).__name__, repr(v))


class Recorder:
    def __init__(self):
        self.log = []

    def __call__(self, label, value):
        self.log.append((label, _normal(value)))

    def call(self, label, fn):
        try:
            value = fn()
        except Exception as e:  # recorded and compared
            self.log.append((label, ("raise", type(e).__name__, _unqualify(str(e)))))
            return None
        self(label, value)
        return value


def _unqualify(message):
    """Exception texts name classes with their module path in PyBoy's compiled classes
    ('pyboy.plugins.base_plugin.PyBoyGameWrapper'): compare the class names only."""
    return re.sub(r"'(?:pyboy|emurust)(?:\.\w+)*\.(\w+)'", r"'\1'", message)


def api(which):
    if which == "pyboy":
        import pyboy
        import pyboy.utils

        return types.SimpleNamespace(PyBoy=pyboy.PyBoy, WindowEvent=pyboy.utils.WindowEvent, name="pyboy")
    import emurust
    import emurust.utils

    return types.SimpleNamespace(PyBoy=emurust.PyBoy, WindowEvent=emurust.utils.WindowEvent, name="emurust")


def run_both(script, *args, **kwargs):
    """Run ``script`` on both implementations; return the two logs."""
    logs = []
    for which in ("pyboy", "emurust"):
        rec = Recorder()
        script(api(which), rec, *args, **kwargs)
        logs.append(rec.log)
    return logs


def first_difference(a, b):
    """None if the logs are identical, else a readable description of the first difference."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"entry {i} ({x[0]!r}): pyboy={_short(x[1])} emurust={_short(y[1])}"
    if len(a) != len(b):
        return f"log lengths differ: pyboy {len(a)}, emurust {len(b)}"
    return None


def _short(v, n=300):
    s = repr(v)
    return s if len(s) <= n else s[:n] + "..."


def assert_same(script, *args, **kwargs):
    a, b = run_both(script, *args, **kwargs)
    diff = first_difference(a, b)
    assert diff is None, diff
    return a
