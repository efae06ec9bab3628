"""Markdown table of the community suites on emurust vs PyBoy 2.8.1: both verdicts, and the
default L3 rollout's frames identical and first divergence, per ROM (what
tests/test_community_roms.py checks, in one table).

    python tools/community_table.py [ROMS_DIR] > table.md
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from test_community_roms import COARSE, EXPECTED, GAMES  # noqa: E402

from emurust.verify.suites import default_roms_dir, result_rows, rows_markdown  # noqa: E402


def main() -> int:
    roms_dir = sys.argv[1] if len(sys.argv) > 1 else default_roms_dir(os.path.join(HERE, ".."))
    rows = result_rows(roms_dir, EXPECTED, GAMES, coarse=COARSE, progress=lambda r: print(r["rom"], file=sys.stderr, flush=True))
    print(rows_markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
