//! Busy-loop fast-forward: a polling loop that calls routines, writes variables and switches
//! ROM banks, skipped whole iterations at a time across the scheduler's turns, up to the next
//! event that can change what it does.
//!
//! Games wait for a button in such loops (Pokemon Red's menus and text boxes:
//! `HandleMenuInput_`, about 73 instructions an iteration through `Joypad`'s bank-switching
//! call, some 70 iterations a frame, three quarters of the frame's instructions). While no
//! button changes, each iteration leaves the CPU's registers, work RAM, HRAM and the MBC as it
//! found them: every write rewrites the value already there (the stack, the loaded-bank
//! variable, the joypad variables), and the bank switches come back. The idle-loop
//! fast-forward (`idle_loop`) skips only write-free loops within one turn; this one skips
//! across turns, because in PyBoy's timing model (see `gameboy`) a turn's end changes nothing
//! such a loop sees unless an interrupt becomes pending:
//! - the LCD's transitions, the timer's and the idle serial port's catch-ups compose (a tick
//!   at a transition's own dot leaves the LCD as a turn ending at the next instruction
//!   boundary does), and the loop touches none of their registers;
//! - a bank switch's own turn end is light (no interrupt pending, no DMA, an APU whose
//!   turn-end catch-up only records the time) and only the last record counts;
//! - the host changes buttons and memory only between runs, and an interrupt is dispatched
//!   only at a turn's start after it became pending.
//!
//! The proof: when the PC is among the last [`MAX_BUSY_LEN`] traced instructions (a loop, and
//! not one remembered as failing), one iteration from the PC is simulated on a copy of the CPU through [`ShadowBus`], which reads
//! the real ROM, work RAM, HRAM, IE and joypad, keeps writes to work RAM and HRAM in an overlay,
//! makes ROM bank writes on the real cartridge (put back afterwards) and refuses every other
//! access. The iteration may be skipped only if it comes back to the PC with the same
//! registers, IME, banks and memory, without EI, DI, RETI, HALT or STOP. DMG only, code in ROM.
//!
//! The skip: whole iterations that end before the nearest of the LCD's next interrupt that IE
//! enables (or the frame's end), the timer's, the APU's and the serial port's next events; the
//! clock, the instruction count and the PC trace advance as the interpreter would have advanced
//! them, and the LCD's transitions in between run at their dots. The turn that follows starts
//! at the skip's end, in the loop's head, as after any instruction.

use super::{GameBoy, SystemBus, PC_TRACE_LEN};
use crate::cpu::{Bus, Step};

/// The longest loop skipped (instructions); a period must fit in the PC trace.
pub(super) const MAX_BUSY_LEN: usize = 120;
const _: () = assert!(MAX_BUSY_LEN < PC_TRACE_LEN);

/// The most distinct work RAM and HRAM addresses an iteration may write.
const MAX_OVERLAY: usize = 64;

/// The fewest cycles to the next event worth a proof: an iteration of Pokemon Red's menu loop
/// takes under 1,000 (a STAT interrupt on, for one, leaves only the LCD's next step).
const MIN_BUSY_SPAN: u64 = 1024;

/// Looks to wait before proving again a loop head whose proof failed.
const RETRY_AFTER_LOOKS: u8 = 16;
/// Loops whose failed proofs are remembered.
const REJECTED_SLOTS: usize = 4;

/// After a skip, the next looks come this many cycles apart (instead of every
/// `IDLE_CHECK_INTERVAL`), [`EAGER_LOOKS`] of them: the skip ends just before an interrupt,
/// whose handler often returns into the loop, which can then be skipped again at once.
const EAGER_LOOK_INTERVAL: u64 = 2048;
const EAGER_LOOKS: u8 = 16;

/// The recorded iteration of the last loop proved (see the module docs).
#[derive(Clone, Debug)]
pub(super) struct BusyLoop {
    /// Instructions in the iteration (0: none proved).
    len: usize,
    /// Their addresses, from the head (the PC where it was proved).
    pcs: [u16; MAX_BUSY_LEN],
    /// Cycles from the iteration's start to each instruction's end.
    ends: [u16; MAX_BUSY_LEN],
    /// The last loops whose proof failed (ROM bank << 16 | lowest address) and the looks left
    /// before each is tried again; `next_rejected` is the slot to fill next.
    rejected: [(u32, u8); REJECTED_SLOTS],
    next_rejected: usize,
    /// Looks left at [`EAGER_LOOK_INTERVAL`].
    eager_looks: u8,
}

impl Default for BusyLoop {
    fn default() -> Self {
        BusyLoop {
            len: 0,
            pcs: [0; MAX_BUSY_LEN],
            ends: [0; MAX_BUSY_LEN],
            rejected: [(u32::MAX, 0); REJECTED_SLOTS],
            next_rejected: 0,
            eager_looks: 0,
        }
    }
}

/// The bus of a proof (see the module docs). Its clock counts from the iteration's start.
struct ShadowBus<'a> {
    bus: &'a mut SystemBus,
    cycles: u64,
    opcode: u16,
    /// Cleared by an access or instruction a skipped loop may not contain.
    ok: bool,
    /// Work RAM and HRAM as the iteration left them: address and value.
    overlay: [(u16, u8); MAX_OVERLAY],
    overlay_len: usize,
}

