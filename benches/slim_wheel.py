"""Make a wheel small enough to carry to the device machine (its working tree travels within
64 MiB): drop the generated C sources a Cython wheel ships beside its extensions (never loaded)
and the debug sections of the extensions, and rewrite RECORD to match. PyBoy 2.8.1's wheel goes
from 50 MiB to ~5 MiB. Usage: python benches/slim_wheel.py WHEEL (rewritten in place)."""

from __future__ import annotations

import base64
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile


def slim(wheel: pathlib.Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        with zipfile.ZipFile(wheel) as z:
            z.extractall(root)
        for c in root.rglob("*.c"):
            if c.with_suffix(".pyx").exists() or any(c.parent.glob(c.stem + ".cpython-*.so")) or c.with_suffix(".py").exists():
                c.unlink()
        if shutil.which("strip"):
            for so in root.rglob("*.so"):
                subprocess.run(["strip", "--strip-debug", str(so)], check=True)
        record = next(root.glob("*.dist-info/RECORD"))
        rows = []
        for f in sorted(p for p in root.rglob("*") if p.is_file() and p != record):
            data = f.read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append(f"{f.relative_to(root).as_posix()},sha256={digest},{len(data)}")
        rows.append(f"{record.relative_to(root).as_posix()},,")
        record.write_text("\n".join(rows) + "\n")
        out = wheel.with_suffix(".slim")
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for f in sorted(p for p in root.rglob("*") if p.is_file()):
                z.write(f, f.relative_to(root).as_posix())
        os.replace(out, wheel)


if __name__ == "__main__":
    for w in sys.argv[1:]:
        before = os.path.getsize(w)
        slim(pathlib.Path(w))
        print(f"{w}: {before >> 20} MiB -> {os.path.getsize(w) >> 20} MiB")
