"""Differential timing oracle for the LCD: PyBoy 2.8.1's own LCD object, stepped directly.

PyBoy's LCD class is plain Python in core/lcd.py (the compiled module hides its state),
so this script loads that source file as a module and drives one LCD instance with a
random but realistic sequence of operations: catch-up ticks at the moments PyBoy's
motherboard would pick (slices of max(4, min(cycles to interrupt, cycles to frame,
something else)) plus an instruction-sized overshoot), register reads and writes, timed
and untimed VRAM/OAM accesses, render on/off, frame boundaries. The calling glue around
the LCD (what the motherboard does on each access) is re-stated here from PyBoy 2.8.1's
documented behaviour so that the recorded results are those the real system would see.

After every operation the observable state is recorded: the access result, interrupt
bits raised, LY, STAT, mode, cycles to interrupt, cycles to frame, frame_done; now and
then the whole screen. The Rust test `lcd::tests::pyboy_timing_trace` replays the file
(environment variable EMURUST_LCD_TRACE) and compares everything.

Note: pure-Python integers do not wrap like the compiled module's uint64 fields; the
trace never ticks the LCD at an earlier cycle than before, so that difference
never shows (the compiled module wraps; `Lcd::tick` wraps the same way).

Usage: python tools/lcd_timing_trace.py OUT.txt [ops] [seed]
After a header line, the initial VRAM and OAM as hex lines, then
lines "op a b c d ; result irq ly stat mode to_interrupt to_frame frame_done"
"S <hex RGBA>" for screens and "P <hex> <hex>" for PyBoy's save-state sections.
"""

import importlib.util
import os
import random
import sys

import pyboy

SRC = os.path.join(os.path.dirname(pyboy.__file__), "core", "lcd.py")
GREY = (0xFFFFFF, 0x999999, 0x555555, 0x000000)

TICK, WREG, RREG, RVRAM, WVRAM, ROAM, WOAM, RENDER, NEWFRAME, SAVELOAD, SCREEN = range(11)


