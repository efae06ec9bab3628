"""Print the expected-verdict table of tests/test_community_roms.py, computed by running PyBoy
2.8.1 (cgb=False) on every ROM of the community suites.

    python tools/gen_community_verdicts.py [ROMS_DIR] > table.txt

The LD B,B that ends each test ROM is located by running emurust (its CPU records the first
LD B,B's address); the verdict itself is PyBoy's: a hook on that address captures PyBoy's
registers (or, after that frame, its screen). A ROM whose LD B,B PyBoy never reaches is judged
at the frame budget's end. Paste the output over EXPECTED in the test file.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from emurust.verify.suites import emurust_verdict, format_site, kind_of, list_roms, pyboy_verdict  # noqa: E402


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    from emurust.verify.suites import default_roms_dir

    roms_dir = sys.argv[1] if len(sys.argv) > 1 else default_roms_dir(root)
    print("EXPECTED = {")
    print("    # ROM: (frame of the first LD B,B on PyBoy, PyBoy's verdict, LD B,B at bank:address, screen digest)")
    for name in list_roms(roms_dir):
        kind = kind_of(name)
        if kind == "game":
            continue
        path = os.path.join(roms_dir, name)
        _, site = emurust_verdict(path, kind)
        v = pyboy_verdict(path, kind, site)
        if v.frame is None:
            site = None
        print(f"    {name!r}: ({v.frame}, {v.label!r}, {format_site(site)!r}, {v.screen or None!r}),", flush=True)
    print("}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
