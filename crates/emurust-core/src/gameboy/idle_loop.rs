//! Idle-loop fast-forward: short busy-wait loops skipped whole iterations at a time.
//!
//! Many programs spin in a loop that polls a RAM flag (set by an interrupt handler), the
//! joypad or DIV until something changes. In PyBoy's timing model (see the module docs of
//! `gameboy`) nothing such a loop reads can change inside a scheduler slice except DIV:
//! interrupts are dispatched only at a slice's start, work RAM, HRAM, IE, IF and ROM change
//! only through CPU writes (none in such a loop), the joypad only between frames. So once the
//! CPU state at the loop's head repeats, every further iteration in the slice repeats it too,
//! and they can be counted instead of run: cycles, instruction count and PC trace advance as
//! the interpreter would have advanced them, the registers stay as they are.
//!
//! How a loop is found and proved:
//! 1. [`GameBoy::idle_loop_check`] runs every [`IDLE_CHECK_INTERVAL`] cycles of a slice (twice
//!    that after a few looks in a row skipped nothing: `GameBoy::look_interval`; and at its
//!    start when the PC is in the last loop skipped). The PC trace says whether the last
//!    instructions repeat with a period of at most [`MAX_LOOP_LEN`] and the next instruction
//!    is where that period starts.
//! 2. Every instruction of that period is decoded: only register operations, reads and
//!    jumps pass ([`read_kind`]); a loop with anything else, or a read of an unstable fixed
//!    address, is remembered as rejected (per ROM bank and address, [`LoopCache`]) and not
//!    decoded again.
//! 3. One iteration is interpreted instruction by instruction, each read's address checked
//!    before the instruction runs ([`stable_read`]: ROM, work RAM, HRAM, IE, IF, the joypad,
//!    DIV). If the registers at the head are as before the iteration (tried twice: the first
//!    iteration may still be settling), the iteration is a fixed point.
//! 4. Whole iterations are skipped up to the slice's end (each skipped instruction must start
//!    before it, as in the interpreter's loop), and for a loop reading DIV up to the cycle at
//!    which DIV next changes; the interpreter runs the rest (and the DIV case starts over).
//!
//! DIV reads catch the timer up, and skipping them is exact because the timer's syncs compose
//! (see `Timer::sync_if_due`) and the slice ends before any overflow. Anything unsure is left
//! to the interpreter: an OAM DMA or HDMA running, EI pending, breakpoints, any other I/O,
//! VRAM, OAM, cartridge RAM (clocks), code outside ROM and RAM.

use super::{GameBoy, PC_TRACE_LEN, PC_TRACE_MASK, SHORT_TRACE_LEAD};
use crate::cpu::Registers;

/// Cycles between two looks at the PC trace within a slice: a loop is found at most this
/// late; each look costs a few comparisons.
pub(super) const IDLE_CHECK_INTERVAL: u64 = 16384;

/// The shortest slice worth proving a loop idle at its start: that interprets one or two
/// iterations through the slower general path, which pays off only over longer stretches
/// (with the LCD on, PyBoy's slices end at every LCD mode change, 80-456 cycles). Resuming
/// a proven loop costs far less and is always tried.
const MIN_SKIP_SPAN: u64 = 512;

/// The fewest iterations a resumed loop must skip: checking that it may be resumed costs
/// about as much as interpreting an iteration or two (callgrind, the idle_* ROMs).
const MIN_RESUMED_ITERATIONS: u64 = 3;

/// The longest loop (in instructions) recognised; two periods must fit in the PC trace.
const MAX_LOOP_LEN: usize = 12;
const _: () = assert!(2 * MAX_LOOP_LEN < PC_TRACE_LEN);

/// Entries of the decoded-loop cache (direct-mapped).
const LOOP_CACHE_LEN: usize = 64;

