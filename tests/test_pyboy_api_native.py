"""The native (C API) paths of ``emurust.PyBoy``: ``memory``, ``register_file`` and
``send_input`` answer every form as PyBoy 2.8.1 does (values, exception types and messages),
refuse while a tick runs with the GIL released, and let a dropped ``PyBoy`` be collected."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from conftest import ROOT

import emurust

pyboy = pytest.importorskip("pyboy")

ROM = str(ROOT / "games" / "dodge.gb")

# Ints around every size the inline int reader distinguishes (0, one 30-bit digit, more
# digits, C long limits, negatives) and bools.
EDGE_INTS = [0, 1, -1, 5, 255, 256, 0xFFFF, 0x10000, 2**30 - 1, 2**30, -(2**30) + 1, -(2**30), 2**31 - 1, 2**31,
             -(2**31), 2**62, 2**63 - 1, -(2**63), 2**63, 2**64 + 7, -(2**64) - 9, True, False]


def outcome(f):
    try:
        return ("ok", f())
    except Exception as e:  # the exception's type and message are part of the API
        return (type(e).__name__, str(e).replace("pyboy.pyboy.", "").replace("emurust._core.", ""))


def both():
    sides = []
    for cls in (emurust.PyBoy, pyboy.PyBoy):
        pb = cls(ROM, window="null", log_level="ERROR")
        pb.tick(120, False)
        sides.append(pb)
    return sides


def test_register_file_writes_and_reads_as_pyboy():
    ours, theirs = both()
    for name in ("A", "F", "B", "C", "D", "E", "HL", "SP", "PC"):
        for v in EDGE_INTS + ["x", 2.5, None]:
            got = [outcome(lambda pb=pb: (setattr(pb.register_file, name, v), getattr(pb.register_file, name))[1])
                   for pb in (ours, theirs)]
            assert got[0] == got[1], (name, v, got)
    for stmt in (lambda rf: rf.X, lambda rf: setattr(rf, "X", 1), lambda rf: delattr(rf, "A")):
        assert outcome(lambda: stmt(ours.register_file)) == outcome(lambda: stmt(theirs.register_file))


def test_memory_int_and_bank_keys_as_pyboy():
    ours, theirs = both()
    keys = EDGE_INTS + [(0, 0xC100), (1, 0x4000), (0, 0x10000), (-1, 0xC000), (True, 0xC000), (0, 0xC000, 1)]
    for key in keys:
        assert outcome(lambda: ours.memory[key]) == outcome(lambda: theirs.memory[key]), key
    for key in [0xC123, (0, 0xC124), 2**40, -5]:
        for value in [0, 255, 256, -1, True, 2**70, 1.5]:
            def write(pb):
                pb.memory[key] = value
                return pb.memory[0xC123], pb.memory[0xC124]
            assert outcome(lambda: write(ours)) == outcome(lambda: write(theirs)), (key, value)
    with pytest.raises(NotImplementedError, match="Subscript deletion not supported"):
        del ours.memory[0xC000]


def test_send_input_forms_as_pyboy():
    from emurust.pyboy_api.utils import WindowEvent

    ours, _ = both()
    ours.send_input(WindowEvent.PRESS_BUTTON_A)
    ours.send_input(WindowEvent.RELEASE_BUTTON_A, delay=2)
    ours.send_input(WindowEvent(WindowEvent.PRESS_BUTTON_B))
    assert [int(e) for e in ours.events] == [WindowEvent.PRESS_BUTTON_A, WindowEvent.PRESS_BUTTON_B]
    assert ours._queued_input == [(ours.frame_count + 2, WindowEvent.RELEASE_BUTTON_A)]
    with pytest.raises(TypeError):
        ours.send_input()
    with pytest.raises(emurust.pyboy_api.utils.PyBoyInvalidInputException):
        ours.send_input(WindowEvent.PRESS_BUTTON_A, delay=-1)
    ours.tick(1, False)
    assert ours.events == []


def test_reads_refused_while_a_tick_runs_without_the_gil():
    pb = emurust.PyBoy(ROM, window="null", log_level="ERROR")
    errors = []
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            for f in (lambda: pb.memory[0xC000], lambda: pb.register_file.A, lambda: pb.memory[0, 0xC000]):
                try:
                    f()
                except RuntimeError as e:
                    errors.append(str(e))

    t = threading.Thread(target=reader)
    t.start()
    try:
        pb._gb.tick(600, False, False)  # GIL released inside
    finally:
        stop.set()
        t.join()
    assert errors, "no read overlapped the tick"
    assert all("in use by another thread" in e for e in errors)


def test_dropped_pyboy_is_collected():
    pb = emurust.PyBoy(ROM, window="null", log_level="ERROR")
    pb.memory[0xC000]
    ref = weakref.ref(pb)
    pb.stop(save=False)
    del pb
    gc.collect()
    assert ref() is None
