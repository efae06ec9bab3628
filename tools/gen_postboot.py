"""Regenerate crates/emurust-core/src/postboot.bin.gz: the state PyBoy 2.8.1's DMG boot ROM
leaves, measured by running emurust through that boot ROM (read from the installed pyboy
package at run time; the boot ROM itself is never committed). See postboot.rs.

    python tools/gen_postboot.py   # then rebuild (pip install .)
"""

import gzip
import os

import emurust
from emurust import _core

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "crates", "emurust-core", "src", "postboot.bin.gz")

snap = _core._postboot_snapshot(emurust.pyboy_boot_rom())
with open(OUT, "wb") as f:
    f.write(gzip.compress(snap, compresslevel=9, mtime=0))
print(f"{len(snap)} bytes of machine state -> {os.path.getsize(OUT)} bytes gzipped: {OUT}")
