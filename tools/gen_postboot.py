"""Regenerate the post-boot snapshots in crates/emurust-core/src/: the state PyBoy 2.8.1's
boot ROMs leave, measured by running emurust through them (read from the installed pyboy
package at run time; the boot ROMs themselves are never committed). See postboot.rs.

    python tools/gen_postboot.py   # then rebuild (pip install .)

- postboot.bin.gz: DMG hardware (PyBoy's bootrom_dmg.bin; the same for every cartridge).
- postboot_cgb.bin.gz: Game Boy Color hardware with a CGB cartridge (bootrom_cgb.bin).
- postboot_cgb_dmg.bin.gz: Game Boy Color hardware with a DMG cartridge (the boot ROM switches
  the machine to DMG mode through KEY0).

It also writes the cycle at which the boot ROM's last frame began into postboot.rs
(BOOT_EXIT_FRAME_START, _CGB, _CGB_DMG), which the other sound options need.
"""

import gzip
import os
import re

from emurust import _core
from emurust.verify.compare import pyboy_boot_rom_path

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "crates", "emurust-core", "src")
RS = os.path.join(SRC, "postboot.rs")

with open(RS) as f:
    src = f.read()
new = src
for name, cgb, const in (
    ("postboot", None, "BOOT_EXIT_FRAME_START"),
    ("postboot_cgb", True, "BOOT_EXIT_FRAME_START_CGB"),
    ("postboot_cgb_dmg", False, "BOOT_EXIT_FRAME_START_CGB_DMG"),
):
    with open(pyboy_boot_rom_path(cgb is not None), "rb") as f:
        boot = f.read()
    snap, frame_start = _core._postboot_snapshot(boot, cgb)
    out = os.path.join(SRC, f"{name}.bin.gz")
    with open(out, "wb") as f:
        f.write(gzip.compress(snap, compresslevel=9, mtime=0))
    print(f"{len(snap)} bytes of machine state -> {os.path.getsize(out)} bytes gzipped: {out}")
    new, n = re.subn(rf"pub const {const}: u64 = [0-9_]+;", f"pub const {const}: u64 = {frame_start};", new)
    assert n == 1, f"{const} not found in postboot.rs"
    print(f"last boot frame starts at cycle {frame_start}: {const}")
if new != src:
    with open(RS, "w") as f:
        f.write(new)