impl ShadowBus<'_> {
    /// Work RAM or HRAM as the iteration left it so far.
    fn ram(&self, addr: u16) -> u8 {
        match self.overlay[..self.overlay_len]
            .iter()
            .find(|(a, _)| *a == addr)
        {
            Some(&(_, v)) => v,
            None => self.bus.peek(addr),
        }
    }
}

impl Bus for ShadowBus<'_> {
    fn fetch(&mut self, addr: u16) -> u8 {
        self.cycles += 4;
        if addr < 0x8000 {
            self.bus.peek(addr)
        } else {
            self.ok = false;
            0
        }
    }

    fn read(&mut self, addr: u16) -> u8 {
        self.cycles += 4;
        match addr {
            // (No boot ROM mapped: see `busy_skip_allowed`.)
            0x0000..=0x7FFF | 0xFF00 | 0xFFFF => self.bus.peek(addr),
            0xC000..=0xDFFF | 0xFF80..=0xFFFE => self.ram(addr),
            _ => {
                self.ok = false;
                0xFF
            }
        }
    }

    fn write(&mut self, addr: u16, value: u8) {
        self.cycles += 4;
        match addr {
            0xC000..=0xDFFF | 0xFF80..=0xFFFE => {
                let n = self.overlay_len;
                match self.overlay[..n].iter_mut().find(|(a, _)| *a == addr) {
                    Some(slot) => slot.1 = value,
                    None if n < MAX_OVERLAY => {
                        self.overlay[n] = (addr, value);
                        self.overlay_len += 1;
                    }
                    None => self.ok = false,
                }
            }
            // A bank switch by a store whose write is its last M-cycle: its turn end is then
            // light (`SystemBus::write_mbc_from_cpu`), and the slice goes on.
            0x2000..=0x3FFF
                if matches!(
                    self.opcode,
                    0x02 | 0x12 | 0x22 | 0x32 | 0x36 | 0x70..=0x75 | 0x77 | 0xEA
                ) =>
            {
                self.bus.cart.write_rom_bank_register(addr, value)
            }
            _ => self.ok = false,
        }
    }

    fn idle(&mut self) {
        self.cycles += 4;
    }

    fn decoded(&mut self, opcode: u16) {
        self.opcode = opcode;
    }

    fn reti(&mut self) {
        self.ok = false;
    }

    fn ei(&mut self) {
        self.ok = false;
    }
}

impl GameBoy {
    /// Cycles to the next look for an idle or busy loop (see [`EAGER_LOOK_INTERVAL`]).
    pub(super) fn busy_look_interval(&mut self) -> u64 {
        if self.busy.eager_looks == 0 {
            return super::idle_loop::IDLE_CHECK_INTERVAL;
        }
        self.busy.eager_looks -= 1;
        EAGER_LOOK_INTERVAL
    }

    /// Called from `idle_loop_check` when no write-free loop was found, in a `run_frame` slice
    /// whose turns' ends may be light (`turns`): if the PC trace ends in a loop of at most
    /// [`MAX_BUSY_LEN`] instructions whose iteration is a fixed point, skip its iterations up
    /// to the next event. Returns whether it skipped.
    pub(super) fn busy_loop_look(&mut self, turns: bool) -> bool {
        if !turns || !self.busy_skip_allowed() {
            return false;
        }
        let Some(len) = self.busy_trace_period() else {
            return false;
        };
        // The loop's key: its lowest address, and the ROM bank if that is in the switchable
        // half (the whole loop then is): the same at any point of the loop.
        let low = (1..=len).map(|k| self.traced_pc_back(k)).min().unwrap_or(0);
        let bank = if low >= 0x4000 {
            self.bus.cart.rom_bank_high() as u32
        } else {
            0
        };
        let key = bank << 16 | low as u32;
        let known = self.busy.rejected.iter().position(|&(k, _)| k == key);
        if let Some(i) = known {
            if self.busy.rejected[i].1 > 0 {
                self.busy.rejected[i].1 -= 1;
                return false;
            }
        }
        // The events first (cheap): no proof where not even a short iteration would fit.
        let Some(limit) = self.busy_skip_limit() else {
            return false;
        };
        if limit < self.bus.cycles + MIN_BUSY_SPAN {
            return false;
        }
        self.wait_loop_stats.busy_proofs += 1;
        if !self.prove_busy_loop() {
            self.busy.len = 0;
            let slot = known.unwrap_or(self.busy.next_rejected);
            self.busy.rejected[slot] = (key, RETRY_AFTER_LOOKS);
            if known.is_none() {
                self.busy.next_rejected = (slot + 1) % REJECTED_SLOTS;
            }
            return false;
        }
        self.wait_loop_stats.busy_loops += 1;
        self.skip_busy_iterations(limit)
    }

