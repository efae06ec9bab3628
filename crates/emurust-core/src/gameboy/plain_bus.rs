//! The bus as [`GameBoy::run_plain`](super::GameBoy) drives it: the clock, the instruction in
//! flight (its start and opcode) and whether to stop (`limit`) live in this wrapper, a local
//! the compiler keeps in registers, instead of in [`SystemBus`]'s fields, which every M-cycle
//! used to load and store. They are handed to the system bus only before a call that can
//! observe them (an access the memory map must handle: not a fetch or read of cartridge ROM, nor
//! work RAM or HRAM) and when the run ends, so every device sees exactly what it saw before.

use super::short_loop::loop_back_hint;
use super::{SystemBus, BAIL_EI, BAIL_END, BAIL_RETARGET, BAIL_SHORT_LOOP};
use crate::cpu::Bus;

/// `DEFER_LCD`: the LCD's transitions may be deferred ([`SystemBus::lcd_deferred_until`]): the
/// slow paths check whether an access ends that. `TRACK_PREV`: the loop keeps the previous
/// instruction's start too, straight in [`SystemBus`]'s `prev_instr_start` (a store per
/// instruction: in a local here it took the loop a register and two moves per instruction).
pub(super) struct PlainBus<'a, const DEFER_LCD: bool, const TRACK_PREV: bool> {
    pub(super) bus: &'a mut SystemBus,
    /// [`SystemBus::cycles`].
    pub(super) cycles: u64,
    /// [`SystemBus`]'s `instr_start` and `opcode`.
    pub(super) instr_start: u64,
    opcode: u16,
    /// The slice's end while no bail flag is set, 0 once one is: the loop's one test per
    /// instruction (`cycles < limit`) covers both. The flags themselves stay in
    /// [`SystemBus`]'s `bail` (set rarely: no register carries them).
    pub(super) limit: u64,
    target: u64,
}

impl<'a, const DEFER_LCD: bool, const TRACK_PREV: bool> PlainBus<'a, DEFER_LCD, TRACK_PREV> {
    #[inline(always)]
    pub(super) fn new(bus: &'a mut SystemBus, target: u64) -> Self {
        // The slice loop clears the flags before each run.
        debug_assert_eq!(bus.bail, 0);
        PlainBus {
            limit: target,
            target,
            cycles: bus.cycles,
            instr_start: bus.instr_start,
            opcode: bus.opcode,
            bus,
        }
    }

    /// Hand the local state to the system bus (before a call that may observe it, and when
    /// the run ends). Not the opcode: only a data access looks at it (see
    /// [`PlainBus::store_for_access`]), so it is never carried from one instruction to the
    /// next.
    #[inline(always)]
    pub(super) fn store(&mut self) {
        let b = &mut *self.bus;
        b.cycles = self.cycles;
        b.instr_start = self.instr_start;
    }

    /// [`PlainBus::store`] before a data access, with the opcode its stamp depends on.
    #[inline(always)]
    fn store_for_access(&mut self) {
        self.store();
        self.bus.opcode = self.opcode;
    }

    /// [`SystemBus::data_access_stamp`] of the current M-cycle, from the local clock.
    #[inline(always)]
    fn data_access_stamp(&self) -> (u64, u64) {
        super::data_access_stamp(self.instr_start, self.cycles, self.opcode)
    }

    /// Take back what such a call may change: the bail flags. The clock and the instruction's
    /// start and opcode only change here.
    #[inline(always)]
    pub(super) fn reload(&mut self) {
        self.limit = if self.bus.bail != 0 { 0 } else { self.target };
    }

    /// Set bail flags (the loop stops after this instruction).
    #[inline(always)]
    pub(super) fn bail(&mut self, flags: u8) {
        self.bus.bail |= flags;
        self.limit = 0;
    }
}