/// How often each wait-loop fast path ran (debug statistics; not part of save states).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitLoopStats {
    /// Looks for an idle loop (`idle_loop_check` calls).
    pub idle_looks: u64,
    /// `run_poll_loop` recognised an LY/STAT polling loop.
    pub poll_loops: u64,
    /// `run_dma_wait_loop` recognised an OAM DMA wait loop.
    pub dma_wait_loops: u64,
    /// Idle-loop fast-forwards (each skipped at least one iteration).
    pub idle_skips: u64,
    /// Of those, the ones in loops that read DIV.
    pub idle_div_skips: u64,
    /// Of those, the ones in loops that read the joypad (FF00).
    pub idle_joypad_skips: u64,
    /// Of those, the ones that resumed a proven loop without interpreting it.
    pub idle_resumes: u64,
    /// Instructions skipped by idle-loop fast-forwards.
    pub idle_skipped_instructions: u64,
    /// Instructions of LY/STAT polling loops skipped as whole iterations (reads that would
    /// have returned the value the last one read).
    pub poll_skipped_instructions: u64,
    /// Busy loops simulated to see whether they may be skipped (`busy_loop`).
    pub busy_proofs: u64,
    /// Of those, the ones found to be fixed points.
    pub busy_loops: u64,
    /// Busy-loop fast-forwards (each skipped at least one iteration).
    pub busy_skips: u64,
    /// Instructions skipped by busy-loop fast-forwards.
    pub busy_skipped_instructions: u64,
    /// Of the busy-loop fast-forwards, the ones in counter loops (`counter_loop`).
    pub busy_counter_skips: u64,
    /// Short delay, fill and copy loops run without the interpreter (`short_loop`), and
    /// their instructions.
    pub short_loops: u64,
    pub short_loop_instructions: u64,
}

/// What the decoding of a loop in ROM found, by ROM bank and lowest address (ROM code
/// cannot change). A stale or colliding entry can only cost a skip or a decoding.
#[derive(Clone, Debug)]
pub(super) struct LoopCache([(u32, Decoded); LOOP_CACHE_LEN]);

/// See [`LoopCache`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decoded {
    /// An instruction that may not be skipped, or a read of an unstable fixed address.
    Rejected,
    /// Admitted; it may read DIV (proved only in long slices).
    MayReadDiv,
}

impl Default for LoopCache {
    fn default() -> Self {
        LoopCache([(u32::MAX, Decoded::Rejected); LOOP_CACHE_LEN])
    }
}

impl LoopCache {
    fn slot(key: u32) -> usize {
        (key ^ (key >> 7)) as usize % LOOP_CACHE_LEN
    }
    fn get(&self, key: u32) -> Option<Decoded> {
        let (k, d) = self.0[Self::slot(key)];
        (k == key).then_some(d)
    }
    fn insert(&mut self, key: u32, decoded: Decoded) {
        self.0[Self::slot(key)] = (key, decoded);
    }
}

/// Where an instruction admitted in an idle loop reads memory (besides its opcode and
/// operand bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadKind {
    None,
    Hl,
    Bc,
    De,
    /// `LD A,(nn)`.
    Imm16,
    /// `LDH A,(n)`.
    HighImm,
    /// `LD A,(C)`.
    HighC,
}

