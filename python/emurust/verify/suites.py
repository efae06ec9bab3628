"""Community test suites (mooneye, SameSuite, age, Mealybug Tearoom, acid2) and games, judged
the way each suite means to be judged, on emurust and on PyBoy 2.8.1.

A test ROM ends at ``LD B,B`` (opcode 0x40, the suites' breakpoint). Its *verdict*:

* register suites (mooneye, SameSuite, age): the registers B, C, D, E, H, L when the first LD
  B,B executes: ``pass`` for 3, 5, 8, 13, 21, 34, ``fail`` for six 0x42, else the six values;
* screen suites (Mealybug Tearoom, acid2): the screen after the frame in which the first LD B,B
  executes: whether it equals the suite's reference image of real hardware, and its digest.

Both carry the frame of the LD B,B. On emurust the CPU records the first LD B,B itself
(``emurust._core.Host(gb).ld_b_b``); on PyBoy a hook (``PyBoy.hook_register``) is placed on the LD B,B's
address, which the suite table stores. A ROM that reaches no LD B,B within the frame budget is
judged by its registers (or screen) at the budget's end.

All ROMs run as a DMG: PyBoy with ``cgb=False`` (emurust has no CGB mode), through PyBoy's DMG
boot ROM, without buttons.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .compare import make_pyboy, pyboy_boot_rom_path

#: Suite folder -> how its ROMs say pass/fail.
SUITE_KINDS = {
    "mooneye": "registers",
    "samesuite": "registers",
    "age": "registers",
    "mealybug": "screen",
    "acid2": "screen",
    "games": "game",
}

FIBONACCI = (3, 5, 8, 13, 21, 34)
FAIL = (0x42,) * 6
#: Frames a test ROM may take to reach its LD B,B (all known ones need under 260).
VERDICT_BUDGET = 600
#: PyBoy 2.8.1's default DMG palette (lightest first): RGB -> shade 0-3.
PYBOY_GREYS = (0xFFFFFF, 0x999999, 0x555555, 0x000000)


def default_roms_dir(repo_root) -> str:
    """``$EMURUST_TEST_ROMS``, else ``../shared/data/roms-dev`` beside the repository."""
    return os.environ.get("EMURUST_TEST_ROMS") or os.path.join(os.path.dirname(os.path.abspath(repo_root)), "shared", "data", "roms-dev")


def list_roms(roms_dir: str) -> list[str]:
    """``suite/name.gb`` of every ROM in the known suite folders, sorted."""
    out = []
    for suite in SUITE_KINDS:
        d = os.path.join(roms_dir, suite)
        if os.path.isdir(d):
            out += [f"{suite}/{f}" for f in sorted(os.listdir(d)) if f.endswith(".gb")]
    return out


def kind_of(name: str) -> str:
    return SUITE_KINDS[name.split("/")[0]]


def cgb_flag(path: str) -> int:
    with open(path, "rb") as f:
        f.seek(0x143)
        return f.read(1)[0]


@dataclass(frozen=True)
class Verdict:
    #: Frame (from power-on) in which the first LD B,B executed; None: none within the budget.
    frame: Optional[int]
    #: "pass", "fail", "regs 00 6B ..." (register suites); "matches reference" or
    #: "differs from reference (N pixels)" (screen suites).
    label: str
    #: sha1 of the screen's RGBA bytes (screen suites), else "".
    screen: str = ""

    def __str__(self) -> str:
        where = f"LD B,B at frame {self.frame}" if self.frame is not None else f"no LD B,B in {VERDICT_BUDGET} frames"
        return f"{self.label} ({where}{', screen ' + self.screen if self.screen else ''})"


def register_label(regs) -> str:
    regs = tuple(int(v) for v in regs)
    if regs == FIBONACCI:
        return "pass"
    if regs == FAIL:
        return "fail"
    return "regs " + " ".join(f"{v:02X}" for v in regs)


def _reference_shades(rom_path: str) -> Optional[np.ndarray]:
    """The suite's reference image as DMG shades 0-3 (0 = white), if there is one."""
    base = os.path.splitext(rom_path)[0]
    for suffix in (".expected-dmg.png", ".reference.png"):
        if os.path.isfile(base + suffix):
            from PIL import Image  # matplotlib's dependency, in the test extra

            grey = np.asarray(Image.open(base + suffix).convert("L"), dtype=np.int32)
            return np.clip(np.rint((255 - grey) / 85.0), 0, 3).astype(np.uint8)
    return None


