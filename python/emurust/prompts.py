"""Prompt templates of the translation recipe, and the repair prompt filled from a divergence.

Templates are Markdown files shipped in ``emurust/prompt_templates/`` (copied at the repository
root in ``prompts/``). Placeholder syntax, in a template or an example value:

- ``{{name}}``: required; rendering fails, listing every missing name, if no value is given.
- ``{{name|default text}}``: optional; the default (which may be empty) is used when no value
  is given. The default cannot contain ``}``.
- ``name`` is ``[A-Za-z_][A-Za-z0-9_]*``; anything else in braces is left as it is. Values are
  inserted as they are and never scanned for placeholders themselves (pasted source code that
  contains ``{{...}}`` is safe).

A template starts with an HTML comment holding ``template: NAME`` and ``description: ...``; it
is not part of the rendered prompt.

Examples (``prompt_templates/examples/*.md``) are templates already filled in for emurust's own
Game Boy modules. Their comment names the ``template`` they fill (and optionally ``inherit``:
another values file whose values come first); the body is a list of values::

    @@ name
    the value, any number of lines
    @@ source
    @include pyboy:core/timer.py

A value made only of ``@include LOCATION`` lines is replaced by those files' contents (each in
a fenced block under its name), and ``NAME_files``/``NAME_size`` are derived unless given.
LOCATION is ``pyboy:REL`` (the installed PyBoy package), ``repo:REL`` (the emurust source tree,
when present), ``ref:REL`` (the third-party references, ``EMURUST_REFERENCES``) or a plain path. Values given by the user (``--set``/``--from-file``) win.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .verify.disasm import disassemble

TEMPLATE_DIR = Path(__file__).resolve().parent / "prompt_templates"
EXAMPLE_DIR = TEMPLATE_DIR / "examples"

PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)(?:\|([^}]*))?\}\}")
_HEADER = re.compile(r"\A\s*<!--(.*?)-->\s*\n?", re.S)
_VALUE_LINE = re.compile(r"^@@ ([A-Za-z_][A-Za-z0-9_]*)\s*$")
_INCLUDE = re.compile(r"^@include\s+(\S+)\s*$")


class PromptError(ValueError):
    """An unknown kind, a missing placeholder value, or an unreadable file."""


class MissingPlaceholders(PromptError):
    def __init__(self, kind: str, names: list[str]):
        self.kind = kind
        self.names = names
        super().__init__(
            f"template {kind!r} needs values for: {', '.join(names)}\n"
            f"  give them with --set NAME=VALUE or --from-file NAME=PATH "
            f"(see `emurust prompt {kind} --placeholders`)"
        )


@dataclass
class Prompt:
    """A template, or an example (a template plus values)."""

    kind: str
    description: str
    template: str  # name of the template this renders
    body: str  # the template text, header removed
    path: Path
    values: dict = field(default_factory=dict)  # raw example values (may hold @include lines)

    @property
    def is_example(self) -> bool:
        return self.kind != self.template


# ---------------------------------------------------------------- loading


def _split_header(text: str) -> tuple[dict, str]:
    m = _HEADER.match(text)
    if not m:
        return {}, text
    meta = {}
    for line in m.group(1).strip().splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            meta[k.strip()] = v.strip()
    return meta, text[m.end() :]


def _parse_values(text: str, path: Path) -> dict:
    values: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = _VALUE_LINE.match(line)
        if m:
            current = m.group(1)
            values[current] = []
        elif current is not None:
            values[current].append(line)
        elif line.strip():
            raise PromptError(f"{path}: text before the first '@@ name' line: {line!r}")
    return {k: "\n".join(v).strip("\n") for k, v in values.items()}


def _load_values_file(name: str, seen=()) -> tuple[dict, dict]:
    path = EXAMPLE_DIR / f"{name}.md"
    if not path.is_file():
        raise PromptError(f"values file not found: {path}")
    meta, body = _split_header(path.read_text(encoding="utf-8"))
    values = {}
    parent = meta.get("inherit")
    if parent:
        if parent in seen:
            raise PromptError(f"{path}: circular inherit of {parent!r}")
        _, values = _load_values_file(parent, seen + (name,))
    values.update(_parse_values(body, path))
    return meta, values


def _templates() -> dict[str, Prompt]:
    out = {}
    for path in sorted(TEMPLATE_DIR.glob("*.md")):
        meta, body = _split_header(path.read_text(encoding="utf-8"))
        name = meta.get("template", path.stem)
        out[name] = Prompt(name, meta.get("description", ""), name, body, path)
    return out


def _examples(templates: dict[str, Prompt]) -> dict[str, Prompt]:
    out = {}
    for path in sorted(EXAMPLE_DIR.glob("*.md")):
        if path.stem.startswith("_"):
            continue
        meta, values = _load_values_file(path.stem)
        kind = meta.get("example", path.stem)
        tname = meta.get("template")
        if tname not in templates:
            raise PromptError(f"{path}: unknown template {tname!r}")
        t = templates[tname]
        out[kind] = Prompt(kind, meta.get("description", ""), tname, t.body, path, values)
    return out


def kinds() -> dict[str, Prompt]:
    """Every template and example by kind name."""
    t = _templates()
    return {**t, **_examples(t)}


def load(kind: str) -> Prompt:
    all_kinds = kinds()
    if kind not in all_kinds:
        raise PromptError(f"unknown prompt kind {kind!r}; known: {', '.join(sorted(all_kinds))}")
    return all_kinds[kind]


def placeholders(text: str) -> list[tuple[str, Optional[str]]]:
    """(name, default or None) of every placeholder, in order of first appearance."""
    seen: dict[str, Optional[str]] = {}
    for m in PLACEHOLDER.finditer(text):
        name, default = m.group(1), m.group(2)
        if name not in seen or (seen[name] is None and default is not None):
            seen[name] = default
    return list(seen.items())


# ---------------------------------------------------------------- files and values


def pyboy_dir() -> Optional[Path]:
    import importlib.util

    spec = importlib.util.find_spec("pyboy")
    return Path(spec.origin).parent if spec and spec.origin else None


def _source_tree_holding(start: Path) -> Optional[Path]:
    """The emurust source tree that `start` lies in, if any."""
    for d in (start, *start.parents):
        if (d / "crates" / "emurust-core" / "Cargo.toml").is_file():
            return d
    return None


def package_tree() -> Optional[Path]:
    """The emurust source tree this package lives in (an editable install, or a virtual
    environment inside a clone), else None."""
    return _source_tree_holding(Path(__file__).resolve().parent)


def repo_root() -> Optional[Path]:
    """The emurust source tree (the one holding this package, or the current directory's)."""
    return package_tree() or _source_tree_holding(Path.cwd())


def resolve_location(loc: str) -> Path:
    if loc.startswith("pyboy:"):
        base = pyboy_dir()
        if base is None:
            raise PromptError(f"{loc}: PyBoy is not installed (pip install pyboy==2.8.1), or pass the value with --from-file")
        return base / loc[len("pyboy:") :]
    if loc.startswith("ref:"):
        from .verify.references import references_dir

        return references_dir() / loc[len("ref:") :]
    if loc.startswith("repo:"):
        base = repo_root()
        if base is None:
            raise PromptError(f"{loc}: the emurust source tree is not found; run from inside it or pass --from-file")
        return base / loc[len("repo:") :]
    return Path(loc).expanduser()


_FENCE_LANG = {".py": "python", ".rs": "rust", ".c": "c", ".h": "c", ".cpp": "cpp", ".pyx": "cython", ".pxd": "cython", ".js": "javascript", ".ts": "typescript"}


def read_files(paths: list[Path], labels: Optional[list[str]] = None) -> tuple[str, str, str]:
    """(text, files description, size description) of the given files, each fenced."""
    parts, names, total_lines, total_bytes = [], [], 0, 0
    for i, p in enumerate(paths):
        try:
            data = p.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            raise PromptError(f"cannot read {p}: {e.strerror}") from None
        label = labels[i] if labels else str(p)
        lines = data.count("\n") + (0 if data.endswith("\n") or not data else 1)
        total_lines += lines
        total_bytes += len(data.encode("utf-8"))
        names.append(f"`{label}` ({lines:,} lines)")
        fence = "````" if "```" in data else "```"
        parts.append(f"### `{label}`\n\n{fence}{_FENCE_LANG.get(p.suffix, '')}\n{data.rstrip()}\n{fence}")
    files = ", ".join(names)
    size = f"{len(paths)} file{'s' if len(paths) != 1 else ''}, {total_lines:,} lines, {total_bytes / 1024:,.1f} KiB"
    return "\n\n".join(parts), files, size


def _expand_includes(values: dict) -> dict:
    out = dict(values)
    for name, value in values.items():
        lines = [ln for ln in value.splitlines() if ln.strip()]
        if not lines or not all(_INCLUDE.match(ln) for ln in lines):
            continue
        locs = [_INCLUDE.match(ln).group(1) for ln in lines]
        labels = [loc.replace("pyboy:", "pyboy/", 1) if loc.startswith("pyboy:") else loc.split(":", 1)[1] if loc.startswith(("repo:", "ref:")) else loc for loc in locs]
        text, files, size = read_files([resolve_location(loc) for loc in locs], labels=labels)
        out[name] = text
        out.setdefault(f"{name}_files", files)
        out.setdefault(f"{name}_size", size)
    return out


def render_text(text: str, values: dict, kind: str = "template") -> str:
    """Substitute placeholders in one pass; raise MissingPlaceholders listing all that lack a value."""
    missing = [n for n, d in placeholders(text) if d is None and n not in values]
    if missing:
        raise MissingPlaceholders(kind, missing)

    def sub(m):
        name, default = m.group(1), m.group(2)
        return str(values[name]) if name in values else default

    return PLACEHOLDER.sub(sub, text)


def render(kind: str, values: Optional[dict] = None, files: Optional[dict] = None) -> str:
    """Render a template or example. `values`: name -> text; `files`: name -> list of paths
    (contents pasted, ``NAME_files``/``NAME_size`` derived). User values override the example's."""
    p = load(kind)
    user = dict(values or {})
    for name, paths in (files or {}).items():
        text, fdesc, size = read_files([Path(x).expanduser() for x in paths])
        user[name] = text
        user.setdefault(f"{name}_files", fdesc)
        user.setdefault(f"{name}_size", size)
    # Example values are expanded only when the user did not override them.
    base = {k: v for k, v in p.values.items() if k not in user}
    merged = _expand_includes(base)
    merged.update(user)
    return render_text(p.body, merged, kind).lstrip("\n")


# ---------------------------------------------------------------- repair prompt

#: I/O registers (inclusive ranges) -> (module, why).
_IO_MODULES = [
    (0xFF00, 0xFF00, "crates/emurust-core/src/joypad.rs", "P1 (joypad register)"),
    (0xFF01, 0xFF02, "crates/emurust-core/src/serial.rs", "SB/SC (serial port)"),
    (0xFF04, 0xFF07, "crates/emurust-core/src/timer.rs", "DIV/TIMA/TMA/TAC (timer)"),
    (0xFF0F, 0xFF0F, "crates/emurust-core/src/gameboy.rs (scheduler: when devices raise IF)", "IF (interrupt flags): a device raised its interrupt at a different time, or dispatch cleared it at a different time"),
    (0xFF10, 0xFF3F, "crates/emurust-core/src/apu.rs (apu/channels.rs)", "sound registers / wave RAM (APU)"),
    (0xFF46, 0xFF46, "crates/emurust-core/src/gameboy.rs (OAM DMA)", "DMA register"),
    (0xFF40, 0xFF4B, "crates/emurust-core/src/lcd/mod.rs", "LCD registers (LCDC/STAT/SCY/SCX/LY/LYC/palettes/WY/WX)"),
    (0xFF50, 0xFF50, "crates/emurust-core/src/gameboy.rs (boot ROM mapping)", "boot ROM disable register"),
]


def _io_module(addr: int) -> tuple[str, str]:
    for lo, hi, module, why in _IO_MODULES:
        if lo <= addr <= hi:
            return module, why
    return "crates/emurust-core/src/gameboy.rs (system bus: unmapped I/O)", "an I/O register no device owns"


def _addr_module(addr: int) -> Optional[tuple[str, str]]:
    """The module that owns `addr` as seen by a program, or None for plain RAM."""
    if addr < 0x8000:
        return "crates/emurust-core/src/cartridge/ (mbc.rs)", "a write to 0000-7FFF programs the cartridge's bank controller"
    if 0x8000 <= addr < 0xA000:
        return "crates/emurust-core/src/lcd/mod.rs", "VRAM (access locks in mode 3)"
    if 0xA000 <= addr < 0xC000:
        return "crates/emurust-core/src/cartridge/ (mbc.rs, rtc.rs)", "cartridge RAM / RTC registers"
    if 0xFE00 <= addr < 0xFEA0:
        return "crates/emurust-core/src/lcd/mod.rs (or OAM DMA in gameboy.rs)", "OAM"
    if 0xFF00 <= addr < 0xFF80:
        return _io_module(addr)
    if addr == 0xFFFF:
        return "crates/emurust-core/src/gameboy.rs", "IE"
    return None


def _rom_bytes(rom: Optional[str]) -> bytes:
    try:
        with open(rom, "rb") as f:
            return f.read()
    except (OSError, TypeError):
        return b""


def _instr_bytes(rom: bytes, pc: int) -> Optional[bytes]:
    """The instruction bytes at `pc` when they are known from the ROM file alone (bank 0, or
    bank 1 of a 32 KiB ROM without a bank controller)."""
    if pc < 0x4000 or (pc < 0x8000 and len(rom) <= 0x8000):
        return rom[pc : pc + 3] if pc < len(rom) else None
    return None


def _instr_access(b: bytes) -> Optional[tuple[int, str]]:
    """The fixed memory address an instruction accesses, if it has one: LDH (a8) / LD (a16)."""
    if not b:
        return None
    op = b[0]
    if op in (0xE0, 0xF0) and len(b) >= 2:
        return 0xFF00 + b[1], "write" if op == 0xE0 else "read"
    if op in (0xEA, 0xFA, 0x08) and len(b) >= 3:
        return b[1] | (b[2] << 8), "read" if op == 0xFA else "write"
    return None


def _format_trace(trace: list, rom: bytes) -> tuple[str, list]:
    """Markdown lines of the PC trace with the ROM's instruction bytes where known, and the
    fixed-address accesses found in it (most recent last)."""
    if not trace:
        return "(no trace available)", []
    lines, accesses = [], []
    for pc in trace:
        b = _instr_bytes(rom, pc)
        if b is None:
            region = "RAM" if pc >= 0x8000 else "switchable ROM bank"
            lines.append(f"    {pc:04X}  ({region}: bytes not known from the ROM file)")
            continue
        length, text = disassemble(b, pc)
        b = b[:length]
        acc = _instr_access(b)
        if acc:
            accesses.append((pc, acc[0], acc[1]))
        lines.append(f"    {pc:04X}  {b.hex(' ').upper():<9} {text}")
    return "\n".join(lines), accesses


def likely_module(divergence, rom: Optional[str] = None) -> tuple[str, str, str]:
    """(module, reason, other suspects) for a Divergence from emurust.verify.compare."""
    comp, where = divergence.component, divergence.where
    _, accesses = _format_trace(list(divergence.trace or []), _rom_bytes(rom))
    addr = None
    m = re.search(r"0x([0-9a-fA-F]{4})", str(where))
    if m:
        addr = int(m.group(1), 16)
    others = "crates/emurust-core/src/gameboy.rs (the scheduler decides when each device catches up; a timing slip shows up first in whichever device is read)"

    def from_trace(default_module, default_reason):
        for pc, a, kind in reversed(accesses):
            owner = _addr_module(a)
            if owner:
                return owner[0], f"{default_reason} The last fixed-address access in the trace is a {kind} of {a:#06x} at PC {pc:04X} ({owner[1]}), so start there."
        return default_module, default_reason + " The trace shows no fixed-address device access; check the instructions that wrote the address (cpu.rs) and interrupt timing (gameboy.rs)."

    if comp == "clock":
        return ("crates/emurust-core/src/gameboy.rs (scheduler: slices, HALT, interrupt dispatch)",
                "the CPU cycle counters differ: an instruction, HALT or interrupt dispatch took a different number of cycles.",
                "crates/emurust-core/src/cpu.rs (instruction cycle counts), crates/emurust-core/src/pyboy_timing.rs")
    if comp == "CPU":
        reg = str(where).split()[-1].upper()
        if reg in ("PC", "SP"):
            return ("crates/emurust-core/src/gameboy.rs (interrupt dispatch / HALT wake-up)",
                    f"register {reg} differs with all memory equal: most often an interrupt was taken at a different instruction, or HALT woke at a different time.",
                    "crates/emurust-core/src/cpu.rs (jumps, calls, returns), " + others)
        return ("crates/emurust-core/src/cpu.rs",
                f"register {reg} differs: an instruction computed a different result, or it read a different value from a device (see the trace).",
                others)
    if comp == "IO" and addr is not None:
        module, why = _io_module(addr)
        return module, f"{where} is {why}.", others
    if comp in ("VRAM", "OAM"):
        module, why = _addr_module(addr if addr is not None else 0x8000)
        return module, f"{comp} differs at {where}: a write was accepted/ignored differently (mode 3 / OAM locks) or DMA copied differently.", "crates/emurust-core/src/gameboy.rs (OAM DMA, access stamps), " + others
    if comp == "screen":
        return ("crates/emurust-core/src/lcd/render.rs",
                f"the picture differs ({where}) while memory and registers agree: the renderer, or the per-line registers it used (lcd/mod.rs).",
                "crates/emurust-core/src/lcd/mod.rs (line timing, window line counter)")
    if comp == "sound":
        return ("crates/emurust-core/src/apu.rs (apu/channels.rs)",
                f"the audio samples differ ({where}).", "crates/emurust-core/src/gameboy.rs (APU catch-up points)")
    if comp == "cartridge RAM":
        return ("crates/emurust-core/src/cartridge/ (mbc.rs; rtc.rs for MBC3)",
                f"cartridge RAM differs at {where}: RAM enable, bank selection or a write reaching a different bank.", "crates/emurust-core/src/cpu.rs, " + others)
    if comp == "serial":
        return ("crates/emurust-core/src/serial.rs",
                "the serial output differs (test ROMs report results over serial: the text may name the failing test).", others)
    if comp == "IE":
        return from_trace("crates/emurust-core/src/gameboy.rs", "IE differs.")
    if comp in ("WRAM", "HRAM"):
        return (*from_trace("crates/emurust-core/src/cpu.rs",
                            f"{comp} is plain memory, so the difference at {where} is a symptom: the program stored a value it computed or read differently."),
                others)
    return "crates/emurust-core/src/gameboy.rs", f"{comp} {where} differs.", others


def _fmt_value(v) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:#04x} ({v})"
    if isinstance(v, (bytes, bytearray)):
        return repr(bytes(v))
    return repr(v)


def repair_values(rom: str, result, reproduce: Optional[str] = None, input_desc: Optional[str] = None) -> dict:
    """The repair template's values from a RolloutResult with a divergence."""
    d = result.divergence
    if d is None:
        raise PromptError("the rollout did not diverge: there is nothing to repair")
    trace_text, _ = _format_trace(list(d.trace or []), _rom_bytes(rom))
    module, reason, others = likely_module(d, rom)
    evidence = []
    s_ours, s_ref = bytes(result.serial_emurust or b""), bytes(result.serial_pyboy or b"")
    if s_ours or s_ref:
        if s_ours == s_ref:
            evidence.append(f"- Serial output identical so far ({len(s_ours)} bytes): {s_ours[-120:]!r}")
        else:
            evidence.append(f"- Serial output differs: emurust {s_ours[-120:]!r}; PyBoy {s_ref[-120:]!r}")
    if getattr(result, "screens", None) is not None:
        evidence.append("- Screens at the divergence: see the side-by-side PNG written next to this prompt, if any.")
    return {
        "project": "emurust",
        "reference_name": "PyBoy 2.8.1",
        "input": input_desc or f"ROM `{rom}`, through PyBoy's DMG boot ROM",
        "frames_identical": str(result.frames_identical),
        "frame": str(d.frame),
        "component": d.component,
        "where": str(d.where),
        "value_ours": _fmt_value(d.emurust),
        "value_ref": _fmt_value(d.pyboy),
        "trace": "Program counters of emurust's last instructions, with the ROM's bytes at each (where known):\n\n" + trace_text,
        "evidence": "\n".join(evidence) if evidence else "None.",
        "module": module,
        "module_reason": reason,
        "other_modules": others,
        "reproduce": reproduce or f"emurust verify rollout {rom} --frames {d.frame} --seed <the seed of the failing run>",
        "test_command": "cargo test -p emurust-core && pytest -q tests",
    }


def write_repair_prompt(path, rom, result, reproduce: Optional[str] = None, input_desc: Optional[str] = None) -> str:
    """Fill the repair template from `result` (an emurust.verify.rollout.RolloutResult whose
    ``divergence`` is set) and write it to `path`; returns the text. When the result carries the
    screens, a side-by-side PNG is written beside it (``<path>.png``)."""
    text = render("repair", repair_values(str(rom), result, reproduce, input_desc))
    screens = getattr(result, "screens", None)
    if screens is not None:
        try:
            from .verify.png import side_by_side, write_png

            png = str(path) + ".png"
            write_png(png, side_by_side(*screens))
            text = text.replace("see the side-by-side PNG written next to this prompt, if any", f"`{os.path.basename(png)}` (emurust | PyBoy | difference)")
        except Exception:  # the prompt matters more than the picture
            pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return text


# ---------------------------------------------------------------- command line


def _pairs(items: list[str], flag: str) -> list[tuple[str, str]]:
    out = []
    for item in items or []:
        if "=" not in item:
            raise PromptError(f"{flag} expects NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            raise PromptError(f"{flag}: bad placeholder name {k!r}")
        out.append((k, v))
    return out


def _list(out=None) -> None:
    out = out or sys.stdout
    ks = kinds()
    print("templates:", file=out)
    for k, p in ks.items():
        if not p.is_example:
            print(f"  {k:<22} {p.description}", file=out)
    print("examples (filled in for emurust's modules: the Game Boy's, and Pong):", file=out)
    for k, p in ks.items():
        if p.is_example:
            print(f"  {k:<22} {p.description}", file=out)
    print("render one: emurust prompt KIND [--set NAME=VALUE ...] [--from-file NAME=PATH ...] [--out FILE]", file=out)


def _show_placeholders(kind: str, out=None) -> None:
    out = out or sys.stdout
    p = load(kind)
    given = set(p.values)
    print(f"placeholders of {kind!r} (template {p.template!r}):", file=out)
    for name, default in placeholders(p.body):
        if name in given or any(name == f"{g}_{s}" for g in given for s in ("files", "size")):
            state = "filled by the example"
        elif default is None:
            state = "REQUIRED"
        else:
            state = f"optional, default {default!r}" if default else "optional, default empty"
        print(f"  {name:<20} {state}", file=out)


def _main(args: argparse.Namespace) -> int:
    try:
        if args.list or not args.kind:
            _list()
            return 0
        if args.placeholders:
            _show_placeholders(args.kind)
            return 0
        values = dict(_pairs(args.set, "--set"))
        files: dict[str, list[str]] = {}
        for k, v in _pairs(args.from_file, "--from-file"):
            files.setdefault(k, []).append(v)
        text = render(args.kind, values, files)
    except PromptError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {args.out} ({len(text):,} characters)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "prompt",
        help="render a prompt template of the translation recipe",
        description="Render a prompt template (or a filled-in example) with your values. "
        "Placeholders are {{name}} (required) and {{name|default}} (optional).",
    )
    p.add_argument("kind", nargs="?", help="template or example name (see --list)")
    p.add_argument("--list", action="store_true", help="list the templates and examples")
    p.add_argument("--placeholders", action="store_true", help="list KIND's placeholders and which are required")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a placeholder value (repeatable)")
    p.add_argument("--from-file", action="append", default=[], metavar="NAME=PATH", help="a placeholder filled with a file's contents; repeat a NAME to paste several files (also sets NAME_files, NAME_size)")
    p.add_argument("--out", metavar="FILE", help="write the prompt here instead of stdout")
    p.set_defaults(func=_main)