/// What the instruction `op` (with `cb`, the byte after a 0xCB prefix) reads, or `None`
/// when it may not be part of an idle loop: memory writes, the stack, calls and returns,
/// EI/DI/HALT/STOP, illegal opcodes. 16-bit register arithmetic and jumps within registers
/// are fine (a loop that changes a register fails the fixed-point test).
fn read_kind(op: u8, cb: u8) -> Option<ReadKind> {
    use ReadKind::*;
    let kind = match op {
        0x00 | 0x07 | 0x0F | 0x17 | 0x1F | 0x27 | 0x2F | 0x37 | 0x3F => None,
        0x01 | 0x11 | 0x21 | 0x31 => None,
        0x03 | 0x13 | 0x23 | 0x33 | 0x0B | 0x1B | 0x2B | 0x3B => None,
        0x09 | 0x19 | 0x29 | 0x39 => None,
        0x0A => Bc,
        0x1A => De,
        0x2A | 0x3A => Hl,
        0x18 | 0x20 | 0x28 | 0x30 | 0x38 => None,
        // INC r, DEC r, LD r,n (not (HL): they write).
        _ if op < 0x40 && matches!(op & 7, 4..=6) => {
            if (op >> 3) & 7 == 6 {
                return Option::None;
            }
            None
        }
        0x76 => return Option::None,
        0x70..=0x77 => return Option::None,
        0x40..=0xBF => {
            if op & 7 == 6 {
                Hl
            } else {
                None
            }
        }
        0xC2 | 0xC3 | 0xCA | 0xD2 | 0xDA | 0xE9 => None,
        0xC6 | 0xCE | 0xD6 | 0xDE | 0xE6 | 0xEE | 0xF6 | 0xFE => None,
        0xE8 | 0xF8 | 0xF9 => None,
        0xF0 => HighImm,
        0xF2 => HighC,
        0xFA => Imm16,
        0xCB => match (cb >> 6, cb & 7) {
            (1, 6) => Hl,
            (_, 6) => return Option::None,
            _ => None,
        },
        _ => return Option::None,
    };
    Some(kind)
}

/// What a read in an idle loop may see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// Constant within a slice while the loop writes nothing.
    Fixed,
    /// The joypad: constant within a frame (the host sets buttons between frames).
    Joypad,
    /// DIV: changes every 256 cycles.
    Div,
}

/// The source of a read of `addr`, or `None` when a read there could change within the
/// slice or has effects beyond catching a device up (VRAM, OAM, cartridge RAM, the LCD, the
/// APU, the serial port, TIMA, CGB registers).
fn stable_read(addr: u16) -> Option<Source> {
    match addr {
        0x0000..=0x7FFF | 0xC000..=0xFDFF | 0xFEA0..=0xFEFF | 0xFF80..=0xFFFF => {
            Some(Source::Fixed)
        }
        0xFF0F => Some(Source::Fixed),
        0xFF00 => Some(Source::Joypad),
        0xFF04 => Some(Source::Div),
        _ => None,
    }
}

/// Where code may run from in an idle loop: opcode fetches there have no effects.
fn plain_code(pc: u16) -> bool {
    matches!(pc, 0x0000..=0x7FFF | 0xC000..=0xFDFF | 0xFF80..=0xFFFE)
}

/// What a look for an idle loop found (for [`GameBoy::loop_census`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LoopVerdict {
    /// The PC trace does not end in a short repeating loop.
    NoLoop,
    /// A loop with an instruction that may not be skipped (a write, a call, ...).
    Rejected,
    /// A loop that reads an unstable source, changes a register every iteration, or did
    /// not fit in the slice.
    NotIdle,
    /// Iterations were skipped.
    Skipped,
    /// The slice ended before the loop was proved idle (the next slice looks again).
    OutOfTime,
}

/// The last loop proved idle, as its interpreted iteration found it: enough to resume it in
/// a later slice without interpreting (see [`GameBoy::resume_idle_loop`]).
#[derive(Clone, Debug, Default)]
pub(super) struct IdlePlan {
    /// Instructions in the loop (0: no plan).
    len: usize,
    /// Their addresses, the registers before each, and the cycles each took.
    pcs: [u16; MAX_LOOP_LEN],
    regs: [Registers; MAX_LOOP_LEN],
    /// The memory reads: address and value (at most one per instruction).
    reads: [(u16, u8); MAX_LOOP_LEN],
    read_count: usize,
    cycles: u64,
    /// The first three bytes at each instruction (plans exist only for code in ROM; these
    /// are read through the mapped banks, so a bank switch or an overridden ROM byte shows).
    code: [[u8; 3]; MAX_LOOP_LEN],
    joypad: bool,
}

/// One interpreted iteration of a candidate loop.
struct Iteration {
    /// Cycles it took.
    cycles: u64,
    /// Whether it read the joypad.
    joypad: bool,
    /// Its last DIV read: when (the timer's sync time) and the end of the 256-cycle window
    /// in which DIV keeps the value it read; `None` without DIV reads.
    div: Option<(u64, u64)>,
    /// What resuming the loop later needs.
    plan: IdlePlan,
}

