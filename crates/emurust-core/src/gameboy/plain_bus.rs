//! The bus as [`GameBoy::run_plain`](super::GameBoy) drives it: the clock, the instruction in
//! flight (its start and opcode) and whether to stop (`limit`) live in this wrapper, a local the compiler keeps in registers, instead of in [`SystemBus`]'s fields, which
//! every M-cycle used to load and store. They are handed to the system bus only before a call
//! that can observe them (an access outside cartridge ROM, work RAM and HRAM) and when the run
//! ends, so every device sees exactly what it saw before.

use super::{SystemBus, BAIL_EI, BAIL_END};
use crate::cpu::Bus;

pub(super) struct PlainBus<'a> {
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

impl<'a> PlainBus<'a> {
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
impl Bus for PlainBus<'_> {
    #[inline(always)]
    fn fetch(&mut self, addr: u16) -> u8 {
        self.cycles += 4;
        match self.bus.rom_window.fetch(addr) {
            Some(v) => {
                debug_assert_eq!(v, self.bus.cart.read_rom(addr));
                v
            }
            None => {
                self.store();
                let v = self.bus.fetch_slow(addr);
                self.reload();
                v
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
        self.store_for_access();
        let v = self.bus.read_slow(addr);
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
        self.store_for_access();
        self.bus.write_slow(addr, value);
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
    fn reti(&mut self) {
        // As `SystemBus::reti`.
        self.bus.bail = if self.bus.pending_interrupts() != 0 {
            BAIL_END
        } else {
            0
        };
        self.reload();
    }
}