/// The same accesses as `impl Bus for SystemBus`, with the same fast paths; the rest goes to
/// the same out-of-line code with the state stored first. No OAM DMA runs here (`run_plain`
/// is not entered during one, and the write to FF46 that starts one ends it), so HRAM needs
/// no DMA catch-up.
impl<const DEFER_LCD: bool, const TRACK_PREV: bool> Bus for PlainBus<'_, DEFER_LCD, TRACK_PREV> {
    #[inline(always)]
    fn fetch(&mut self, addr: u16) -> u8 {
        self.cycles += 4;
        match self.bus.rom_window.read(addr) {
            Some(v) => {
                debug_assert_eq!(v, self.bus.cart.read_rom(addr));
                v
            }
            None => {
                self.store();
                let v = self.bus.fetch_slow::<DEFER_LCD>(addr);
                self.reload();
                v
            }
        }
    }

    #[inline(always)]
    fn fetch_word(&mut self, addr: u16) -> u16 {
        match self.bus.rom_window.read_word(addr) {
            Some(v) => {
                self.cycles += 8;
                debug_assert_eq!(
                    v,
                    u16::from_le_bytes([
                        self.bus.cart.read_rom(addr),
                        self.bus.cart.read_rom(addr + 1)
                    ])
                );
                v
            }
            None => {
                let lo = self.fetch(addr);
                let hi = self.fetch(addr.wrapping_add(1));
                u16::from_le_bytes([lo, hi])
            }
        }
    }

    #[inline(always)]
    fn read(&mut self, addr: u16) -> u8 {
        self.cycles += 4;
        if addr.wrapping_sub(0xC000) < 0x2000 {
            return self.bus.wram[(addr & 0x1FFF) as usize];
        }
        if addr.wrapping_sub(0xFF80) < 0x7F {
            debug_assert!(!self.bus.dma.active);
            return self.bus.hram[(addr & 0x7F) as usize];
        }
        // Cartridge ROM (data tables): what the memory map reads there (no stamp needed),
        // without its call.
        if let Some(v) = self.bus.rom_window.read(addr) {
            debug_assert_eq!(v, self.bus.cart.read_rom(addr));
            return v;
        }
        self.store_for_access();
        let v = self.bus.read_slow::<DEFER_LCD>(addr);
        self.reload();
        v
    }

    #[inline(always)]
    fn write(&mut self, addr: u16, value: u8) {
        self.cycles += 4;
        if addr.wrapping_sub(0xC000) < 0x2000 {
            self.bus.wram[(addr & 0x1FFF) as usize] = value;
            return;
        }
        if addr.wrapping_sub(0xFF80) < 0x7F {
            debug_assert!(!self.bus.dma.active);
            self.bus.hram[(addr & 0x7F) as usize] = value;
            return;
        }
        // VRAM between the LCD's transitions: what the memory map's write does there
        // (`Lcd::write_vram_between_transitions`), at the same stamp, without its call. While
        // the LCD's transitions are deferred too: the write keeps the deferral, and with no
        // transition due by the write (the test), none is due by its instruction's start
        // either, so the replay it would run first has nothing to do.
        if addr.wrapping_sub(0x8000) < 0x2000 {
            let (now, offset) = self.data_access_stamp();
            if self
                .bus
                .lcd
                .write_vram_between_transitions(addr, value, now, offset)
            {
                return;
            }
        }
        self.store_for_access();
        self.bus.write_slow::<DEFER_LCD>(addr, value);
        self.reload();
    }

    #[inline(always)]
    fn idle(&mut self) {
        self.cycles += 4;
    }

    #[inline(always)]
    fn decoded(&mut self, opcode: u16) {
        self.opcode = opcode;
    }

    #[inline(always)]
    fn ei(&mut self) {
        self.bail(BAIL_EI);
    }

    #[inline(always)]
    fn branched_back(&mut self, head: u16, offset: u8) {
        // Offsets -8..=-3 only: the loops `short_loop` runs. The test of the head's opcode
        // reads ROM through the window (a loop elsewhere is not one of them).
        if offset.wrapping_add(8) < 6 {
            if let Some(op) = self.bus.rom_window.read(head) {
                if loop_back_hint(op, offset) && head != self.bus.short_loop_refused {
                    self.bail(BAIL_SHORT_LOOP);
                }
            }
        }
    }

    #[inline(always)]
    fn reti(&mut self) {
        // As `SystemBus::reti`.
        self.bus.bail = (self.bus.bail & BAIL_RETARGET)
            | if self.bus.pending_interrupts() != 0 {
                BAIL_END
            } else {
                0
            };
        self.reload();
    }
}

#[cfg(test)]
mod tests {
    use super::super::{GameBoy, Options, BAIL_EI, BAIL_END};
    use crate::apu::SoundOptions;
    use crate::cpu::Registers;
    use std::sync::Arc;

