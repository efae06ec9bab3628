"""The adversarial campaign's cases, run in a child process by tests/test_fuzz.py.

    python tests/fuzz_cases.py CATEGORY SEED COUNT

Each case is generated from (SEED, its index), so a failure names a case that reruns alone.
Before a case the child prints ``CASE <category>:<seed>:<i> <what>``; after it
``DONE <outcome>``. Outcomes: ``ok``, ``refused <ExceptionType>`` (an Exception a user can catch),
or ``BAD <why>``: a PanicException (not an Exception: ``except Exception`` misses it), a hang
(the case outlived its alarm), or an emulator left changed by a call that raised. A crash of the
child (abort, segfault) leaves a CASE line without its DONE line, which names the case.
"""

from __future__ import annotations

import os
import pathlib
import random
import signal
import sys
import threading

import gymnasium
import numpy as np

import emurust
from emurust import _core

ROOT = pathlib.Path(__file__).resolve().parent.parent
DODGE = str(ROOT / "games" / "dodge.gb")
ROMS = [DODGE, str(ROOT / "roms" / "mbc3.gb"), str(ROOT / "roms" / "mbc5.gb"), str(ROOT / "roms" / "cgb.gb"), str(ROOT / "roms" / "mbc1.gb")]
#: Seconds a case may take before it counts as a hang.
CASE_SECONDS = 20


class Hang(BaseException):
    pass


def _alarm(*_):
    raise Hang()


def run_case(label: str, what: str, case) -> None:
    print(f"CASE {label} {what}", flush=True)
    signal.alarm(CASE_SECONDS)
    try:
        case()
        outcome = "ok"
    except Hang:
        outcome = f"BAD hang (over {CASE_SECONDS} s)"
    except Exception as e:  # what a user can catch: the contract
        outcome = f"refused {type(e).__name__}"
        if isinstance(e, AssertionError):
            outcome = f"BAD {e}"
    except BaseException as e:  # PanicException and the like
        outcome = f"BAD {type(e).__module__}.{type(e).__name__}: {e}"
    finally:
        signal.alarm(0)
    print(f"DONE {outcome}", flush=True)


# ---------------------------------------------------------------- mutations

EXTREMES = [0, 1, 0x7F, 0x80, 0xFF]