impl GameBoy {
    /// The hook in the slice loop: look for an idle loop at the PC and skip its iterations
    /// up to `target`, else for a busy loop (`busy_loop`) to skip across turns when `turns`
    /// (a `run_frame` slice). `inside`: the look is not at the slice's start. Returns the
    /// cycle of the next look.
    #[inline(never)]
    pub(super) fn idle_loop_check(&mut self, target: u64, inside: bool, turns: bool) -> u64 {
        self.wait_loop_stats.idle_looks += 1;
        let hdma = self.bus.cgb && self.bus.cgbx.hdma.active;
        if self.may_run_wait_loop() && !self.bus.dma.active && !hdma && !self.cpu.locked {
            let pc = self.cpu.r.pc;
            let mut untraced = false;
            let mut verdict = if self.resume_idle_loop(target) {
                LoopVerdict::Skipped
            } else if self.instructions - self.pc_trace_from < 2 * MAX_LOOP_LEN as u64 {
                // The plain loop ran untraced (see `TRACE_LEAD`) until too recently to say.
                untraced = true;
                LoopVerdict::NoLoop
            } else {
                match self.trace_period() {
                    Some(len) => self.fast_forward_loop(len, target),
                    None => LoopVerdict::NoLoop,
                }
            };
            if matches!(verdict, LoopVerdict::NoLoop | LoopVerdict::Rejected)
                && !untraced
                && self.busy_loop_look(turns)
            {
                verdict = LoopVerdict::Skipped;
            }
            // Slice starts follow interrupts: only the looks inside a running slice are
            // unbiased samples of the PC.
            if let Some(census) = self.loop_census.as_mut().filter(|_| inside) {
                *census.entry((pc, verdict)).or_insert(0) += 1;
            }
            if !untraced {
                self.count_look(verdict == LoopVerdict::Skipped);
            }
            // One retry at the next slice's start: slices can stay too short for a proof
            // (Pokemon Red's battle: 8-50 cycles), and proofs cost time.
            let retry = verdict == LoopVerdict::OutOfTime && !self.idle_retry;
            self.idle_retry = retry;
            if retry {
                return self.bus.cycles;
            }
            if untraced {
                // Look again as soon as the trace reaches back far enough: the slice loop
                // traces from now on (the look is nearer than `TRACE_LEAD`).
                return self.bus.cycles + SHORT_TRACE_LEAD;
            }
        }
        self.bus.cycles + self.busy_look_interval()
    }

    /// The cycle of a slice's first look (the slice ends at `target`): now if the PC is in
    /// the last loop proved idle and the slice is long enough to skip a few of its
    /// iterations (the slice resumes it), else the one the last slice planned (at most an
    /// interval on: a loaded state may have put the clock back).
    #[inline]
    pub(super) fn first_idle_check(&self, target: u64, planned: u64) -> u64 {
        let (low, high, span) = self.last_idle_loop;
        let now = self.bus.cycles;
        // An interrupt dispatched at the slice's start can take the clock past a short slice's
        // end (20 cycles against a budget of 4): nothing runs then, and nothing is resumed.
        // `target - now > span`, where `now` may be past `target`.
        if target > now + span && (low..=high).contains(&self.cpu.r.pc) {
            now
        } else {
            planned.min(now + self.look_interval())
        }
    }

    /// The period of the PC trace's end, if its last two periods (at most [`MAX_LOOP_LEN`]
    /// instructions each) are the same and the next instruction starts the next one.
    fn trace_period(&self) -> Option<usize> {
        // The caller checked that the trace is complete that far back.
        debug_assert!(self.instructions - self.pc_trace_from >= 2 * MAX_LOOP_LEN as u64);
        let back = |k: usize| self.traced_pc_back(k);
        let pc = self.cpu.r.pc;
        let len = (1..=MAX_LOOP_LEN).find(|&k| back(k) == pc)?;
        (1..=len).all(|k| back(k) == back(k + len)).then_some(len)
    }