def _rgba_to_shades(rgba: np.ndarray) -> np.ndarray:
    rgb = (rgba[..., 0].astype(np.int32) << 16) | (rgba[..., 1].astype(np.int32) << 8) | rgba[..., 2].astype(np.int32)
    out = np.full(rgb.shape, 255, np.uint8)
    for shade, colour in enumerate(PYBOY_GREYS):
        out[rgb == colour] = shade
    return out


def screen_label(rom_path: str, rgba: np.ndarray) -> tuple[str, str]:
    digest = hashlib.sha1(np.ascontiguousarray(rgba[..., :3]).tobytes()).hexdigest()[:16]
    ref = _reference_shades(rom_path)
    if ref is None:
        return "no reference image", digest
    n = int(np.count_nonzero(_rgba_to_shades(rgba) != ref))
    return ("matches reference" if n == 0 else f"differs from reference ({n} pixels)"), digest


def emurust_verdict(rom_path: str, kind: str, budget: int = VERDICT_BUDGET) -> tuple[Verdict, Optional[tuple[int, int]]]:
    """emurust's verdict, and where its first LD B,B was: (ROM bank, address), or None."""
    import emurust

    with open(pyboy_boot_rom_path(), "rb") as f:
        gb = emurust.GameBoy(rom_path, boot_rom=f.read())
    host = emurust._core.Host(gb)
    render = kind == "screen"
    frame = None
    for f in range(1, budget + 1):
        gb.tick(1, render)
        if host.ld_b_b() is not None:
            frame = f
            break
    seen = host.ld_b_b()
    site = None
    if seen is not None:
        pc = seen["pc"]
        site = (0 if pc < 0x4000 else _mapped_bank(rom_path, gb), pc)
        regs = [seen[k] for k in "bcdehl"]
    else:
        r = gb.registers()
        regs = [r[k] for k in "bcdehl"]
    if kind == "screen":
        label, digest = screen_label(rom_path, gb.screen_rgba())
        return Verdict(frame, label, digest), site
    return Verdict(frame, register_label(regs)), site


