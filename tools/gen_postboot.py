"""Regenerate crates/emurust-core/src/postboot.bin.gz: the state PyBoy 2.8.1's DMG boot ROM
leaves, measured by running emurust through that boot ROM (read from the installed pyboy
package at run time; the boot ROM itself is never committed). See postboot.rs.

    python tools/gen_postboot.py   # then rebuild (pip install .)

It also writes the cycle at which the boot ROM's last frame began into postboot.rs
(BOOT_EXIT_FRAME_START), which the other sound options need.
"""

import gzip
import os
import re

import emurust
from emurust import _core

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "crates", "emurust-core", "src", "postboot.bin.gz")
RS = os.path.join(HERE, "..", "crates", "emurust-core", "src", "postboot.rs")

snap, frame_start = _core._postboot_snapshot(emurust.pyboy_boot_rom())
with open(OUT, "wb") as f:
    f.write(gzip.compress(snap, compresslevel=9, mtime=0))
print(f"{len(snap)} bytes of machine state -> {os.path.getsize(OUT)} bytes gzipped: {OUT}")
with open(RS) as f:
    src = f.read()
new, n = re.subn(r"pub const BOOT_EXIT_FRAME_START: u64 = [0-9_]+;", f"pub const BOOT_EXIT_FRAME_START: u64 = {frame_start};", src)
assert n == 1, "BOOT_EXIT_FRAME_START not found in postboot.rs"
if new != src:
    with open(RS, "w") as f:
        f.write(new)
print(f"last boot frame starts at cycle {frame_start}: {RS}")
