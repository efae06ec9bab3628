"""emurust bench: frames per second of emurust, PyBoy 2.8.1, Gambatte and mGBA on the same ROMs.

    emurust bench [--roms ROM[@STATE],...] [--suite real] [--frames 3000] [--repeat 3]
                  [--patterns render,skip24,no_render] [--sound on,off]
                  [--engines emurust,pyboy,gambatte,mgba] [--json bench.json] [--png bench.png]

By default it measures the games packaged with emurust (dodge, runner, snake), so it works from
any directory. A ROM is a path, or the name of a packaged game.

Every measurement runs in its own subprocess (python -m emurust.bench --worker ...), pinned to
one CPU core, one after another so that they never compete. Each worker loads the ROM (and, with
ROM@STATE, a PyBoy .state file: both emurust and PyBoy start from it), runs 120 frames untimed
(past start-up), then times --frames frames in one of three patterns:

  render     every frame drawn: one call per frame (PyBoy tick(1, True), emurust tick(1, True),
             Gambatte run_for one frame, mGBA run_frame).
  skip24     one frame in 24 drawn, as an RL environment with frame skip runs: calls of
             tick(24, True) (only the last frame of each call is drawn).
  no_render  no frame drawn: calls of 60 frames (PyBoy/emurust tick(60, False)); mGBA runs
             run_frame with its dummy (non-drawing) video renderer.

Gambatte's Python binding always draws (run_for needs a video buffer and libgambatte renders
every line into it), and mGBA cannot skip single frames, so their skip24 and no_render figures
(Gambatte) or skip24 figure (mGBA) draw every frame, flagged "always draws".

Sound (--sound): on is PyBoy's default (sound_emulated=True: the APU runs, and the last frame of
each tick call is sampled), off is sound_emulated=False for both PyBoy and emurust (no APU at
all). Gambatte and mGBA always synthesise audio: they run in on only.

--suite real measures the real-games suite: our games (Dodge, Runner, Snake; the tick calls
start at power-on, past their title screens' first frames) and, when the community corpus is
present (EMURUST_TEST_ROMS, default ../shared/data/roms-dev), its homebrew games.

frames/s is frames / CPU seconds of the worker process (time.process_time), robust on a loaded
shared machine; wall-clock frames/s is recorded too. The reported figure is the median of
--repeat runs; the engines take turns run by run (a round runs each engine once, back to back),
so that a drift in the machine's speed falls on all of them alike. Ratios are against PyBoy on
the same ROM, pattern and sound mode: the median over rounds of each round's ratio (the ratio of
the two medians is in the JSON too, as vs_pyboy_of_medians; it mixes rounds taken at different
machine speeds: on the device one engine's runs moved up to 1.5x between rounds).

Engines that are not installed are skipped with the reason (pip install pyboy==2.8.1,
pip install gambaterm, apt-get install libmgba0.10 + pip install mgba cached-property). mGBA
refuses ROMs without the Nintendo logo in the header through its file loader (our ROMs carry
none), so the worker hands it the ROM through loadROM directly, which runs it as is.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time
from typing import Any, Optional

from .command_line import MAX_FRAMES, Parser, UsageError, check_output_file, float_range, int_range

ENGINES = ("emurust", "pyboy", "gambatte", "mgba")
PATTERNS = ("render", "skip24", "no_render")
SOUNDS = ("on", "off")
# Our games, packaged with emurust: found from any directory (see resolve_rom).
OUR_GAMES = ("dodge.gb", "runner.gb", "snake.gb")
DEFAULT_ROMS = OUR_GAMES
COMMUNITY_GAMES = ("games/libbet.gb", "games/shock-lobster.gb")
WARMUP = 120
CHUNK = 60
SKIP = 24


def _tick_pattern(tick, pattern: str):
    """``run(n)``: n frames through ``tick(frames, render)`` in the calls `pattern` names."""

    def run(n):
        if pattern == "render":
            for _ in range(n):
                tick(1, True)
            return
        size, render = (SKIP, True) if pattern == "skip24" else (CHUNK, False)
        for _ in range(n // size):
            tick(size, render)
        if n % size:
            tick(n % size, render)

    return run


# ---------------------------------------------------------------------------- machine


def machine_info() -> dict[str, Any]:
    """CPU model, core counts and load average: recorded with every result file."""
    info: dict[str, Any] = {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "logical_cpus": os.cpu_count(),
    }
    try:
        info["usable_cpus"] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        info["usable_cpus"] = os.cpu_count()
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
        models = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")]
        cores = {line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("core id")}
        info["cpu_model"] = models[0] if models else platform.processor()
        info["physical_cores_per_socket"] = len(cores) or None
    except OSError:
        info["cpu_model"] = platform.processor() or platform.machine()
    try:
        info["loadavg"] = list(os.getloadavg())
    except OSError:
        info["loadavg"] = None
    try:
        mem = pathlib.Path("/proc/meminfo").read_text().splitlines()[0]
        info["mem_total_kb"] = int(mem.split()[1])
    except (OSError, IndexError, ValueError):
        pass
    info["time"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    return info


def engine_versions() -> dict[str, Optional[str]]:
    from importlib import metadata

    out: dict[str, Optional[str]] = {}
    for engine, dist in (("emurust", "emurust"), ("pyboy", "pyboy"), ("gambatte", "gambaterm"), ("mgba", "mgba")):
        try:
            out[engine] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[engine] = None
    return out


# ---------------------------------------------------------------------------- workers
# Each returns (run_frames(n_frames), finish()) after loading the ROM and warming up.


# --cgb values -> the constructor's cgb= (PyBoy's and emurust's alike): auto = as the header says.
CGB_CHOICES = {"auto": None, "off": False, "on": True}


def _emurust(rom: str, pattern: str, sound: str = "on", state: str = "", cgb: str = "auto"):
    import emurust

    gb = emurust.GameBoy(rom, sound_emulated=sound == "on", cgb=CGB_CHOICES[cgb])
    if state:
        gb.load_pyboy_state(state)
    gb.tick(WARMUP, False)
    return _tick_pattern(gb.tick, pattern), lambda: int(gb.frame_count)


def _pyboy(rom: str, pattern: str, sound: str = "on", state: str = "", cgb: str = "auto"):
    import logging

    from pyboy import PyBoy

    logging.getLogger("pyboy").setLevel(logging.ERROR)
    pb = PyBoy(rom, window="null", log_level="ERROR", sound_emulated=sound == "on", cgb=CGB_CHOICES[cgb])
    pb.set_emulation_speed(0)
    if state:
        with open(state, "rb") as f:
            pb.load_state(f)
    pb.tick(WARMUP, False)

    def finish():
        frames = int(pb.frame_count)
        pb.stop(save=False)
        return frames

    return _tick_pattern(pb.tick, pattern), finish


def _gambatte(rom: str, pattern: str, sound: str = "on", state: str = ""):
    import tempfile

    import numpy as np
    from gambaterm.libgambatte import GB

    gb = GB()
    gb.set_save_directory(tempfile.mkdtemp(prefix="emurust-bench-"))
    # DMG mode (no CGB flag), started in the post-boot state (no boot ROM), as the others.
    rc = gb.load(rom, GB.LoadFlag.NO_BIOS)
    if rc != 0:
        raise RuntimeError(f"libgambatte load() returned {rc}")
    video = np.zeros((144, 160), np.uint32)
    # 35112 audio samples (2 MHz) per frame; libgambatte may overshoot by up to 2064 samples.
    audio = np.zeros((35112 + 2064 + 16, 2), np.int16)
    debt = [0]

    def frame():
        # One frame = 70224 T-cycles = 35112 of libgambatte's 2 MHz audio samples. run_for
        # returns early when a picture is completed and may overshoot by a few samples: the
        # overshoot is taken off the next frame, so n frames emulate exactly n frames' time.
        left = 35112 - debt[0]
        while left > 0:
            _, samples = gb.run_for(video, 160, audio, left)
            left -= samples
        debt[0] = -left

    for _ in range(WARMUP):
        frame()

    def run(n):
        for _ in range(n):
            frame()

    return run, lambda: -1  # libgambatte has no frame counter


def _mgba(rom: str, pattern: str, sound: str = "on", state: str = ""):
    import mgba.core
    import mgba.image
    import mgba.log
    import mgba.vfs
    from mgba._pylib import ffi, lib

    mgba.log.silence()
    core = mgba.core.Core._init(lib.mCoreCreate(lib.mPLATFORM_GB))
    # mCoreLoadFile/load_path reject ROMs without the Nintendo logo (ours have none): loadROM
    # takes the file as is. No BIOS: mGBA starts in the post-boot state.
    vf = mgba.vfs.open_path(rom)
    if vf is None or not core.load_rom(vf):
        raise RuntimeError("mGBA could not load the ROM")
    w, h = core.desired_video_dimensions()
    image = mgba.image.Image(w, h)
    core.set_video_buffer(image)
    core.reset()
    keep = [image, vf]
    if pattern == "no_render":
        dummy = ffi.new("struct GBVideoRenderer*")
        lib.GBVideoDummyRendererCreate(dummy)
        lib.GBVideoAssociateRenderer(ffi.addressof(core._native.video), dummy)
        keep.append(dummy)
    for _ in range(WARMUP):
        core.run_frame()

    def run(n):
        for _ in range(n):
            core.run_frame()

    return run, lambda: (keep, int(core.frame_counter))[1]


WORKERS = {"emurust": _emurust, "pyboy": _pyboy, "gambatte": _gambatte, "mgba": _mgba}


def always_draws(engine: str, pattern: str) -> bool:
    """Whether this engine's figure for `pattern` draws every frame anyway (see the module doc)."""
    return pattern != "render" and (engine == "gambatte" or (engine == "mgba" and pattern == "skip24"))


