"""Test tooling: rewrite a PyBoy 2.8.1 save state (format version 29) in an older format
version's layout, as PyBoy 2.8.1's loader reads that version.

PyBoy 2.8.1 still loads every older version (0 to 28; 0 and 1 have no version byte, their
first byte is the boot ROM flag). Real old states come from old PyBoy releases, which we do
not install; this converter makes states of each layout from current ones, so tests can load
the same old state into PyBoy 2.8.1 (the oracle) and into emurust and compare the machines.
The layout of each version is what PyBoy 2.8.1's ``load_state`` methods read for it
(``state_version >= N`` branches in its motherboard, CPU, LCD, renderer, sound, timer,
cartridge, joypad, serial and Super Game Boy loaders): fields a version lacks are dropped,
fields it stored elsewhere are moved there. It is not meant to reproduce what an old PyBoy
wrote byte for byte beyond that (values PyBoy 2.8.1 discards are written as 0).

    python tools/pyboy_state_versions.py ROM STATE_IN VERSION STATE_OUT
"""

from __future__ import annotations

import struct
import sys

CURRENT = 29
SCREEN_H, SCREEN_W = 144, 160
LCD_COLOUR_EXTRA = 0x2000 + 1 + 2 * (4 + 64)
SGB_LEN = 7 + 4 + 0x2000 + 0x800 + 0x80
RTC_LEN = 33
MBC1_TYPES = (0x01, 0x02, 0x03)
RTC_TYPES = (0x0F, 0x10)


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def get(self, n: int) -> bytes:
        b = self.data[self.pos : self.pos + n]
        if len(b) != n:
            raise ValueError("truncated version 29 state")
        self.pos += n
        return b

    def u8(self) -> int:
        return self.get(1)[0]


