"""Snake assets, all in ROM bank 1 (MBC3 cart, 32 KiB)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
from gbasset import Banks, font, tile  # noqa: E402

BG = [  # at tile 40
    """
    .222222.
    23333332
    23211232
    23111132
    23111132
    23211232
    23333332
    .222222.
    """,  # 40 body segment
    """
    33333333
    32223222
    32223222
    33333333
    22322232
    22322232
    33333333
    32223222
    """,  # 41 brick wall
    """
    ........
    ........
    ........
    ........
    ........
    ........
    .....1..
    ........
    """,  # 42 floor with speck
]
SPRITES = [  # at tile 64
    """
    ..3333..
    .322223.
    32322323
    32222223
    32222223
    32311323
    .322223.
    ..3333..
    """,  # 64 head (OBP0)
    """
    ....3...
    ...3....
    .33333..
    3222223.
    3212223.
    3222223.
    3222223.
    .33333..
    """,  # 65 apple (OBP1)
]


def main(outdir):
    b = Banks()
    b.add(1, "FONT_TILES", font())
    b.add(1, "BG_TILES", b"".join(tile(t) for t in BG))
    b.add(1, "SPR_TILES", b"".join(tile(t) for t in SPRITES))
    b.write(outdir)


if __name__ == "__main__":
    main(sys.argv[1])