    /// A cartridge whose program at 0x150 loops (`JR -2`).
    fn rom() -> Arc<[u8]> {
        let mut rom = vec![0u8; 0x8000];
        rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]);
        rom[0x150..0x152].copy_from_slice(&[0x18, 0xFE]);
        rom[0x14D] = crate::cartridge::header::compute_header_checksum(&rom);
        rom.into()
    }

    /// What the two buses leave behind: registers, clock, bail flags (but EI's, which only
    /// `run_plain` clears itself), the times the devices were caught up to (the stamps of the
    /// accesses that reached them); and the machine state.
    fn outcome(gb: &GameBoy) -> (impl PartialEq + std::fmt::Debug, Vec<u8>) {
        let b = &gb.bus;
        let seen = (
            gb.cpu.r,
            (gb.cpu.locked, gb.cpu.halted, gb.cpu.ime, gb.cpu.ei_delay),
            (b.cycles, b.bail & !BAIL_EI, b.if_reg),
            (b.lcd.last_now(), b.timer.synced_at(), b.apu.caught_up_to()),
            b.serial.times(),
        );
        (seen, gb.save_state())
    }

    /// Every opcode, conditions taken or not, run once by `run_plain` (on [`PlainBus`]) and
    /// once by `execute_instruction` (on the system bus), from work RAM (so every fetch takes
    /// the slow path) with every memory operand outside work RAM and HRAM (VRAM, OAM, I/O
    /// registers: every data access takes the slow path and needs its stamp), at several
    /// points of a frame (the LCD's mode, which locks VRAM and OAM, depends on the stamps):
    /// both leave the same machine.
    #[test]
    fn plain_bus_and_system_bus_give_every_access_the_same_stamp() {
        let mut gb = GameBoy::new(rom(), None).unwrap();
        gb.tick(1, false, false);
        // Past VBlank (the frame ended at its start), to line 0.
        gb.bus.cycles += 4600;
        for start in 0..6u64 {
            // A quarter line on each time: OAM search, pixel transfer and HBlank, which lock
            // OAM and VRAM at different stamps.
            gb.bus.cycles += 116;
            gb.bus.lcd.tick(gb.bus.cycles);
            gb.bus.if_reg = 0;
            let state = gb.save_state();
            let mut m = GameBoy::new(rom(), None).unwrap();
            for opcode in 0..512u16 {
                // Z and C clear, then set: every condition taken once and not taken once.
                for f in [0x00, 0x90] {
                    let mut run = |plain: bool| {
                        m.load_state(&state).unwrap();
                        let code = if opcode >= 0x100 {
                            [0xCB, opcode as u8, 0]
                        } else {
                            // Immediates: FF44 (LY) for (nn) and (n) operands.
                            [opcode as u8, 0x44, 0xFF]
                        };
                        m.bus.wram[..3].copy_from_slice(&code);
                        m.cpu.r = Registers {
                            a: 0x5A,
                            f,
                            b: 0xFE,
                            c: 0x10,
                            d: 0xFF,
                            e: 0x41,
                            h: 0x80,
                            l: 0x20,
                            sp: 0x8100,
                            pc: 0xC000,
                        };
                        m.bus.bail = 0;
                        if plain {
                            let target = m.bus.cycles + 1;
                            m.run_plain::<true, false, false>(target);
                        } else {
                            m.execute_instruction();
                        }
                        outcome(&m)
                    };
                    let what = format!("opcode {opcode:#05x}, flags {f:#04x}, start {start}");
                    let (plain, general) = (run(true), run(false));
                    assert_eq!(plain.0, general.0, "{what}");
                    let differ = plain.1.iter().zip(&general.1).position(|(a, b)| a != b);
                    assert!(
                        plain.1 == general.1,
                        "{what}: states differ at byte {differ:?}"
                    );
                }
            }
        }
    }
    /// A 64 KiB MBC1 cartridge (4 banks) whose entry jumps to 0150, with `code` written into
    /// it before the header checksum is taken.
    fn mbc1_rom(code: impl FnOnce(&mut [u8])) -> Arc<[u8]> {
        let mut rom = vec![0u8; 0x10000];
        rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]);
        rom[0x147] = 0x01; // MBC1
        rom[0x148] = 0x01; // 64 KiB, 4 banks
        code(&mut rom);
        rom[0x14D] = crate::cartridge::header::compute_header_checksum(&rom);
        rom.into()
    }

    /// 16-bit immediates fetched from the ROM window: from one bank (one read for both bytes)
    /// and across the 3FFF/4000 boundary, where the second byte comes from the switched bank.
    #[test]
    fn word_immediates_across_the_bank_boundary() {
        let rom = mbc1_rom(|rom| {
            // 3FFB: LD HL,1234; 3FFE: LD BC,nn (low byte at 3FFF, high byte at 4000); 4001: JR -2.
            rom[0x3FFB..0x4000].copy_from_slice(&[0x21, 0x34, 0x12, 0x01, 0x78]);
            for bank in 1..4 {
                let at = bank * 0x4000;
                rom[at..at + 3].copy_from_slice(&[0x50 + bank as u8, 0x18, 0xFE]);
            }
        });
        let mut gb = GameBoy::new(rom, None).unwrap();
        let now = gb.bus.cycles;
        gb.bus.write_at(0x2000, 2, now, 0);
        gb.bus.bail = 0;
        gb.cpu.r.pc = 0x3FFB;
        let start = gb.bus.cycles;
        gb.run_plain::<true, false, false>(start + 24);
        assert_eq!(gb.bus.cycles, start + 24);
        assert_eq!(gb.cpu.r.pc, 0x4001);
        assert_eq!(gb.cpu.r.hl(), 0x1234);
        assert_eq!(gb.cpu.r.bc(), 0x5278, "the high byte from bank 2");
    }

    /// A ROM-bank switch by `LD (nn),A` goes on with the plain loop when the turn end PyBoy
    /// makes there would be light (the APU's part done at the write, and the next fetch from
    /// 4000-7FFF reads the new bank in the same run), and ends it otherwise.
    #[test]
    fn bank_switch_ends_the_run_only_when_the_turn_end_is_not_light() {
        let rom = mbc1_rom(|rom| {
            // 0150: LD A,2; LD (2000),A; JP 4000.
            rom[0x150..0x158].copy_from_slice(&[0x3E, 0x02, 0xEA, 0x00, 0x20, 0xC3, 0x00, 0x40]);
            for bank in 1..4 {
                // 4000 in bank n: LD B,0x50+n; JR -2.
                let at = bank * 0x4000;
                rom[at..at + 4].copy_from_slice(&[0x06, 0x50 + bank as u8, 0x18, 0xFE]);
            }
        });
        // (case, sound emulated, APU may lag, pending interrupt, run goes on)
        let cases = [
            ("sound off", false, false, false, true),
            ("sound on, APU may lag", true, true, false, true),
            (
                "sound on, APU catches up each turn",
                true,
                false,
                false,
                false,
            ),
            ("interrupt pending", false, false, true, false),
        ];
        for (case, emulated, may_lag, pending, goes_on) in cases {
            let options = Options {
                cgb: Some(false),
                sound: SoundOptions {
                    emulated,
                    ..SoundOptions::default()
                },
            };
            let mut gb = GameBoy::with_options(rom.clone(), None, options).unwrap();
            gb.bus.refresh_rom_window();
            gb.bus.apu_may_lag = may_lag;
            if pending {
                gb.bus.ie_reg = 0x04;
                gb.bus.if_reg = 0x04;
            }
            gb.cpu.r.pc = 0x150;
            let start = gb.bus.cycles;
            // 8 + 16 + 16 + 8 cycles: up to and including LD B,n in the switched bank.
            gb.run_plain::<true, false, false>(start + 48);
            if goes_on {
                assert_eq!(gb.bus.bail, 0, "{case}: the bank write ended the run");
                assert_eq!(gb.bus.cycles, start + 48, "{case}");
                assert_eq!(gb.cpu.r.pc, 0x4002, "{case}");
                assert_eq!(gb.cpu.r.b, 0x52, "{case}: fetched from bank 2");
            } else {
                assert_eq!(gb.bus.bail & BAIL_END, BAIL_END, "{case}: the run went on");
                assert_eq!(gb.bus.cycles, start + 24, "{case}");
                assert_eq!(gb.cpu.r.pc, 0x155, "{case}");
            }
        }
    }
}
