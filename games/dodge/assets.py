"""Dodge assets: bank 1 sprite tiles, bank 2 background tiles + font, bank 3 rock wave table."""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
from gbasset import Banks, font, tile  # noqa: E402

SPRITES = [  # loaded at tile 64
    """
    ...33...
    ...33...
    ..3223..
    .322223.
    33211223
    32211223
    3.3333.3
    .2....2.
    """,  # 64 ship left half (8x8, OBP0)
    """
    ...33...
    ...33...
    ..3223..
    .322223.
    32211233
    32211223
    3.3333.3
    .2....2.
    """,  # 65 ship right half
    """
    ..3333..
    .322223.
    32222123
    32221123
    32222223
    32322223
    .322233.
    ..3333..
    """,  # 66 rock A (OBP1)
    """
    ...33...
    ..3223..
    .322223.
    3221223.
    .3222223
    .322223.
    ..3223..
    ...33...
    """,  # 67 rock B
    """
    ...33...
    ...33...
    ...22...
    ...22...
    ...11...
    ........
    ........
    ........
    """,  # 68 bullet
]

BG = [  # loaded after the 40 font tiles, at tile 40
    """
    ........
    ........
    ........
    ...1....
    ........
    ........
    ........
    ........
    """,  # 40 faint star
    """
    ........
    ...2....
    ..232...
    ...2....
    ........
    ........
    ........
    ........
    """,  # 41 bright star
    """
    ........
    ....11..
    ..1111..
    .111121.
    .112221.
    1112221.
    .11221..
    ..111...
    """,  # 42 nebula top-left
    """
    ........
    ..11....
    .1111...
    1122111.
    12221111
    1222211.
    .11211..
    ..111...
    """,  # 43 nebula top-right
    """
    ..1111..
    .112211.
    11222211
    12222211
    .122211.
    .11111..
    ..11....
    ........
    """,  # 44 nebula bottom-left
    """
    ..111...
    .11221..
    1122221.
    1122211.
    .11111..
    ..111...
    ........
    ........
    """,  # 45 nebula bottom-right
    """
    11111111
    11111111
    11111111
    11111111
    11111111
    11111111
    11111111
    11111111
    """,  # 46 HUD fill (unused)
]


def waves():
    """64 spawn patterns {x, speed in 1/16 px per frame, delay frames, tile}."""
    r = random.Random(1234)
    out = bytearray()
    for i in range(64):
        x = r.randrange(8, 152)
        speed = r.choice([12, 16, 20, 24, 28, 32])
        delay = r.choice([14, 18, 22, 26, 30])
        out += bytes([x, speed, delay, 66 + (i & 1)])
    return bytes(out)


def main(outdir):
    b = Banks()
    b.add(1, "SPR_TILES", b"".join(tile(t) for t in SPRITES))
    b.add(2, "FONT_TILES", font())
    b.add(2, "BG_TILES", b"".join(tile(t) for t in BG))
    b.add(3, "WAVES", waves())
    b.write(outdir)


if __name__ == "__main__":
    main(sys.argv[1])