def worker(engine: str, rom: str, pattern: str, frames: int, cpu: Optional[int], sound: str = "on",
           state: str = "", cgb: str = "auto") -> dict[str, Any]:
    """Run in the subprocess: one engine, one ROM, one pattern, one sound mode, on one core."""
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})
    if state and engine not in ("emurust", "pyboy"):
        raise SystemExit(f"{engine} cannot start from a PyBoy state")
    if cgb != "auto" and engine not in ("emurust", "pyboy"):
        raise SystemExit(f"{engine}: --cgb {cgb} is only for emurust and PyBoy")
    t0 = time.perf_counter()
    run, finish = (WORKERS[engine](rom, pattern, sound, state, cgb) if engine in ("emurust", "pyboy")
                   else WORKERS[engine](rom, pattern, sound, state))
    setup = time.perf_counter() - t0
    w0, c0 = time.perf_counter(), time.process_time()
    run(frames)
    wall, cpu_s = time.perf_counter() - w0, time.process_time() - c0
    total = finish()
    return {
        "engine": engine,
        "rom": rom,
        "pattern": pattern,
        "sound": sound,
        "cgb": cgb,
        "state": state or None,
        "frames": frames,
        "frames_run_total": total,
        "wall_s": wall,
        "cpu_s": cpu_s,
        "fps": frames / max(cpu_s, 1e-9),
        "fps_wall": frames / max(wall, 1e-9),
        "setup_s": setup,
        "always_draws": always_draws(engine, pattern),
        "cpu": cpu,
    }


