"""Regenerate the post-boot snapshots in crates/emurust-core/src/: the state PyBoy 2.8.1's
boot ROMs leave, measured by running emurust through them (read from the installed pyboy
package at run time; the boot ROMs themselves are never committed). See postboot.rs.

    python tools/gen_postboot.py   # then rebuild (pip install .)

- postboot.bin.gz: DMG hardware (PyBoy's bootrom_dmg.bin; the same for every cartridge).
- postboot_cgb.bin.gz: Game Boy Color hardware with a CGB cartridge (bootrom_cgb.bin).
- postboot_cgb_dmg.bin.gz: Game Boy Color hardware with a DMG cartridge (the boot ROM switches
  the machine to DMG mode through KEY0).
"""

import gzip
import os

from emurust import _core
from emurust.verify.compare import pyboy_boot_rom_path

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "crates", "emurust-core", "src")

for name, cgb in (("postboot", None), ("postboot_cgb", True), ("postboot_cgb_dmg", False)):
    with open(pyboy_boot_rom_path(cgb is not None), "rb") as f:
        boot = f.read()
    snap = _core._postboot_snapshot(boot, cgb)
    out = os.path.join(SRC, f"{name}.bin.gz")
    with open(out, "wb") as f:
        f.write(gzip.compress(snap, compresslevel=9, mtime=0))
    print(f"{len(snap)} bytes of machine state -> {os.path.getsize(out)} bytes gzipped: {out}")