    /// Prove the loop of `len` instructions at the PC idle and skip its iterations.
    fn fast_forward_loop(&mut self, len: usize, target: u64) -> LoopVerdict {
        let n = self.instructions as usize;
        let pcs: [u16; MAX_LOOP_LEN] =
            std::array::from_fn(|k| self.pc_trace[(n + k).wrapping_sub(len) & PC_TRACE_MASK]);
        let pcs = &pcs[..len];
        let key = self.loop_key(pcs);
        let short = target - self.bus.cycles < MIN_SKIP_SPAN;
        match key.and_then(|k| self.loop_cache.get(k)) {
            Some(Decoded::Rejected) => return LoopVerdict::Rejected,
            Some(Decoded::MayReadDiv) if short => return LoopVerdict::NotIdle,
            _ => {}
        }
        // The instructions, and the reads whose address is in the code: a loop with an
        // unstable one is rejected for good; one that reads DIV is proved only in a long
        // enough slice (DIV changes every 256 cycles; register-addressed reads are checked
        // as the iteration runs).
        let mut may_read_div = false;
        let admitted = pcs.iter().all(|&pc| {
            let byte = |k: u16| self.bus.peek(pc.wrapping_add(k));
            let fixed_addr = match read_kind(byte(0), byte(1)) {
                _ if !plain_code(pc) => return false,
                None => return false,
                Some(ReadKind::HighImm) => 0xFF00 | byte(1) as u16,
                Some(ReadKind::Imm16) => u16::from_le_bytes([byte(1), byte(2)]),
                // Register-addressed: checked when the iteration runs.
                Some(_) => return true,
            };
            match stable_read(fixed_addr) {
                None => false,
                Some(source) => {
                    may_read_div |= source == Source::Div;
                    true
                }
            }
        });
        if !admitted {
            if let Some(k) = key {
                self.loop_cache.insert(k, Decoded::Rejected);
            }
            return LoopVerdict::Rejected;
        }
        if may_read_div {
            if let Some(k) = key {
                self.loop_cache.insert(k, Decoded::MayReadDiv);
            }
            if short {
                return LoopVerdict::NotIdle;
            }
        }
        // Each round: interpret iterations until one leaves the registers as it found them,
        // then skip. Only a DIV window cuts a skip short of the slice's end; then the next
        // round interprets past DIV's change.
        let mut verdict = LoopVerdict::NotIdle;
        loop {
            let Some(it) = self.fixed_point_iteration(len, key, target) else {
                // Out of time (not of luck): look again at the next slice's start.
                if self.bus.cycles >= target && verdict == LoopVerdict::NotIdle {
                    return LoopVerdict::OutOfTime;
                }
                return verdict;
            };
            // Proved: a loop in ROM without DIV reads can be resumed from now on, even if
            // no iteration fits in what is left of this slice (slices are short while the
            // LCD is on).
            if it.div.is_none() {
                self.last_idle_loop = (
                    *pcs.iter().min().unwrap(),
                    *pcs.iter().max().unwrap(),
                    it.cycles * MIN_RESUMED_ITERATIONS,
                );
                self.idle_plan = match key {
                    Some(_) => {
                        let cart = &self.bus.cart;
                        let code = std::array::from_fn(|i| {
                            let pc = it.plan.pcs[i];
                            [0, 1, 2].map(|k| cart.read_rom(pc.wrapping_add(k) & 0x7FFF))
                        });
                        IdlePlan { code, ..it.plan }
                    }
                    None => IdlePlan::default(),
                };
            }
            let head = self.bus.cycles;
            // Skipped iterations must each start (and so run whole) before the slice's end,
            // and leave at least the head of the next to the interpreter.
            let mut iterations = target.saturating_sub(head + 1) / it.cycles;
            if let Some((last_read, window_end)) = it.div {
                // Iteration i (1 = the first skipped) reads DIV at `last_read + i * cycles`.
                iterations = iterations.min(window_end.saturating_sub(last_read + 1) / it.cycles);
            }
            if iterations == 0 {
                // The interpreter takes it from here (an iteration did not fit).
                if it.div.is_none() || head + 2 * it.cycles >= target {
                    return verdict;
                }
                continue;
            }
            verdict = LoopVerdict::Skipped;
            let skipped = self.skip_iterations(pcs, 0, iterations, it.cycles);
            let stats = &mut self.wait_loop_stats;
            stats.idle_skipped_instructions += skipped;
            stats.idle_skips += 1;
            stats.idle_div_skips += it.div.is_some() as u64;
            stats.idle_joypad_skips += it.joypad as u64;
            if it.div.is_none() {
                return verdict;
            }
        }
    }