def _mapped_bank(rom_path: str, gb) -> int:
    """The ROM bank mapped at 4000-7FFF (found by content; bank 1 of a 32 KiB ROM)."""
    with open(rom_path, "rb") as f:
        rom = f.read()
    window = gb.read(0x4000, 0x4000)
    banks = [b for b in range(1, len(rom) // 0x4000) if rom[b * 0x4000 : (b + 1) * 0x4000] == window]
    return banks[0] if banks else -1


def pyboy_verdict(rom_path: str, kind: str, site: Optional[tuple[int, int]], budget: int = VERDICT_BUDGET) -> Verdict:
    """PyBoy 2.8.1's verdict (cgb=False), its LD B,B found by a hook at `site` (bank, address)."""
    pb = make_pyboy(rom_path, cgb=False)
    try:
        hit: dict = {}
        clock = {"frame": 0}

        def at_ld_b_b(_context):
            if "frame" not in hit:
                rf = pb.register_file
                hit["frame"] = clock["frame"]
                hit["regs"] = (rf.B, rf.C, rf.D, rf.E, rf.HL >> 8, rf.HL & 0xFF)

        if site is not None:
            pb.hook_register(site[0], site[1], at_ld_b_b, None)
        render = kind == "screen"
        for f in range(1, budget + 1):
            clock["frame"] = f
            pb.tick(1, render)
            if hit:
                break
        if not hit:
            rf = pb.register_file
            hit["regs"] = (rf.B, rf.C, rf.D, rf.E, rf.HL >> 8, rf.HL & 0xFF)
        if kind == "screen":
            label, digest = screen_label(rom_path, pb.screen.ndarray.copy())
            return Verdict(hit.get("frame"), label, digest)
        return Verdict(hit.get("frame"), register_label(hit["regs"]))
    finally:
        pb.stop(save=False)


def parse_site(text: Optional[str]) -> Optional[tuple[int, int]]:
    """"1:4A81" -> (1, 0x4A81); None -> None."""
    if text is None:
        return None
    bank, addr = text.split(":")
    return int(bank), int(addr, 16)


def format_site(site: Optional[tuple[int, int]]) -> Optional[str]:
    return None if site is None else f"{site[0]}:{site[1]:04X}"


# ---------------------------------------------------------------- L3 with a precise first divergence


def rollout_pinpointed(rom_path: str, frames: int, seed: int, policy: str = "random", coarse: Optional[dict] = None, fine_state_every: int = 1, start_state=None, cgb: Optional[bool] = False, sound_emulated: bool = True):
    """An L3 rollout vs PyBoy(cgb=`cgb`, sound_emulated=`sound_emulated`; default: a DMG)
    compared as `coarse` says (compare_every, render_every, state_every), and, if it diverges,
    run again up to that frame with everything compared at every frame since the last frame at
    which everything had been compared (cycles and STAT every `fine_state_every` frames), to
    name the first divergence exactly. Returns the RolloutResult (of the fine run when there
    was one)."""
    from .rollout import rollout

    coarse = coarse or {"compare_every": 1, "render_every": 1, "state_every": 20}
    common = dict(seed=seed, policy=policy, cgb=cgb, start_state=start_state, sound_emulated=sound_emulated)
    r = rollout(rom_path, frames, **common, **coarse)
    if r.divergence is None:
        return r
    # Up to the last frame at which everything was compared, the two were identical: the
    # rerun compares from there on only.
    every = math.lcm(coarse.get("compare_every", 1), coarse.get("render_every", 1), coarse.get("state_every", 1))
    clean = (r.divergence.frame - 1) // every * every
    fine = rollout(rom_path, r.divergence.frame, **common, compare_every=1, render_every=1, state_every=fine_state_every, compare_after=clean)
    return fine if fine.divergence is not None else r


def result_rows(roms_dir: str, expected: dict, games: list, seed: int = 1, after_end: int = 60, game_frames: int = 2000, coarse: Optional[dict] = None, progress=None) -> list[dict]:
    """One row per ROM, for reports: both verdicts (test ROMs) and an L3 rollout (random
    buttons, `seed`): frames run, frames identical, first divergence (pinpointed)."""
    rows = []
    for name in list(expected) + list(games):
        path = os.path.join(roms_dir, name)
        kind = kind_of(name)
        row = {"rom": name, "kind": kind, "cgb_flag": cgb_flag(path)}
        if kind != "game":
            exp = expected[name]
            row["pyboy"] = pyboy_verdict(path, kind, parse_site(exp[2]))
            row["emurust"], _ = emurust_verdict(path, kind)
            frames = (exp[0] or VERDICT_BUDGET) + after_end
        else:
            frames = game_frames
        r = rollout_pinpointed(path, frames, seed, coarse=coarse)
        row.update(frames=frames, identical=r.frames_identical, divergence=r.divergence)
        rows.append(row)
        if progress:
            progress(row)
    return rows


def rows_markdown(rows: list[dict]) -> str:
    out = ["| ROM | CGB flag | verdict PyBoy | verdict emurust | frames identical | first divergence |", "|---|---|---|---|---|---|"]
    for r in rows:
        pv = str(r["pyboy"]) if "pyboy" in r else "(game)"
        ev = str(r["emurust"]) if "emurust" in r else "(game)"
        if "pyboy" in r and r["pyboy"] == r["emurust"]:
            ev = "same"
        d = r["divergence"]
        div = "none" if d is None else f"frame {d.frame}: {d.component} {d.where}: emurust {_fmt(d.emurust)}, PyBoy {_fmt(d.pyboy)}"
        out.append(f"| {r['rom']} | {r['cgb_flag']:#04x} | {pv} | {ev} | {r['identical']}/{r['frames']} | {div} |")
    return "\n".join(out)


def _fmt(v) -> str:
    return f"{v:#04x}" if isinstance(v, int) else repr(v)