def convert(
    rom: bytes,
    state: bytes,
    version: int,
    *,
    div: int | None = None,
    ff6c: int | None = None,
    line: tuple[int, int] | None = None,
) -> bytes:
    """``state`` (a version 29 PyBoy state of ``rom``) in format version ``version``'s layout.

    ``div`` and ``ff6c`` replace two bytes that PyBoy stores beside the value they derive from,
    as older PyBoy releases wrote them: the timer's DIV byte (from version 5; old releases kept
    DIV apart from a sub-counter, so it need not be the counter's upper byte) and, before
    version 16, the FF6C byte of the I/O block (the object priority mode; 0 in old DMG states).

    ``line`` = (LY, STAT) replaces the LCD's line and mode (from version 5), as an old release
    saved them at the end of its frame: PokemonRedExperiments' version 7 states hold LY 145 in
    mode 1 (VBlank), where PyBoy 2.8.1 ends a frame at line 0. Before version 8 the LCD's clocks
    and next mode are not in the state (PyBoy keeps the running machine's), so such a line
    disagrees with them; from 8 on (version 29 included) it disagrees with the state's own.
    """
    if state[0] != CURRENT:
        raise ValueError(f"not a version {CURRENT} state")
    if not 0 <= version <= CURRENT:
        raise ValueError(f"version {version}: PyBoy 2.8.1 loads 0 to {CURRENT}")
    if version == CURRENT and line is None:
        return bytes(state)
    r = _Reader(state)
    out = bytearray()
    v = version

    def copy(n: int, since: int = 0) -> bytes:
        b = r.get(n)
        if v >= since:
            out.extend(b)
        return b

    # Header.
    r.get(1)
    if v >= 2:
        out.append(v)
    copy(1)  # boot ROM
    copy(1, 16)  # KEY0
    copy(2, 8)  # KEY1, double speed
    cgb_hw = copy(1, 8)[0] != 0
    if cgb_hw:
        copy(10, 8)  # HDMA
        if v < 8:
            raise ValueError("Game Boy Color states exist from version 8")

    # CPU.
    copy(13)
    copy(1, 19)  # EI delay
    copy(2)  # halted, stopped
    ie = copy(1, 5)[0]
    copy(2, 8)  # queued, IF
    copy(8, 12)  # cycles
    copy(12, 19)  # OAM DMA

    # LCD.
    copy(0x2000 + 0xA0 + 4)
    lcd_line_at = len(out)
    copy(3, 5)  # STAT LY LYC
    if line is not None and v >= 5:
        out[lcd_line_at + 1], out[lcd_line_at] = line
    copy(4)
    opri = copy(1, 16)[0]
    params = copy(SCREEN_H * 5, 11)
    colour = copy(1, 8)[0] != 0
    copy(1, 17)  # downgraded
    copy(1, 8)  # speed shift
    copy(3, 13)  # frame done, first frame, reset
    copy(8, 12)  # last cycles
    copy(8 + 8 + 1 + 1, 8)  # clocks, next mode, transition
    if colour:
        copy(LCD_COLOUR_EXTRA, 8)

    # Sound.
    head = r.get(8)
    spf_raw = r.get(8)
    spf = struct.unpack("<Q", spf_raw)[0]
    cps = r.get(8)
    buf = r.get((spf + 1) * 2)
    rest = r.get(1 + 8 * 3)  # speed shift, targets, interrupt distance
    cycles, last = r.get(8), r.get(8)
    divs = r.get(16)
    after_div = r.get(1)
    tail = r.get(1 + 1 + 8 + 1)
    if v == 13:
        out += last + cycles
    elif v >= 14:
        out += head + spf_raw + cps + buf + rest + cycles + last + divs
        if v >= 22:
            out += after_div
        out += tail
    channel_since = 13 if v >= 13 else 99
    for sweep in (True, False):
        copy(57, channel_since)
        copy(3, max(23, channel_since))
        if sweep:
            copy(19, channel_since)
            copy(8, max(27, channel_since))
            copy(8, max(28, channel_since))
            copy(10, channel_since)
    copy(65, channel_since)  # CH3
    copy(1, max(24, channel_since))  # restart pending
    copy(8, max(25, channel_since))  # sample position
    copy(65, channel_since)  # CH4
    copy(25, max(26, channel_since))  # divider counter

    # Renderer.
    screen = r.get(SCREEN_W * SCREEN_H * 5)
    if 2 <= v < 11:
        per_line = 5 if v > 3 else 4
        for y in range(SCREEN_H):
            out += params[y * 5 : y * 5 + per_line]
    if v >= 10:
        out += screen
    elif v >= 6:
        for i in range(SCREEN_W * SCREEN_H):
            out += screen[i * 5 : i * 5 + 4]
    copy(1, 18)  # window flag

    # RAM and the WRAM bank.
    copy((0x8000 if cgb_hw else 0x2000) + 0x60 + 0x4C + 0x7F)
    wram_bank = r.u8()
    if v >= 16:
        out.append(wram_bank)
    else:
        block = bytearray(0x34)
        block[0x20] = opri if ff6c is None else ff6c
        block[0x24] = wram_bank
        out += block
    if v < 5:
        out.append(ie)

    # Timer.
    timer_at = len(out)
    copy(8, 5)
    if div is not None and v >= 5:
        out[timer_at] = div
    copy(1, 20)
    copy(8, 12)
    copy(8, 13)

    # Cartridge (through the end, less joypad, serial, Super GB).
    cart_type = rom[0x147]
    cart_len = len(state) - r.pos - 2 - 36 - SGB_LEN
    if cart_type in RTC_TYPES and v < 21:
        raise ValueError("clock blocks before version 21 depend on the wall clock")
    if cart_type in MBC1_TYPES:
        copy(cart_len - 2)
        copy(2, 3)
    else:
        copy(cart_len)

    copy(2, 7)  # joypad
    copy(36, 15)  # serial
    copy(SGB_LEN, 23)
    if r.pos != len(state):
        raise ValueError("state longer than its layout")
    return bytes(out)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    rom_path, state_in, version, state_out = argv
    with open(rom_path, "rb") as f:
        rom = f.read()
    with open(state_in, "rb") as f:
        state = f.read()
    with open(state_out, "wb") as f:
        f.write(convert(rom, state, int(version)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