    /// The decoded-loop cache's key of a loop in ROM: its bank (of the upper half) and
    /// lowest address; `None` for code in RAM, which may change.
    fn loop_key(&self, pcs: &[u16]) -> Option<u32> {
        let low = *pcs.iter().min()?;
        let high = *pcs.iter().max()?;
        if high >= 0x8000 || self.bus.boot_rom_mapped {
            return None;
        }
        let bank = if high >= 0x4000 {
            self.bus.cart.rom_bank_high() as u32
        } else {
            0
        };
        Some(bank << 16 | low as u32)
    }

    /// Interpret up to two iterations of the `len`-instruction loop at the PC, checking each
    /// instruction's reads before it runs; the first that leaves the registers as it found
    /// them (the PC back at the head), with all its DIV reads seeing one value, is returned.
    /// `None` when the loop may not be skipped or the slice ended.
    fn fixed_point_iteration(
        &mut self,
        len: usize,
        key: Option<u32>,
        target: u64,
    ) -> Option<Iteration> {
        for _ in 0..2 {
            let before: Registers = self.cpu.r;
            let start = self.bus.cycles;
            let mut plan = IdlePlan {
                len,
                ..IdlePlan::default()
            };
            // The 256-cycle window (start, end) of the first DIV read, and the last read's time.
            let mut div: Option<(u64, u64, u64)> = None;
            let mut div_changed = false;
            for j in 0..len {
                if self.bus.cycles >= target {
                    return None;
                }
                let read = match self.next_read_source() {
                    Ok(read) => read,
                    Err(unstable) => {
                        // A register-addressed read of an unstable address (LY through HL):
                        // such a loop keeps reading it.
                        if let (true, Some(k)) = (unstable, key) {
                            self.loop_cache.insert(k, Decoded::Rejected);
                        }
                        return None;
                    }
                };
                plan.pcs[j] = self.cpu.r.pc;
                plan.regs[j] = self.cpu.r;
                self.execute_instruction();
                if self.bus.bail != 0 || self.cpu.ei_delay != 0 || self.cpu.halted {
                    return None;
                }
                let Some((source, addr)) = read else {
                    continue;
                };
                plan.reads[plan.read_count] = (addr, self.bus.peek(addr));
                plan.read_count += 1;
                match source {
                    Source::Joypad => plan.joypad = true,
                    Source::Div => {
                        // As for loops with DIV at a fixed address (see fast_forward_loop).
                        if target - start < MIN_SKIP_SPAN {
                            return None;
                        }
                        let timer = &self.bus.timer;
                        // No reload under way, no stored DIV of a loaded state shown.
                        let overflow = timer.quiet_until()?;
                        if timer.div_shown().is_some() {
                            return None;
                        }
                        let at = timer.synced_at();
                        let low = timer.counter() as u64 & 0xFF;
                        let (w0, w1) = (at - low, (at + 256 - low).min(overflow));
                        match div {
                            Some((first, _, _)) if first != w0 => div_changed = true,
                            _ => {}
                        }
                        div = Some((div.map_or(w0, |d| d.0), w1, at));
                    }
                    Source::Fixed => {}
                }
            }
            let cycles = self.bus.cycles - start;
            if self.cpu.r == before && !div_changed && cycles > 0 {
                plan.cycles = cycles;
                return Some(Iteration {
                    cycles,
                    joypad: plan.joypad,
                    div: div.map(|(_, end, last_read)| (last_read, end)),
                    plan,
                });
            }
        }
        None
    }

