"""Runner assets: bank 1 sprite tiles, bank 2 BG tiles/font + parallax map, bank 3 level chunks."""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
from gbasset import Banks, font, tile  # noqa: E402

SPRITES = [  # at tile 64; 8x16 pairs (even = top)
    """
    ..3333..
    .322223.
    .321213.
    .322223.
    ..3333..
    ...33...
    .333333.
    3.3333.3
    """,  # 64 runner top
    """
    ..3333..
    ..3333..
    ..3333..
    ..3..3..
    .33...3.
    .3....3.
    33.....3
    3.......
    """,  # 65 runner legs A
    """
    ..3333..
    .322223.
    .321213.
    .322223.
    ..3333..
    3..33..3
    .333333.
    ..3333..
    """,  # 66 runner top, arms up
    """
    ..3333..
    ..3333..
    ..3333..
    ...33...
    ...33...
    ..3.3...
    ..3..3..
    .33..33.
    """,  # 67 runner legs B
    """
    ........
    ........
    3.....3.
    33...33.
    .33.33..
    ..3333..
    ...22...
    ........
    """,  # 68 bird top (wings)
    """
    ..3333..
    .322223.
    32232223
    3222222.
    .32222..
    ..3333..
    ...3.3..
    ........
    """,  # 69 bird body
]

BG = [  # at tile 40
    """
    ........
    ...111..
    .111111.
    11111111
    11111111
    .111111.
    ........
    ........
    """,  # 40 cloud
    """
    ...33...
    ..3113..
    .311113.
    .311223.
    32222223
    32222223
    22222222
    22222222
    """,  # 41 mountain peak
    """
    22222222
    22222222
    22222222
    22222222
    22222222
    22222222
    22222222
    22222222
    """,  # 42 mountain fill
    """
    ........
    ........
    ..1111..
    .111111.
    11111111
    11111111
    11111111
    11111111
    """,  # 43 hill top
    """
    11111111
    11111111
    11111111
    11111111
    11111111
    11111111
    11111111
    11111111
    """,  # 44 hill fill
    """
    33333333
    23232323
    22222222
    22122222
    22222212
    22222222
    21222222
    22222222
    """,  # 45 ground top
    """
    22222222
    22212222
    22222222
    22222212
    12222222
    22222222
    22221222
    22222222
    """,  # 46 dirt
    """
    ...33...
    ..3223..
    3.3223..
    3.3223.3
    3.3223.3
    333223.3
    ..32233.
    ..3223..
    """,  # 47 cactus top
    """
    ..3223..
    ..3223..
    ..3223..
    ..3223..
    ..3223..
    ..3223..
    ..3223..
    ..3223..
    """,  # 48 cactus stem
    """
    ........
    ..3333..
    .321123.
    .312213.
    .312213.
    .321123.
    ..3333..
    ........
    """,  # 49 coin
]


def parallax_map():
    """Rows 1..17 x 32 columns. 1-8 mountains (slow), 9-12 hills (medium), 13-17 ground (fast)."""
    rows = [[0] * 32 for _ in range(18)]
    r = random.Random(7)
    for c in range(0, 32, 7):
        rows[r.randrange(1, 4)][(c + r.randrange(3)) % 32] = 40
    mh = [max(0, 4 - abs(c - 7) // 2) if c < 16 else max(0, 3 - abs(c - 23) // 2) for c in range(32)]
    for c in range(32):
        for k in range(mh[c]):
            rows[8 - k][c] = 42
        if mh[c]:
            rows[8 - mh[c] + 1][c] = 41
    hh = [1 + ((c // 5) % 2) + (c % 11 == 0) for c in range(32)]
    for c in range(32):
        for k in range(4):
            row = 12 - k
            if k < hh[c]:
                rows[row][c] = 44
            elif k == hh[c]:
                rows[row][c] = 43
    for c in range(32):
        rows[16][c] = 45
        rows[17][c] = 46
    return bytes(sum(rows[1:], []))


def chunks():
    """16 chunks x 32 columns; column byte: bits 0-1 cactus height (rows 15/14), bit 2 coin (row 13)."""
    r = random.Random(99)
    out = bytearray()
    for i in range(16):
        ch = [0] * 32
        c = 4
        while c < 30:
            kind = r.random()
            if kind < 0.55:
                ch[c] = r.choice([1, 1, 2])
                if r.random() < 0.5:
                    ch[c] |= 4  # coin above the cactus rewards the jump
            elif kind < 0.8:
                for k in range(r.randrange(2, 4)):
                    if c + k < 32:
                        ch[c + k] = 4
            c += r.randrange(6, 12)
        out += bytes(ch)
    return bytes(out)


def main(outdir):
    b = Banks()
    b.add(1, "SPR_TILES", b"".join(tile(t) for t in SPRITES))
    b.add(2, "FONT_TILES", font())
    b.add(2, "BG_TILES", b"".join(tile(t) for t in BG))
    b.add(2, "PARALLAX_MAP", parallax_map())
    b.add(3, "CHUNKS", chunks())
    b.write(outdir)


if __name__ == "__main__":
    main(sys.argv[1])