def load_oracle():
    spec = importlib.util.spec_from_file_location("pyboy_lcd_source", SRC)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Glue:
    """What PyBoy's motherboard does around the LCD for each kind of access."""

    def __init__(self, mod):
        self.lcd = mod.LCD(False, False, GREY, None)
        self.irq = 0

    def tick(self, now):
        self.irq |= self.lcd.tick(now)

    def write_reg(self, addr, value, now):
        lcd = self.lcd
        self.tick(now)
        if addr == 0xFF40:
            self.irq |= lcd.set_lcdc(value)
        elif addr == 0xFF41:
            self.irq |= lcd._STAT.set(value)
        elif addr == 0xFF42:
            lcd.SCY = value
        elif addr == 0xFF43:
            lcd.SCX = value
        elif addr == 0xFF45:
            lcd.LYC = value
            if lcd._LCDC.lcd_enable:
                self.irq |= lcd._STAT.update_LYC(lcd.LYC, lcd.LY)
            else:
                lcd.lyc_changed_while_disabled = True
        elif addr == 0xFF47:
            lcd.BGP.set(value)
        elif addr == 0xFF48:
            lcd.OBP0.set(value)
        elif addr == 0xFF49:
            lcd.OBP1.set(value)
        elif addr == 0xFF4A:
            lcd.WY = value
        elif addr == 0xFF4B:
            lcd.WX = value

    def read_reg(self, addr, now, offset):
        lcd = self.lcd
        self.tick(now + offset)
        if addr == 0xFF41:
            v = lcd._STAT.value
            if lcd.stat_mode_override:
                lcd.stat_mode_override = False
                v &= 0xFC
            return v
        return {
            0xFF40: lambda: lcd._LCDC.value,
            0xFF42: lambda: lcd.SCY,
            0xFF43: lambda: lcd.SCX,
            0xFF44: lambda: lcd.LY,
            0xFF45: lambda: lcd.LYC,
            0xFF47: lambda: lcd.BGP.get(),
            0xFF48: lambda: lcd.OBP0.get(),
            0xFF49: lambda: lcd.OBP1.get(),
            0xFF4A: lambda: lcd.WY,
            0xFF4B: lambda: lcd.WX,
        }[addr]()

    def near_target(self):
        lcd = self.lcd
        return lcd.clock <= lcd.clock_target and lcd.clock_target - lcd.clock <= 4

    def read_vram(self, addr, now, offset):
        lcd = self.lcd
        if offset:
            self.tick(now + offset)
            if lcd._LCDC.lcd_enable and (lcd._STAT._mode == 3 or (lcd._STAT._mode == 2 and self.near_target())):
                return 0xFF
        return lcd.VRAM0[addr - 0x8000]

    def write_vram(self, addr, value, now, offset):
        lcd = self.lcd
        if offset:
            self.tick(now + offset)
            if lcd._LCDC.lcd_enable and lcd._STAT._mode == 3:
                return 1
        lcd.VRAM0[addr - 0x8000] = value
        if addr < 0x9800:
            lcd.renderer.invalidate_tile(((addr & 0xFFF0) - 0x8000) // 16, 0)
        return 0

    def read_oam(self, addr, now, offset):
        lcd = self.lcd
        if offset:
            self.tick(now + offset)
            if lcd._LCDC.lcd_enable and (lcd._STAT._mode in (2, 3) or lcd._is_startup_mode2_delay()):
                return 0xFF
        return lcd.OAM[addr - 0xFE00]

    def write_oam(self, addr, value, now, offset):
        lcd = self.lcd
        if offset:
            self.tick(now + offset)
            mode = lcd._STAT._mode
            if lcd._LCDC.lcd_enable and (mode == 3 or (mode == 2 and not (lcd.first_frame and self.near_target()))):
                return 1
        lcd.OAM[addr - 0xFE00] = value
        return 0

    def pyboy_sections(self):
        """PyBoy's own save-state sections of this LCD and its renderer."""

        class Sink:
            def __init__(self):
                self.data = bytearray()

            def write(self, b):
                self.data.append(int(b))

            def write_16bit(self, v):
                self.data += int(v).to_bytes(2, "little")

            def write_32bit(self, v):
                self.data += int(v).to_bytes(4, "little")

            def write_64bit(self, v):
                self.data += int(v).to_bytes(8, "little")

        a, b = Sink(), Sink()
        self.lcd.save_state(a)
        self.lcd.renderer.save_state(b)
        return bytes(a.data), bytes(b.data)

    def screen(self):
        return bytes(self.lcd.renderer._screenbuffer_raw)


def main():
    out = sys.argv[1]
    n_ops = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    g = Glue(load_oracle())
    lcd = g.lcd
    # Some tile data and a few objects so that object penalties and pictures vary.
    for i in range(0x2000):
        lcd.VRAM0[i] = rng.getrandbits(8)
    lcd.renderer.clear_cache()
    for i in range(0xA0):
        lcd.OAM[i] = rng.choice([rng.getrandbits(8), rng.randrange(16, 40), rng.randrange(0, 176)])

    now = 0
    lines = [bytes(lcd.VRAM0).hex(), bytes(lcd.OAM).hex()]

    def record(op, args, result):
        lines.append(
            "%d %s ; %d %d %d %d %d %d %d %d"
            % (
                op,
                " ".join(str(a) for a in args),
                result,
                g.irq,
                lcd.LY,
                lcd._STAT.value,
                lcd._STAT._mode,
                lcd._cycles_to_interrupt,
                lcd._cycles_to_frame,
                int(bool(lcd.frame_done)),
            )
        )
        g.irq = 0

    regs = [0xFF40, 0xFF41, 0xFF42, 0xFF43, 0xFF45, 0xFF47, 0xFF48, 0xFF49, 0xFF4A, 0xFF4B]
    lcd_on_bias = 0.99
    for _ in range(n_ops):
        r = rng.random()
        if r < 0.55:
            other = rng.choice([rng.randrange(4, 200), 1 << 20])
            slice_ = max(4, min(lcd._cycles_to_interrupt, lcd._cycles_to_frame, other))
            now += slice_ + rng.choice([0, 0, 0, 4, 8, 12, 16, 20])
            g.tick(now)
            record(TICK, [now, 0, 0, 0], 0)
        elif r < 0.70:
            addr = rng.choice(regs)
            if addr == 0xFF40:
                v = rng.getrandbits(8)
                v = v | 0x80 if rng.random() < lcd_on_bias else v & 0x7F
                if not lcd._LCDC.lcd_enable and rng.random() < 0.5:
                    v |= 0x80
            elif addr == 0xFF45:
                v = rng.choice([rng.randrange(0, 154), lcd.LY, (lcd.LY + 1) & 0xFF, rng.getrandbits(8)])
            else:
                v = rng.getrandbits(8)
            now += rng.choice([0, 4, 8, 12])
            g.write_reg(addr, v, now)
            record(WREG, [addr, v, now, 0], 0)
        elif r < 0.80:
            addr = rng.choice(regs + [0xFF44, 0xFF41, 0xFF41])
            off = rng.choice([0, 4, 8])
            now += rng.choice([0, 4, 8])
            v = g.read_reg(addr, now, off)
            record(RREG, [addr, now, off, 0], v)
            now += off  # later operations never tick the LCD backwards
        elif r < 0.85:
            addr = 0x8000 + rng.randrange(0x2000)
            off = rng.choice([0, 4, 4, 8])
            now += rng.choice([0, 4, 8])
            v = g.read_vram(addr, now, off)
            record(RVRAM, [addr, now, off, 0], v)
            now += off  # later operations never tick the LCD backwards
        elif r < 0.90:
            addr = 0x8000 + rng.randrange(0x2000)
            off = rng.choice([0, 4, 4, 8])
            v = rng.getrandbits(8)
            now += rng.choice([0, 4, 8])
            res = g.write_vram(addr, v, now, off)
            record(WVRAM, [addr, v, now, off], res)
            now += off
        elif r < 0.93:
            addr = 0xFE00 + rng.randrange(0xA0)
            off = rng.choice([0, 4, 4, 8])
            now += rng.choice([0, 4, 8])
            v = g.read_oam(addr, now, off)
            record(ROAM, [addr, now, off, 0], v)
            now += off  # later operations never tick the LCD backwards
        elif r < 0.96:
            addr = 0xFE00 + rng.randrange(0xA0)
            off = rng.choice([0, 4, 4, 8])
            v = rng.choice([rng.getrandbits(8), rng.randrange(16, 60)])
            now += rng.choice([0, 4, 8])
            res = g.write_oam(addr, v, now, off)
            record(WOAM, [addr, v, now, off], res)
            now += off
        elif r < 0.97:
            render = rng.random() < 0.7
            lcd.disable_renderer = not render
            record(RENDER, [int(render), 0, 0, 0], 0)
        elif r < 0.99:
            if lcd.frame_done:
                lcd.frame_done = False
            record(NEWFRAME, [0, 0, 0, 0], 0)
        elif r < 0.995:
            record(SAVELOAD, [0, 0, 0, 0], 0)
        elif r < 0.997:
            lcd_sec, ren_sec = g.pyboy_sections()
            lines.append("P %s %s" % (lcd_sec.hex(), ren_sec.hex()))
        else:
            lines.append("S " + g.screen().hex())
    lines.append("S " + g.screen().hex())
    with open(out, "w") as f:
        f.write("LCDTRACE1 %d\n" % seed)
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