    /// Resume the last loop proved idle without interpreting it: when the PC is in it with
    /// the registers it had there, its code bytes are the same and every value it read is
    /// still there, each iteration does what the proven one did. Skips whole iterations
    /// up to `target`; returns whether it did. Loops reading DIV have no plan.
    fn resume_idle_loop(&mut self, target: u64) -> bool {
        let plan = &self.idle_plan;
        let len = plan.len;
        if len == 0 {
            return false;
        }
        // Cheapest tests first: most slices with the LCD on are too short to be worth it.
        let iterations = target.saturating_sub(self.bus.cycles + 1) / plan.cycles;
        if iterations < MIN_RESUMED_ITERATIONS {
            return false;
        }
        let r = self.cpu.r;
        let Some(j) = (0..len).find(|&j| plan.pcs[j] == r.pc && plan.regs[j] == r) else {
            return false;
        };
        if !plan.reads[..plan.read_count]
            .iter()
            .all(|&(addr, value)| self.bus.peek(addr) == value)
        {
            return false;
        }
        let cart = &self.bus.cart;
        if self.bus.boot_rom_mapped
            || !(0..len).all(|i| {
                let pc = plan.pcs[i];
                plan.code[i] == [0, 1, 2].map(|k| cart.read_rom(pc.wrapping_add(k) & 0x7FFF))
            })
        {
            return false;
        }
        let (pcs, cycles, joypad) = (plan.pcs, plan.cycles, plan.joypad);
        let skipped = self.skip_iterations(&pcs[..len], j, iterations, cycles);
        let stats = &mut self.wait_loop_stats;
        stats.idle_skipped_instructions += skipped;
        stats.idle_skips += 1;
        stats.idle_resumes += 1;
        stats.idle_joypad_skips += joypad as u64;
        true
    }

    /// The source and address of the next instruction's memory read (`Ok(None)` without
    /// one), or why it may not run in an idle loop: `Err(true)` for a read of an unstable
    /// address, `Err(false)` for anything else.
    fn next_read_source(&self) -> Result<Option<(Source, u16)>, bool> {
        let r = &self.cpu.r;
        let pc = r.pc;
        if !plain_code(pc) {
            return Err(false);
        }
        let byte = |k: u16| self.bus.peek(pc.wrapping_add(k));
        let addr = match read_kind(byte(0), byte(1)).ok_or(false)? {
            ReadKind::None => return Ok(None),
            ReadKind::Hl => r.hl(),
            ReadKind::Bc => r.bc(),
            ReadKind::De => r.de(),
            ReadKind::Imm16 => u16::from_le_bytes([byte(1), byte(2)]),
            ReadKind::HighImm => 0xFF00 | byte(1) as u16,
            ReadKind::HighC => 0xFF00 | r.c as u16,
        };
        match stable_read(addr) {
            Some(source) => Ok(Some((source, addr))),
            None => Err(true),
        }
    }

    /// Account `iterations` iterations of the loop whose instructions are at `pcs`, from
    /// `pcs[first]` (at the PC), `cycles` each: what the interpreter's clock, instruction
    /// count and PC trace would show after running them (the registers do not change).
    /// Returns the instructions skipped, for the caller's statistic.
    pub(super) fn skip_iterations(
        &mut self,
        pcs: &[u16],
        first: usize,
        iterations: u64,
        cycles: u64,
    ) -> u64 {
        let len = pcs.len();
        let count = iterations * len as u64;
        let base = self.instructions;
        // Only the last PC_TRACE_LEN entries survive in the ring; the entry k after `base`
        // is `pcs[(first + k) mod len]`.
        let from = count.saturating_sub(PC_TRACE_LEN as u64);
        let mut at = (first + (from % len as u64) as usize) % len;
        for slot in (base + from) as usize..(base + count) as usize {
            self.pc_trace[slot & PC_TRACE_MASK] = pcs[at];
            at += 1;
            if at == len {
                at = 0;
            }
        }
        self.instructions = base + count;
        self.bus.cycles += iterations * cycles;
        count
    }
}