def available(engine: str) -> Optional[str]:
    """None if the engine can be imported here, else why not."""
    mods = {"emurust": "emurust._core", "pyboy": "pyboy", "gambatte": "gambaterm.libgambatte", "mgba": "mgba.core"}
    code = f"import {mods[engine]}"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if r.returncode == 0:
        return None
    lines = (r.stderr or r.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit {r.returncode}"


def _pick_cpu() -> Optional[int]:
    """The last usable core (core 0 tends to take interrupts)."""
    try:
        return max(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def run_one(engine: str, rom: str, pattern: str, frames: int, cpu: Optional[int], timeout: float,
            sound: str = "on", state: str = "", cgb: str = "auto") -> dict[str, Any]:
    cmd = [sys.executable, "-m", "emurust.bench", "--worker", engine, rom, pattern, str(frames), "--sound", sound, "--cgb", cgb]
    if state:
        cmd += ["--state", state]
    if cpu is not None:
        cmd += ["--cpu", str(cpu)]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", RAYON_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    what = {"engine": engine, "rom": rom, "pattern": pattern, "sound": sound, "cgb": cgb}
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {**what, "error": f"timed out after {timeout:.0f} s"}
    for line in reversed(r.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    err = (r.stderr or r.stdout).strip().splitlines()
    return {**what, "error": err[-1] if err else f"exit {r.returncode}"}


# ---------------------------------------------------------------------------- driver


def resolve_rom(path: str) -> str:
    """A ROM path as given (relative to the current directory, else to the source tree when
    there is one), else one of the games packaged with emurust, by file name (``dodge.gb``) or
    game name (``dodge``)."""
    p = pathlib.Path(path)
    if p.is_file():
        return str(p.resolve())
    here = pathlib.Path(__file__).resolve().parent
    if (here.parent.parent / path).is_file():
        return str((here.parent.parent / path).resolve())
    for name in (p.name, f"{p.name}.gb"):
        if (here / "roms" / name).is_file():
            return str(here / "roms" / name)
    packaged = ", ".join(sorted(f.name for f in (here / "roms").glob("*.gb")))
    raise FileNotFoundError(f"ROM not found: {path} (packaged games: {packaged})")


def real_games_suite() -> list[str]:
    """Our games, and the community corpus's homebrew games when the corpus is present."""
    roms = list(OUR_GAMES)
    corpora = [os.environ.get("EMURUST_TEST_ROMS", "")]
    for base in (pathlib.Path(__file__).resolve().parents[2], pathlib.Path.cwd()):
        corpora.append(str(base / ".." / "shared" / "data" / "roms-dev"))
    corpus = next((c for c in corpora if c and pathlib.Path(c).is_dir()), None)
    if corpus is not None:
        for g in COMMUNITY_GAMES:
            p = pathlib.Path(corpus) / g
            if p.is_file():
                roms.append(str(p.resolve()))
    return roms


def _cgb_flagged(path: str) -> bool:
    """The header asks for Game Boy Color (0x143 bit 7): cgb=None then picks CGB hardware."""
    with open(path, "rb") as f:
        f.seek(0x143)
        flag = f.read(1)
    return bool(flag and flag[0] & 0x80)


def split_rom_state(entry: str) -> tuple[str, str]:
    """``ROM@STATE`` -> (ROM, STATE); a plain ROM -> (ROM, "")."""
    rom, _, state = entry.partition("@")
    return rom, state


def compare(
    roms: list[str],
    engines: list[str],
    patterns: list[str],
    frames: int,
    repeat: int,
    timeout: float = 600.0,
    log=print,
    sounds: tuple[str, ...] | list[str] = ("on",),
    cgbs: tuple[str, ...] | list[str] = ("auto",),
) -> dict[str, Any]:
    """Every ROM (``ROM`` or ``ROM@STATE``) x pattern x sound mode x hardware choice (``cgbs``:
    auto/off/on, as ``cgb=None/False/True``) x engine, `repeat` times."""
    cpu = _pick_cpu()
    machine = machine_info()
    skipped = {}
    for e in engines:
        why = available(e)
        if why is not None:
            skipped[e] = why
            log(f"skipping {e}: {why}")
    active = [e for e in engines if e not in skipped]
    runs: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    for entry in roms:
        rom, state = split_rom_state(entry)
        path = resolve_rom(rom)
        state_path = str(pathlib.Path(state).resolve()) if state else ""
        if state_path and not pathlib.Path(state_path).is_file():
            raise FileNotFoundError(f"state not found: {state}")
        for pattern in patterns:
            for sound, cgb in ((s, c) for s in sounds for c in cgbs):
                eligible = [
                    e
                    for e in active
                    # Gambatte and mGBA always synthesise audio, and start from power-on only.
                    if (sound != "off" and not state_path and cgb == "auto") or e in ("emurust", "pyboy")
                ]
                # The engines take turns, run by run, so that a drift in the machine's speed
                # (frequency, neighbours) falls on all of them alike.
                got: dict[str, list[dict[str, Any]]] = {e: [] for e in eligible}
                failed: set[str] = set()
                for round_ in range(repeat):
                    for engine in eligible:
                        if engine in failed:
                            continue
                        r = run_one(engine, path, pattern, frames, cpu, timeout, sound, state_path, cgb)
                        r["rom"] = entry
                        r["round"] = round_
                        runs.append(r)
                        if "error" in r:
                            log(f"{engine} {entry} {pattern} sound {sound} cgb {cgb}: ERROR {r['error']}")
                            failed.add(engine)
                            continue
                        got[engine].append(r)
                for engine in eligible:
                    ok = got[engine]
                    if not ok:
                        continue
                    fps = [g["fps"] for g in ok]
                    summary.append(
                        {
                            "engine": engine,
                            "rom": entry,
                            "pattern": pattern,
                            "sound": sound,
                            "cgb": cgb,
                            "cgb_model": cgb == "on" or (cgb == "auto" and _cgb_flagged(path)),
                            "fps": statistics.median(fps),
                            "fps_min": min(fps),
                            "fps_max": max(fps),
                            "fps_wall": statistics.median(g["fps_wall"] for g in ok),
                            "fps_by_round": {g["round"]: g["fps"] for g in ok},
                            "always_draws": ok[0]["always_draws"],
                            "runs": len(ok),
                        }
                    )
                    log(f"  {engine:9} {pathlib.Path(rom).name:18} {pattern:9} sound {sound:3} cgb {cgb:4} "
                        f"{summary[-1]['fps']:10,.0f} frames/s")
    # Ratios between the engines of one ROM, pattern, sound mode and hardware choice: the
    # median of the rounds' ratios (each round runs the engines back to back, so a drift of the
    # machine's speed between rounds cancels in its ratio), against PyBoy ("vs_pyboy", with the
    # ratio of the medians beside it) and against every other engine ("vs": emurust against
    # Gambatte, say).
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for s in summary:
        groups.setdefault(_key(s), []).append(s)
    for group in groups.values():
        pyboy = next((o for o in group if o["engine"] == "pyboy"), None)
        for s in group:
            ratios = {o["engine"]: _round_ratios(s, o) for o in group}
            s["vs"] = {e: statistics.median(r) for e, r in ratios.items() if e != s["engine"] and r}
            s["vs_pyboy_rounds"] = ratios.get("pyboy", [])
            s["vs_pyboy"] = statistics.median(s["vs_pyboy_rounds"]) if s["vs_pyboy_rounds"] else None
            s["vs_pyboy_of_medians"] = s["fps"] / pyboy["fps"] if pyboy else None
    machine["loadavg_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    return {
        "what": "frames per second on one core (frames / CPU seconds of the worker), median of runs",
        "frames": frames,
        "repeat": repeat,
        "warmup_frames": WARMUP,
        "no_render_chunk": CHUNK,
        "skip": SKIP,
        "pinned_cpu": cpu,
        "machine": machine,
        "versions": engine_versions(),
        "skipped": skipped,
        "summary": summary,
        "runs": runs,
    }


def _round_ratios(s: dict[str, Any], o: dict[str, Any]) -> list[float]:
    """``s``'s frames/s over ``o``'s, round by round (the rounds both completed)."""
    return [fps / o["fps_by_round"][k] for k, fps in s["fps_by_round"].items() if k in o["fps_by_round"]]


def _key(s: dict[str, Any]) -> tuple:
    return (s["rom"], s["pattern"], s.get("sound", "on"), s.get("cgb", "auto"))


def format_table(result: dict[str, Any]) -> str:
    summary = result["summary"]
    engines = [e for e in ENGINES if any(s["engine"] == e for s in summary)]
    roms = list(dict.fromkeys(s["rom"] for s in summary))
    patterns = list(dict.fromkeys(s["pattern"] for s in summary))
    sounds = list(dict.fromkeys(s.get("sound", "on") for s in summary))
    cgbs = list(dict.fromkeys(s.get("cgb", "auto") for s in summary))
    show_cgb = cgbs != ["auto"]  # the hardware column only when --cgb chose something
    idx = {(s["engine"],) + _key(s): s for s in summary}
    m = result["machine"]
    lines = [
        f"frames/s on one core ({m.get('cpu_model')}, {m.get('logical_cpus')} logical CPUs, "
        f"load average {', '.join(f'{x:.2f}' for x in (m.get('loadavg') or []))}); "
        f"{result['frames']} frames, median of {result['repeat']}; (x) = ratio vs PyBoy 2.8.1, the median of the rounds' ratios",
        "",
        "| ROM | pattern | sound | " + ("cgb | " if show_cgb else "") + " | ".join(engines) + " |",
        "|---|---|---|" + ("---|" if show_cgb else "") + "---:|" * len(engines),
    ]
    for rom in roms:
        rom_name, _, state = rom.partition("@")
        label = pathlib.Path(rom_name).name + (f" @{pathlib.Path(state).name}" if state else "")
        for pattern in patterns:
            for sound, cgb in ((x, c) for x in sounds for c in cgbs):
                cells = []
                for e in engines:
                    s = idx.get((e, rom, pattern, sound, cgb))
                    if s is None:
                        cells.append("-")
                        continue
                    c = f"{s['fps']:,.0f}"
                    if s["vs_pyboy"] is not None and e != "pyboy":
                        c += f" ({s['vs_pyboy']:.1f}x)"
                    if s["always_draws"]:
                        c += " [draws]"
                    dmg = idx.get((e, rom, pattern, sound, "off"))
                    if cgb != "off" and dmg is not None and s.get("cgb_model"):
                        c += f" [{s['fps'] / dmg['fps']:.2f} of DMG]"
                    cells.append(c)
                if all(c == "-" for c in cells):
                    continue
                hw = f"{cgb} | " if show_cgb else ""
                lines.append(f"| {label} | {pattern} | {sound} | {hw}" + " | ".join(cells) + " |")
    if result.get("skipped"):
        lines.append("")
        for e, why in result["skipped"].items():
            lines.append(f"skipped {e}: {why}")
    return "\n".join(lines)


def plot(result: dict[str, Any], path: str) -> Optional[str]:
    """Grouped bars (one group per ROM, one bar per engine), one panel per pattern."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib not installed (pip install 'emurust[bench]')"
    summary = result["summary"]
    engines = [e for e in ENGINES if any(s["engine"] == e for s in summary)]
    roms = list(dict.fromkeys(s["rom"] for s in summary))
    panels = list(dict.fromkeys((s["pattern"], s.get("sound", "on")) for s in summary))
    idx = {(s["engine"], s["rom"], s["pattern"], s.get("sound", "on")): s for s in summary}
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    width = 0.8 / max(len(engines), 1)
    for ax, (pattern, sound) in zip(axes[0], panels):
        for j, e in enumerate(engines):
            xs, ys = [], []
            for i, rom in enumerate(roms):
                s = idx.get((e, rom, pattern, sound))
                if s:
                    xs.append(i + (j - (len(engines) - 1) / 2) * width)
                    ys.append(s["fps"])
            bars = ax.bar(xs, ys, width, label=e)
            for x, y in zip(xs, ys):
                ax.text(x, y, f"{y / 1000:.1f}k", ha="center", va="bottom", fontsize=7)
            del bars
        ax.set_xticks(range(len(roms)))
        ax.set_xticklabels([pathlib.Path(r.partition("@")[0]).name for r in roms], fontsize=7)
        ax.set_ylabel("frames / s (one core)")
        title = {"render": "every frame drawn", "skip24": "one frame in 24 drawn", "no_render": "no frame drawn"}
        ax.set_title(f"{title.get(pattern, pattern)}, sound {sound}")
        ax.legend(fontsize=8)
    m = result["machine"]
    fig.suptitle(f"{m.get('cpu_model')} - load {m.get('loadavg', [0])[0]:.2f}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def _split(s: str) -> list[str]:
    return [x.strip() for x in s.split(",") if x.strip()]


def _cmd(args: argparse.Namespace) -> int:
    engines = _split(args.engines)
    for e in engines:
        if e not in ENGINES:
            raise UsageError(f"unknown engine {e!r}; expected some of {','.join(ENGINES)}")
    patterns = _split(args.patterns)
    for p in patterns:
        if p not in PATTERNS:
            raise UsageError(f"unknown pattern {p!r}; expected some of {','.join(PATTERNS)}")
    sounds = _split(args.sound)
    for x in sounds:
        if x not in SOUNDS:
            raise UsageError(f"unknown sound mode {x!r}; expected some of {','.join(SOUNDS)}")
    cgbs = _split(args.cgb)
    for x in cgbs:
        if x not in CGB_CHOICES:
            raise UsageError(f"unknown --cgb choice {x!r}; expected some of {','.join(CGB_CHOICES)}")
    if not engines or not patterns or not sounds or not cgbs:
        raise UsageError("--engines, --patterns, --sound and --cgb must each name at least one")
    roms = _split(args.roms) if args.roms else ([] if args.suite else list(DEFAULT_ROMS))
    if args.suite == "real":
        roms += [r for r in real_games_suite() if r not in roms]
    if not roms:
        raise UsageError("no ROMs (give --roms or --suite real)")
    for entry in roms:
        rom, state = split_rom_state(entry)
        try:
            resolve_rom(rom)
        except FileNotFoundError as e:
            raise UsageError(str(e)) from None
        if state and not pathlib.Path(state).is_file():
            raise UsageError(f"state not found: {state}")
    for path, what in ((args.json, "--json"), (args.png, "--png")):
        if path:
            check_output_file(path, what)
    try:
        result = compare(roms, engines, patterns, args.frames, args.repeat, args.timeout, sounds=sounds, cgbs=cgbs)
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None
    table = format_table(result)
    print()
    print(table)
    result["table_markdown"] = table
    if args.json:
        try:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
        except OSError as e:
            raise UsageError(f"cannot write {args.json}: {e.strerror}") from None
        print(f"wrote {args.json}")
    if args.png:
        why = plot(result, args.png)
        print(f"wrote {args.png}" if why is None else f"no plot: {why}")
    return 0


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--roms", default=None,
                   help="comma-separated ROM paths or packaged games (dodge, runner, snake), each optionally "
                        "ROM@STATE to start both emurust and PyBoy from a PyBoy .state file "
                        f"(default without --suite: the packaged {','.join(DEFAULT_ROMS)})")
    p.add_argument("--suite", choices=("real",), default=None,
                   help="add the real-games suite: our games and the community corpus's homebrew games")
    p.add_argument("--engines", default=",".join(ENGINES),
                   help="comma-separated, of %(default)s (missing ones are skipped with the reason)")
    p.add_argument("--patterns", default=",".join(PATTERNS),
                   help="comma-separated, of %(default)s: every frame drawn, one in 24, or none")
    p.add_argument("--sound", default=",".join(SOUNDS),
                   help="comma-separated, of %(default)s: PyBoy's default sound_emulated=True, or False (both engines)")
    p.add_argument("--cgb", default="auto",
                   help="comma-separated, of auto,off,on: the hardware (cgb=None: as the header says, as PyBoy "
                        "chooses; False: DMG; True: Game Boy Color), e.g. off,on to compare DMG with CGB mode "
                        "on the same ROM (emurust and PyBoy only)")
    p.add_argument("--frames", type=int_range(1, MAX_FRAMES), default=3000, help="timed frames per run (default 3000)")
    p.add_argument("--repeat", type=int_range(1, 1000), default=3,
                   help="runs per measurement, the median is reported (default 3)")
    p.add_argument("--timeout", type=float_range(0, 86400, low_open=True), default=600.0,
                   help="seconds per worker before it is abandoned (default 600)")
    p.add_argument("--json", default="bench.json", metavar="FILE", help="results file (default %(default)s; '' for none)")
    p.add_argument("--png", default="bench.png", metavar="FILE", help="plot file (default %(default)s; '' for none)")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("bench", help="frames/s of emurust vs PyBoy, Gambatte, mGBA (one core each)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_arguments(p)
    p.set_defaults(func=_cmd)
    return p


def main(argv: Optional[list[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        ap = argparse.ArgumentParser()
        ap.add_argument("--worker", action="store_true")
        ap.add_argument("engine", choices=ENGINES)
        ap.add_argument("rom")
        ap.add_argument("pattern", choices=PATTERNS)
        ap.add_argument("frames", type=int)
        ap.add_argument("--cpu", type=int)
        ap.add_argument("--sound", choices=SOUNDS, default="on")
        ap.add_argument("--state", default="")
        ap.add_argument("--cgb", choices=tuple(CGB_CHOICES), default="auto")
        a = ap.parse_args(argv)
        print(json.dumps(worker(a.engine, a.rom, a.pattern, a.frames, a.cpu, a.sound, a.state, a.cgb)), flush=True)
        return 0
    ap = Parser(prog="emurust bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_arguments(ap)
    try:
        return _cmd(ap.parse_args(argv))
    except UsageError as e:
        print(f"emurust bench: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