def mutate(data: bytes, rnd: random.Random) -> bytes:
    b = bytearray(data)
    kind = rnd.randrange(6)
    if kind == 0 and b:  # bit flips
        for _ in range(rnd.randint(1, 8)):
            i = rnd.randrange(len(b))
            b[i] ^= 1 << rnd.randrange(8)
    elif kind == 1 and b:  # a run of one extreme byte
        i = rnd.randrange(len(b))
        b[i : i + rnd.randint(1, 64)] = bytes([rnd.choice(EXTREMES)]) * rnd.randint(1, 64)
    elif kind == 2:  # truncated
        del b[rnd.randrange(len(b) + 1) :]
    elif kind == 3:  # junk appended
        b += bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 4096)))
    elif kind == 4 and len(b) >= 4:  # a length or count field made huge
        i = rnd.randrange(len(b) - 3)
        b[i : i + 4] = rnd.choice([b"\xff\xff\xff\xff", b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80"])
    elif b:  # random bytes over a stretch
        i = rnd.randrange(len(b))
        n = rnd.randint(1, 256)
        b[i : i + n] = bytes(rnd.randrange(256) for _ in range(n))
    return bytes(b)


# ---------------------------------------------------------------- categories


def states(seed: int, count: int):
    base = emurust.GameBoy(DODGE)
    base.tick(120, False)
    sources = {"native": base.save_state(), "pyboy": base.save_pyboy_state()}
    for i in range(count):
        rnd = random.Random(seed * 100_003 + i)
        kind = rnd.choice(sorted(sources))
        data = mutate(sources[kind], rnd)

        def case(kind=kind, data=data):
            gb = emurust.GameBoy(DODGE)
            gb.tick(5, False)
            before = gb.save_state()
            load = gb.load_state if kind == "native" else gb.load_pyboy_state
            try:
                load(data)
            except (emurust.StateError, ValueError):
                assert gb.save_state() == before, "a refused state changed the emulator"
                raise
            gb.tick(3, True)  # a state that loads runs
            gb.load_state(gb.save_state())

        yield f"{kind} state, {len(data)} bytes", case


def roms(seed: int, count: int):
    from emurust.rom_header import with_checksums

    originals = {p: pathlib.Path(p).read_bytes() for p in ROMS}
    for i in range(count):
        rnd = random.Random(seed * 100_003 + i)
        path = rnd.choice(ROMS)
        rom = bytearray(originals[path])
        if rnd.random() < 0.6:  # the header: cartridge type, sizes, CGB flag, then maybe valid checksums
            rom[0x147] = rnd.randrange(256) if rnd.random() < 0.5 else rnd.choice([0x00, 0x01, 0x03, 0x05, 0x06, 0x0F, 0x10, 0x13, 0x19, 0x1B, 0x1E, 0xFC, 0xFE, 0xFF])
            rom[0x148] = rnd.randrange(256) if rnd.random() < 0.3 else rnd.randrange(10)
            rom[0x149] = rnd.randrange(256) if rnd.random() < 0.3 else rnd.randrange(6)
            rom[0x143] = rnd.choice([0x00, 0x80, 0xC0, 0x40, rnd.randrange(256)])
            data = bytes(with_checksums(bytes(rom))) if rnd.random() < 0.7 else bytes(rom)
        else:
            data = mutate(bytes(rom), rnd)

        def case(data=data):
            try:
                gb = emurust.GameBoy(data)
            except (emurust.RomError, ValueError):
                raise
            gb.tick(30, True)
            gb.load_state(gb.save_state())
            gb.save_pyboy_state()

        yield f"ROM from {os.path.basename(path)}, {len(data)} bytes", case


def special_paths(seed: int, count: int):
    tmp = pathlib.Path(os.environ.get("FUZZ_TMP", "/tmp"))
    fifo = tmp / "no-writer.fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    empty = tmp / "empty.gb"
    empty.write_bytes(b"")
    paths = ["\ud800", "/dev/zero", str(fifo), str(tmp), "/no/such/file.gb", str(empty), "a\x00b", "x" * 5000, "/proc/self/mem", "/dev/null"]
    calls = [
        ("GameBoy(path)", lambda p: emurust.GameBoy(p)),
        ("GameBoy(boot_rom=path)", lambda p: emurust.GameBoy(DODGE, boot_rom=p)),
        ("load_pyboy_state(path)", lambda p: emurust.GameBoy(DODGE).load_pyboy_state(p)),
        ("Batch(path)", lambda p: _core.Batch(p, 1)),
        ("Batch(start_state=path)", lambda p: _core.Batch(DODGE, 1, start_state=p)),
        ("run_vector_file(path)", lambda p: _core.run_vector_file(p)),
        ("PyBoy(path)", lambda p: emurust.PyBoy(p, window="null")),
        ("make_vec(path)", lambda p: gymnasium.make_vec("emurust/GameBoy-v0", num_envs=1, rom=p)),
    ]
    for p in paths:
        for name, call in calls:
            yield f"{name} with {p[:40]!r}", (lambda call=call, p=p: call(p))


ABSURD = [-1, 0x10000, 2**31, 2**63, 2**64, -(2**63), 10**30, None, "x", 1.5, float("nan"), b"x", []]


def api_misuse(seed: int, count: int):
    gb = emurust.GameBoy(DODGE)
    gb.tick(10, False)
    host = _core.Host(gb)  # the verification hooks, off the user's GameBoy
    calls = [
        ("read", 1), ("read", 2), ("write", 2), ("read_banked", 2), ("read_rom_bank", 2), ("set_register", 2),
        ("button_press", 1), ("button_release", 1), ("load_state", 1), ("set_cartridge_ram", 1),
        ("load_battery_save", 1), ("read_cpu_range", 3), ("vram_byte", 1), ("set_vram_byte", 2), ("wram_byte", 1),
        ("set_wram_byte", 2), ("cart_ram_byte", 2), ("set_cart_ram_byte", 3), ("set_div", 1), ("boot_rom_byte", 1),
        ("register", 1), ("read_cpu", 1), ("tick", 1),
    ]
    good = {"set_register": "a", "register": "pc", "button_press": "a", "button_release": "a"}
    for i in range(count):
        rnd = random.Random(seed * 100_003 + i)
        name, arity = rnd.choice(calls)
        args = [rnd.choice(ABSURD + [0, 1, 0xC000, 0xFF]) for _ in range(arity)]
        if name in good and rnd.random() < 0.5:
            args[0] = good[name]
        if name == "tick" and isinstance(args[0], int) and args[0] > 100:
            args[0] = -5  # a huge frame count is a valid long call (it stops on Ctrl-C), not misuse

        def case(name=name, args=args):
            getattr(gb if hasattr(gb, name) else host, name)(*args)

        yield f"GameBoy.{name}{tuple(args)!r}", case
    batch_args = [("num_envs", [0, -1, 2**40, 70000, None, "x"]), ("frame_skip", [0, -1, 10**9, None]),
                  ("press_frames", [-1, 10**9]), ("num_threads", [0, -1, 10**6]), ("max_episode_steps", [-1, 2**70])]
    for j in range(max(1, count // 4)):
        rnd = random.Random(seed * 100_003 + 50_000 + j)
        key, values = rnd.choice(batch_args)
        value = rnd.choice(values)

        def batch_case(key=key, value=value):
            kwargs = {key: value} if key != "num_envs" else {}
            n = value if key == "num_envs" else 2
            _core.Batch(DODGE, n, **kwargs)

        yield f"Batch({key}={value!r})", batch_case
    batch = _core.Batch(DODGE, 2, frame_skip=2)
    batch.reset()
    steps = [np.zeros(3, np.int64), np.zeros((2, 2), np.int64), np.array([0, 99]), np.array([-1, 0]), np.array([0.5, 1.5]),
             np.array(["a", "b"]), [0, 2**70], None, np.zeros(2, np.uint8)]
    for actions in steps:
        yield f"Batch.step({actions!r})", (lambda a=actions: batch.step(a))


def threads(seed: int, count: int):
    gb = emurust.GameBoy(DODGE)
    batch = _core.Batch(DODGE, 4, frame_skip=4, num_threads=2)
    batch.reset()

    def hammer(work):
        errors: list[BaseException] = []

        def loop():
            for _ in range(20):
                try:
                    work()
                except RuntimeError as e:  # "busy": another thread holds it, a clean refusal
                    assert "busy" in str(e) or "already" in str(e), e
                except BaseException as e:
                    errors.append(e)

        ts = [threading.Thread(target=loop) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if errors:
            raise AssertionError(f"{type(errors[0]).__name__}: {errors[0]}")

    yield "4 threads tick/read/save one GameBoy", lambda: hammer(lambda: (gb.tick(2, True), gb.read(0xC000, 16), gb.load_state(gb.save_state())))
    yield "4 threads step one Batch", lambda: hammer(lambda: batch.step(np.zeros(4, np.int64)))
    yield "4 threads make and drop Batches", lambda: hammer(lambda: _core.Batch(DODGE, 2, num_threads=1).reset())


CATEGORIES = {"states": states, "roms": roms, "paths": special_paths, "api": api_misuse, "threads": threads}


def main(argv: list[str]) -> int:
    category, seed, count = argv[0], int(argv[1]), int(argv[2])
    signal.signal(signal.SIGALRM, _alarm)
    for k, (what, case) in enumerate(CATEGORIES[category](seed, count)):
        run_case(f"{category}:{seed}:{k}", what, case)
    print("END", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