    /// What a skip across turns needs of the machine now (see the module docs).
    fn busy_skip_allowed(&self) -> bool {
        let bus = &self.bus;
        let cpu = &self.cpu;
        let apu = &bus.apu;
        self.light_turns
            && !bus.cgb
            && !bus.boot_rom_mapped
            && !bus.dma.active
            && bus.serial.idle()
            && bus.pending_interrupts() == 0
            && (!apu.emulated() || (bus.apu_may_lag && apu.catch_up_can_wait()))
            && !cpu.brk
            && !cpu.halted
            && !cpu.locked
            && cpu.ei_delay == 0
            && !self.break_hit
            && cpu.r.pc < 0x8000
    }

    /// Whether the PC is among the last [`MAX_BUSY_LEN`] traced instructions (the trace
    /// complete that far back), and the distance back to it: a loop worth a proof. (The proof
    /// alone decides: any iteration that comes back to the same registers and memory at the
    /// same PC is a fixed point, whatever its length.)
    fn busy_trace_period(&self) -> Option<usize> {
        let traced = self.instructions - self.pc_trace_from;
        let pc = self.cpu.r.pc;
        (1..=MAX_BUSY_LEN)
            .take_while(|&k| k as u64 <= traced)
            .find(|&k| self.traced_pc_back(k) == pc)
    }

    /// Simulate one iteration from the PC (see the module docs) into `self.busy`; true if it
    /// is a fixed point. Changes nothing of the machine.
    fn prove_busy_loop(&mut self) -> bool {
        let start = self.cpu.r;
        let saved_banks = self.bus.cart.bank_state();
        let mut cpu = self.cpu.clone();
        let plan = &mut self.busy;
        let mut shadow = ShadowBus {
            bus: &mut self.bus,
            cycles: 0,
            opcode: 0,
            ok: true,
            overlay: [(0, 0); MAX_OVERLAY],
            overlay_len: 0,
        };
        let mut pc = start.pc;
        let mut n = 0;
        let closed = loop {
            if n == MAX_BUSY_LEN {
                break false;
            }
            let at = pc;
            // (LD B,B is counted by the CPU as test ROMs' breakpoint: interpreted only.)
            if cpu.step_plain(&mut shadow, &mut pc) != Step::Normal
                || !shadow.ok
                || shadow.opcode == 0x40
            {
                break false;
            }
            plan.pcs[n] = at;
            plan.ends[n] = shadow.cycles as u16;
            n += 1;
            if pc == start.pc {
                cpu.r.pc = pc;
                break cpu.r == start;
            }
        };
        plan.len = n;
        // A loop that writes no RAM is left to the idle-loop fast-forward (`idle_loop`), which
        // skips a write-free one within the turn at less cost; this one would take it only
        // where that one's look came too early to see two periods.
        let writes = shadow.overlay_len > 0;
        let banks_back = shadow.bus.cart.bank_state() == saved_banks;
        let memory_back = shadow.overlay[..shadow.overlay_len]
            .iter()
            .all(|&(addr, v)| shadow.bus.peek(addr) == v);
        self.bus.cart.set_bank_state(saved_banks);
        closed && writes && banks_back && memory_back && cpu.ime == self.cpu.ime
    }

    /// The cycle before which an iteration of a proved loop may end to be skipped: the LCD's
    /// bound (its next interrupt that IE enables, or the frame's end), the timer's, the APU's
    /// and the serial port's next events; `None` when the LCD's state is left to the turns.
    fn busy_skip_limit(&self) -> Option<u64> {
        let bus = &self.bus;
        let lcd_bound = bus.lcd.busy_skip_bound(bus.ie_reg)?;
        Some(lcd_bound.min(bus.cycles.saturating_add(bus.other_devices_distance())))
    }

    /// Skip whole iterations of the proved loop (at its head, the PC) that end before `limit`
    /// ([`GameBoy::busy_skip_limit`]); true if at least one was.
    fn skip_busy_iterations(&mut self, limit: u64) -> bool {
        let len = self.busy.len;
        let cycles = self.busy.ends[len - 1] as u64;
        let now = self.bus.cycles;
        let iterations = limit.saturating_sub(now + 1) / cycles;
        if iterations == 0 {
            return false;
        }
        let end = now + iterations * cycles;
        let irq = self.bus.lcd.tick_transitions_upto(end);
        self.bus.if_reg |= irq;
        debug_assert_eq!(
            self.bus.pending_interrupts(),
            0,
            "an interrupt in a busy skip"
        );
        let pcs = self.busy.pcs;
        let skipped = self.skip_iterations(&pcs[..len], 0, iterations, cycles);
        // The last two skipped instructions' starts, as the interpreter leaves them.
        let ends = &self.busy.ends;
        let start_of = |i: usize| if i == 0 { 0 } else { ends[i - 1] as u64 };
        let iteration_start = end - cycles;
        self.bus.instr_start = iteration_start + start_of(len - 1);
        self.bus.prev_instr_start = if len > 1 {
            iteration_start + start_of(len - 2)
        } else {
            iteration_start - cycles
        };
        self.busy.eager_looks = EAGER_LOOKS;
        let stats = &mut self.wait_loop_stats;
        stats.busy_skips += 1;
        stats.busy_skipped_instructions += skipped;
        true
    }
}
