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
//! not one remembered as failing), one iteration from the PC is simulated on a copy of the
//! CPU through [`ShadowBus`], which reads the real ROM, work RAM, HRAM, IE and joypad, keeps writes to work RAM and HRAM in an overlay,
//! makes ROM bank writes on the real cartridge (put back afterwards) and refuses every other
//! access. The iteration may be skipped only if it comes back to the PC with the same
//! registers, IME, banks and memory, without EI, DI, RETI, HALT or STOP. DMG only, code in ROM.
//!
//! Counter loops (`counter_loop`): an iteration that comes back with one byte moved by one
//! (a text box's blink timer) and every other byte as it was is simulated a second time,
//! following what derives from that counter; it may be skipped for as many iterations as its
//! branches on the counter keep their outcome, and the skip writes the counter (and the stack
//! bytes where it pushed flags derived from it) as the last skipped iteration left them. A
//! proof that fails only because it started between such a push and its pop is tried again a
//! third of an iteration on.
//!
//! The skip: whole iterations that end before the nearest of the LCD's next interrupt that IE
//! enables (or the frame's end), the timer's, the APU's and the serial port's next events; the
//! clock, the instruction count and the PC trace advance as the interpreter would have advanced
//! them, and the LCD's transitions in between run at their dots. The turn that follows starts
//! at the skip's end, in the loop's head, as after any instruction.

use super::counter_loop::{CounterTrack, Effects, MAX_DERIVED_SLOTS};
use super::idle_loop::IDLE_CHECK_INTERVAL;
use super::{GameBoy, SystemBus, PC_TRACE_LEN};
use crate::cpu::{Bus, Step};

/// The longest loop skipped (instructions; Pokemon Red's text boxes wait in one of about 150);
/// a period must fit in the PC trace.
pub(super) const MAX_BUSY_LEN: usize = 250;
const _: () = assert!(MAX_BUSY_LEN < PC_TRACE_LEN);

/// The most distinct work RAM and HRAM addresses an iteration may write.
const MAX_OVERLAY: usize = 64;

/// The fewest cycles to the next event worth a proof: an iteration of Pokemon Red's menu loop
/// takes under 1,000 (a STAT interrupt on, for one, leaves only the LCD's next step).
const MIN_BUSY_SPAN: u64 = 1024;

/// Looks to wait before proving again a loop whose proof failed (see [`RejectedLoops`]).
const RETRY_MIN_LOOKS: u8 = 2;
const RETRY_MAX_LOOKS: u8 = 64;
/// Loops whose failed proofs are remembered (Pokemon Red's menus fail five at once).
const REJECTED_SLOTS: usize = 8;

/// After a skip, the next looks come this many cycles apart (instead of every
/// `IDLE_CHECK_INTERVAL`), [`EAGER_LOOKS`] of them: the skip ends just before an interrupt,
/// whose handler often returns into the loop, which can then be skipped again at once.
const EAGER_LOOK_INTERVAL: u64 = 2048;
const EAGER_LOOKS: u8 = 16;

/// Looks in a row that skipped nothing after which the interval between looks doubles (up to
/// [`MAX_LOOK_BACKOFF`] times): a game that never waits in a loop the looks can skip pays less
/// for them and for the PC trace before each (`TRACE_LEAD`); a skip brings the interval back.
const QUIET_LOOKS_PER_BACKOFF: u8 = 4;
const MAX_LOOK_BACKOFF: u8 = 1;

/// The recorded iteration of the last loop proved (see the module docs).
#[derive(Clone, Debug)]
pub(super) struct BusyLoop {
    /// Instructions in the iteration (0: none proved).
    len: usize,
    /// Their addresses, from the head (the PC where it was proved).
    pcs: [u16; MAX_BUSY_LEN],
    /// Cycles from the iteration's start to each instruction's end.
    ends: [u16; MAX_BUSY_LEN],
    /// The last loops whose proof failed, and when each is tried again.
    rejected: RejectedLoops,
    /// Looks left at [`EAGER_LOOK_INTERVAL`].
    eager_looks: u8,
    /// Looks in a row that skipped nothing (see [`QUIET_LOOKS_PER_BACKOFF`]).
    quiet_looks: u8,
    /// For a counter loop (`counter_loop`): its counter and what derives from it, and how many
    /// iterations from the PC take the proved one's path.
    counter: Option<(CounterTrack, u64)>,
    /// Looks at another point of a counter loop whose proof failed only for where it started
    /// ([`Proof::ElsewhereInLoop`]), and the cycles to the next.
    phase_retries: u8,
    retry_in: Option<u64>,
    /// The cycles of the last iteration simulated whole (the first pass of the last proof).
    period_cycles: u64,
    /// The counter the last counter loop's proof found: the loop's key (see
    /// [`GameBoy::busy_loop_look`]), the counter's address and its step. The next proof of
    /// that loop runs the second simulation first (see [`GameBoy::prove_busy_loop`]).
    last_counter: Option<(u32, u16, u8)>,
    /// [`ShadowBus::map`]'s memory (allocated at the first proof, all zero between proofs).
    map: Vec<u8>,
}

/// The loops whose last proof failed, by key (ROM bank << 16 | lowest address), each with the
/// looks to let pass before it is proved again. The first failure waits [`RETRY_MIN_LOOKS`],
/// each further one twice the last wait, up to [`RETRY_MAX_LOOKS`]; a proof that goes through
/// forgets the loop. Many failures are brief (Pokemon Red's text boxes: the blink timer at
/// its reload, a look that lands where a counter loop cannot be proved), and the loop is
/// skipped again a few looks later (the battle: 33% fewer host instructions than a fixed wait
/// of 16 looks); a loop that never passes costs a proof every [`RETRY_MAX_LOOKS`] looks.
#[derive(Clone, Debug)]
struct RejectedLoops {
    /// Key, looks left, the wait the last failure set.
    slots: [(u32, u8, u8); REJECTED_SLOTS],
    /// The slot a new key takes (round robin).
    next: usize,
}

impl Default for RejectedLoops {
    fn default() -> Self {
        RejectedLoops {
            slots: [(u32::MAX, 0, 0); REJECTED_SLOTS],
            next: 0,
        }
    }
}

impl RejectedLoops {
    fn find(&self, key: u32) -> Option<usize> {
        self.slots.iter().position(|&(k, _, _)| k == key)
    }

    /// A look at loop `key`: true if it must wait (the look counts towards the wait).
    fn waits(&mut self, key: u32) -> bool {
        match self.find(key) {
            Some(i) if self.slots[i].1 > 0 => {
                self.slots[i].1 -= 1;
                true
            }
            _ => false,
        }
    }

    fn failed(&mut self, key: u32) {
        let (slot, wait) = match self.find(key) {
            Some(i) => (i, self.slots[i].2.saturating_mul(2).min(RETRY_MAX_LOOKS)),
            None => {
                let i = self.next;
                self.next = (i + 1) % REJECTED_SLOTS;
                (i, RETRY_MIN_LOOKS)
            }
        };
        self.slots[slot] = (key, wait, wait);
    }

    fn passed(&mut self, key: u32) {
        if let Some(i) = self.find(key) {
            self.slots[i] = (u32::MAX, 0, 0);
        }
    }
}

/// What a proof found.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Proof {
    Proved,
    Refused,
    /// A counter loop, not provable from the PC: the iteration from here reads a value the
    /// last one derived from the counter (between a `PUSH AF` and its `POP AF`), or ends with
    /// one in a register, or the counter takes the other path within two iterations. Another
    /// point of the loop, a little later, may do.
    ElsewhereInLoop,
}

/// The last index of `x` in `run`: blocks tested whole without a branch per entry (the
/// compiler vectorises the test), the one holding it searched.
fn find_last(run: &[u16], x: u16) -> Option<usize> {
    const BLOCK: usize = 16;
    let mut end = run.len();
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let block = &run[start..end];
        if block.iter().fold(false, |any, &p| any | (p == x)) {
            return block.iter().rposition(|&p| p == x).map(|i| start + i);
        }
        end = start;
    }
    None
}

/// A counter loop's second simulation run before the first ([`GameBoy::prove_busy_loop`]):
/// for which counter (address, start, step), and what it found.
// A local of one proof, never stored: boxing the overlay would allocate in every proof.
#[allow(clippy::large_enum_variant)]
enum SecondPass {
    NotRun,
    Through((u16, u8, u8), CounterTrack, [(u16, u8); MAX_OVERLAY], usize),
    Failed((u16, u8, u8)),
}

/// Counter-loop proofs tried at other points of the loop before it is rejected.
const PHASE_RETRIES: u8 = 3;

impl Default for BusyLoop {
    fn default() -> Self {
        BusyLoop {
            len: 0,
            pcs: [0; MAX_BUSY_LEN],
            ends: [0; MAX_BUSY_LEN],
            rejected: RejectedLoops::default(),
            eager_looks: 0,
            quiet_looks: 0,
            counter: None,
            phase_retries: 0,
            retry_in: None,
            period_cycles: 0,
            last_counter: None,
            map: Vec::new(),
        }
    }
}

/// The bus of a proof (see the module docs). Its clock counts from the iteration's start.
/// `COUNTER`: the second simulation of a counter loop (`counter_loop`), which reports the
/// accesses to the counter and to the watched stack bytes and keeps each instruction's first
/// two bytes.
struct ShadowBus<'a, const COUNTER: bool> {
    bus: &'a mut SystemBus,
    cycles: u64,
    opcode: u16,
    /// Cleared by an access or instruction a skipped loop may not contain.
    ok: bool,
    /// Work RAM and HRAM as the iteration left them: address and value.
    overlay: [(u16, u8); MAX_OVERLAY],
    overlay_len: usize,
    /// Per work RAM and HRAM byte ([`ram_index`]): its overlay entry + 1 (0: none), and
    /// [`FIRST_READ`]. Cleared when the proof ends ([`ShadowBus::clear_map`]).
    map: &'a mut [u8],
    /// A counter loop's proof (`counter_loop`): the counter's address and the stack bytes
    /// holding a derived F, and the accesses to them by the current instruction.
    counter: Option<u16>,
    watched: [u16; MAX_DERIVED_SLOTS],
    watched_len: usize,
    counter_read: bool,
    counter_written: bool,
    slots_read: u8,
    slots_written: u8,
    /// Work RAM and HRAM bytes read before the iteration wrote them (counter loops only: a
    /// stack byte holding a derived F must not be one).
    first_reads: [u16; MAX_FIRST_READS],
    first_reads_len: usize,
    /// The current instruction's first two bytes as fetched (its opcode, and the byte after
    /// it where it has one): read where the CPU read them, before a bank switch it makes.
    fetched: [u8; 2],
    fetched_len: usize,
}

/// The most bytes a counter loop's iteration may read before writing them.
const MAX_FIRST_READS: usize = 48;

/// Work RAM (0..0x2000) and HRAM (0x2000..0x207F) as one index space ([`ShadowBus::map`]).
pub(super) const RAM_SPAN: usize = 0x2000 + 0x7F;
/// In [`ShadowBus::map`]: the byte was read before the iteration wrote it.
const FIRST_READ: u8 = 0x80;
const _: () = assert!(MAX_OVERLAY < FIRST_READ as usize);

/// The index of a work RAM (C000-DFFF) or HRAM (FF80-FFFE) address in [`RAM_SPAN`].
#[inline(always)]
fn ram_index(addr: u16) -> usize {
    if addr >= 0xFF80 {
        0x2000 + (addr - 0xFF80) as usize
    } else {
        (addr - 0xC000) as usize
    }
}

impl<'a, const COUNTER: bool> ShadowBus<'a, COUNTER> {
    fn new(bus: &'a mut SystemBus, map: &'a mut [u8], counter: Option<u16>) -> Self {
        debug_assert!(map.len() == RAM_SPAN && map.iter().all(|&m| m == 0));
        debug_assert_eq!(COUNTER, counter.is_some());
        ShadowBus {
            bus,
            cycles: 0,
            opcode: 0,
            ok: true,
            overlay: [(0, 0); MAX_OVERLAY],
            overlay_len: 0,
            map,
            counter,
            watched: [0; MAX_DERIVED_SLOTS],
            watched_len: 0,
            counter_read: false,
            counter_written: false,
            slots_read: 0,
            slots_written: 0,
            first_reads: [0; MAX_FIRST_READS],
            first_reads_len: 0,
            fetched: [0; 2],
            fetched_len: 0,
        }
    }

    /// A counter loop's proof: note a read of `addr` if the iteration has not written it.
    #[inline(always)]
    fn note_first_read(&mut self, addr: u16) {
        let i = ram_index(addr);
        if self.map[i] != 0 {
            return;
        }
        if self.first_reads_len == MAX_FIRST_READS {
            self.ok = false;
        } else {
            self.map[i] = FIRST_READ;
            self.first_reads[self.first_reads_len] = addr;
            self.first_reads_len += 1;
        }
    }

    /// Whether the iteration read `addr` (work RAM or HRAM) before writing it.
    fn read_first(&self, addr: u16) -> bool {
        self.map[ram_index(addr)] & FIRST_READ != 0
    }

    /// Leave [`ShadowBus::map`] all zero again.
    fn clear_map(&mut self) {
        for &(addr, _) in &self.overlay[..self.overlay_len] {
            self.map[ram_index(addr)] = 0;
        }
        for &addr in &self.first_reads[..self.first_reads_len] {
            self.map[ram_index(addr)] = 0;
        }
    }

    /// ROM as mapped now (the cartridge's banks may be switched by the iteration).
    #[inline(always)]
    fn rom(&self, addr: u16) -> u8 {
        match self.bus.rom_window.read(addr) {
            Some(v) => v,
            None => self.bus.peek(addr),
        }
    }

    /// Note an access to the counter or a watched stack byte (a counter loop's proof).
    #[inline(always)]
    fn watch(&mut self, addr: u16, write: bool) {
        if COUNTER {
            self.watch_counter(addr, write);
        }
    }

    #[inline(never)]
    fn watch_counter(&mut self, addr: u16, write: bool) {
        if self.counter == Some(addr) {
            if write {
                self.counter_written = true;
            } else {
                self.counter_read = true;
            }
        }
        for (i, &w) in self.watched[..self.watched_len].iter().enumerate() {
            if w == addr {
                if write {
                    self.slots_written |= 1 << i;
                } else {
                    self.slots_read |= 1 << i;
                }
            }
        }
    }

    /// Work RAM or HRAM as the iteration left it so far.
    #[inline(always)]
    fn ram(&self, addr: u16) -> u8 {
        let i = ram_index(addr);
        match (self.map[i] & !FIRST_READ) as usize {
            0 if i < 0x2000 => self.bus.wram[i],
            0 => self.bus.hram[i - 0x2000],
            k => self.overlay[k - 1].1,
        }
    }
}

impl<const COUNTER: bool> Bus for ShadowBus<'_, COUNTER> {
    #[inline(always)]
    fn fetch(&mut self, addr: u16) -> u8 {
        self.cycles += 4;
        if addr < 0x8000 {
            let v = self.rom(addr);
            if COUNTER && self.fetched_len < 2 {
                self.fetched[self.fetched_len] = v;
                self.fetched_len += 1;
            }
            v
        } else {
            self.ok = false;
            0
        }
    }

    #[inline(always)]
    fn read(&mut self, addr: u16) -> u8 {
        self.cycles += 4;
        self.watch(addr, false);
        match addr {
            // (No boot ROM mapped: see `busy_skip_allowed`.)
            0x0000..=0x7FFF => self.rom(addr),
            0xFF00 | 0xFFFF => self.bus.peek(addr),
            0xC000..=0xDFFF | 0xFF80..=0xFFFE => {
                if COUNTER {
                    self.note_first_read(addr);
                }
                self.ram(addr)
            }
            _ => {
                self.ok = false;
                0xFF
            }
        }
    }

    #[inline(always)]
    fn write(&mut self, addr: u16, value: u8) {
        self.cycles += 4;
        self.watch(addr, true);
        match addr {
            0xC000..=0xDFFF | 0xFF80..=0xFFFE => {
                let i = ram_index(addr);
                let n = self.overlay_len;
                match (self.map[i] & !FIRST_READ) as usize {
                    0 if n < MAX_OVERLAY => {
                        self.overlay[n] = (addr, value);
                        self.overlay_len += 1;
                        self.map[i] |= (n + 1) as u8;
                    }
                    0 => self.ok = false,
                    k => self.overlay[k - 1].1 = value,
                }
            }
            // A bank switch by a store whose write is its last M-cycle: its turn end is then
            // light (`SystemBus::write_mbc_from_cpu`), and the slice goes on.
            0x2000..=0x3FFF if super::store_ends_with_write(self.opcode) => {
                self.bus.cart.write_rom_bank_register(addr, value);
                self.bus.refresh_rom_window();
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
        if let Some(cycles) = self.busy.retry_in.take() {
            return cycles;
        }
        if self.busy.eager_looks == 0 {
            return self.look_interval();
        }
        self.busy.eager_looks -= 1;
        EAGER_LOOK_INTERVAL
    }

    /// The cycles between two looks when none is eager: [`IDLE_CHECK_INTERVAL`], doubled after
    /// every [`QUIET_LOOKS_PER_BACKOFF`] looks in a row that skipped nothing.
    pub(super) fn look_interval(&self) -> u64 {
        let backoff = (self.busy.quiet_looks / QUIET_LOOKS_PER_BACKOFF).min(MAX_LOOK_BACKOFF);
        IDLE_CHECK_INTERVAL << backoff
    }

    /// Count a look's outcome for [`GameBoy::look_interval`]: whether it skipped.
    pub(super) fn count_look(&mut self, skipped: bool) {
        self.busy.quiet_looks = if skipped {
            0
        } else {
            self.busy.quiet_looks.saturating_add(1)
        };
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
        if self.busy.rejected.waits(key) {
            return false;
        }
        // The events first (cheap): no proof where not even a short iteration would fit.
        let Some(limit) = self.busy_skip_limit() else {
            return false;
        };
        if limit < self.bus.cycles + MIN_BUSY_SPAN {
            return false;
        }
        self.wait_loop_stats.busy_proofs += 1;
        let proof = self.prove_busy_loop(key);
        if proof == Proof::ElsewhereInLoop && self.busy.phase_retries < PHASE_RETRIES {
            // A counter loop's proof from here read a derived value left by the last
            // iteration: looked at again a third of an iteration on.
            self.busy.phase_retries += 1;
            // (Tried, and fewer skips on Pokemon Red's battle: a look just past the
            // instruction that stopped the second pass, or at the first point where nothing
            // derived is live; the windows where a proof goes through are short.)
            self.busy.retry_in = Some((self.busy.period_cycles / 3).max(64));
            self.busy.len = 0;
            return false;
        }
        self.busy.phase_retries = 0;
        if proof != Proof::Proved {
            self.busy.len = 0;
            self.busy.rejected.failed(key);
            return false;
        }
        self.busy.rejected.passed(key);
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
        let traced = (self.instructions - self.pc_trace_from).min(MAX_BUSY_LEN as u64) as usize;
        let pc = self.cpu.r.pc;
        // The ring searched back from the newest entry, in runs that do not wrap (most looks
        // find no loop: every traced entry is read).
        let mut k = 1;
        while k <= traced {
            let newest = (self.instructions as usize).wrapping_sub(k) & super::PC_TRACE_MASK;
            let span = (newest + 1).min(traced + 1 - k);
            let run = &self.pc_trace[newest + 1 - span..=newest];
            if let Some(i) = find_last(run, pc) {
                let back = k + run.len() - 1 - i;
                debug_assert_eq!(self.traced_pc_back(back), pc);
                return Some(back);
            }
            k += span;
        }
        None
    }

    /// Prove the loop at the PC, whose key is `key` (see the module docs): one iteration
    /// simulated into `self.busy`; true if it is a fixed point, or a counter loop
    /// (`counter_loop`: then `self.busy.counter` says how far it may be skipped). Changes
    /// nothing of the machine.
    ///
    /// Where the last proof of this loop found a counter, the second simulation runs first,
    /// for that counter at its value now. What an iteration does does not depend on the
    /// track (it only watches), so when that simulation goes through, its iteration is the
    /// first simulation's too: if that finds the same counter, step and start, the second
    /// simulation the normal order would run is the one already run, and the first is saved.
    /// Otherwise the normal order follows, without running again a second simulation that
    /// just failed.
    fn prove_busy_loop(&mut self, key: u32) -> Proof {
        self.busy.counter = None;
        let predicted = self
            .busy
            .last_counter
            .filter(|&(k, _, _)| k == key)
            .map(|(_, addr, delta)| (addr, delta));
        let mut second = SecondPass::NotRun;
        if let Some((addr, delta)) = predicted {
            let start = self.bus.peek(addr);
            let mut track = CounterTrack::new(addr, start, delta, self.cpu.r.f);
            second = match self.simulate_iteration::<true>(Some(&mut track)) {
                Some((overlay, len)) => {
                    SecondPass::Through((addr, start, delta), track, overlay, len)
                }
                None => SecondPass::Failed((addr, start, delta)),
            };
        }
        let (overlay, len) = match &second {
            SecondPass::Through(_, _, overlay, len) => (*overlay, *len),
            _ => match self.simulate_iteration::<false>(None) {
                Some(simulated) => simulated,
                None => return Proof::Refused,
            },
        };
        // A loop that writes no RAM is left to the idle-loop fast-forward (`idle_loop`), which
        // skips a write-free one within the turn at less cost; this one would take it only
        // where that one's look came too early to see two periods.
        if len == 0 {
            return Proof::Refused;
        }
        // (The second pass below may stop early: the retry's interval comes from this one.)
        self.busy.period_cycles = self.busy.ends[self.busy.len - 1] as u64;
        let mut differing = 0;
        let mut counter = None;
        for &(addr, v) in &overlay[..len] {
            let m = self.bus.peek(addr);
            if m != v {
                differing += 1;
                let delta = v.wrapping_sub(m);
                if counter.is_none() && (delta == 1 || delta == 0xFF) {
                    counter = Some((addr, m, delta));
                }
            }
        }
        if differing == 0 {
            return Proof::Proved;
        }
        let Some((addr, start, delta)) = counter else {
            return Proof::Refused;
        };
        if differing > 1 + MAX_DERIVED_SLOTS {
            return Proof::Refused;
        }
        self.busy.last_counter = Some((key, addr, delta));
        let (track, overlay, len) = match second {
            SecondPass::Through(ran, track, overlay, len) if ran == (addr, start, delta) => {
                (track, overlay, len)
            }
            SecondPass::Failed(ran) if ran == (addr, start, delta) => {
                return Proof::ElsewhereInLoop
            }
            _ => {
                let mut track = CounterTrack::new(addr, start, delta, self.cpu.r.f);
                let Some((overlay, len)) = self.simulate_iteration::<true>(Some(&mut track)) else {
                    return Proof::ElsewhereInLoop;
                };
                (track, overlay, len)
            }
        };
        let Some(max) = track.max_iterations() else {
            return Proof::ElsewhereInLoop;
        };
        // Every other byte written is as it was, or a stack byte holding a derived F that
        // the skip writes.
        let same = overlay[..len]
            .iter()
            .all(|&(a, v)| a == addr || track.watched().any(|w| w == a) || self.bus.peek(a) == v);
        if !same {
            return Proof::Refused;
        }
        if max < 2 {
            // The counter is about to take the other path (a timer's run-out and reload):
            // the iterations after it can be proved again.
            return Proof::ElsewhereInLoop;
        }
        self.busy.counter = Some((track, max));
        Proof::Proved
    }

    /// Simulate one iteration from the PC on a copy of the CPU through [`ShadowBus`] into
    /// `self.busy` (its instructions and their ends), following a counter's derived values
    /// with `track`. Returns the bytes written (address, value) if it came back to the PC
    /// with the same registers, IME and banks, without an access or instruction a skipped
    /// loop may not contain. The banks are put back.
    fn simulate_iteration<const COUNTER: bool>(
        &mut self,
        mut track: Option<&mut CounterTrack>,
    ) -> Option<([(u16, u8); MAX_OVERLAY], usize)> {
        debug_assert_eq!(COUNTER, track.is_some());
        let start = self.cpu.r;
        let saved_banks = self.bus.cart.bank_state();
        let mut cpu = self.cpu.clone();
        let plan = &mut self.busy;
        if plan.map.is_empty() {
            plan.map = vec![0; RAM_SPAN];
        }
        let mut shadow =
            ShadowBus::<COUNTER>::new(&mut self.bus, &mut plan.map, track.as_ref().map(|t| t.addr));
        let mut pc = start.pc;
        let mut n = 0;
        let closed = loop {
            if n == MAX_BUSY_LEN {
                break false;
            }
            let at = pc;
            let sp_before = cpu.r.sp;
            if COUNTER {
                shadow.counter_read = false;
                shadow.counter_written = false;
                shadow.slots_read = 0;
                shadow.slots_written = 0;
                shadow.fetched_len = 0;
            }
            // (LD B,B is counted by the CPU as test ROMs' breakpoint: interpreted only.)
            if cpu.step_plain(&mut shadow, &mut pc) != Step::Normal
                || !shadow.ok
                || shadow.opcode == 0x40
            {
                break false;
            }
            if let Some(t) = track.as_deref_mut().filter(|_| COUNTER) {
                let touched = shadow.counter_read
                    || shadow.counter_written
                    || (shadow.slots_read | shadow.slots_written) != 0;
                // With nothing derived live, an instruction that touches neither the counter
                // nor a watched stack byte leaves the track as it is (`CounterTrack::step`).
                if touched || !t.quiescent() {
                    let effects = Effects {
                        op: shadow.fetched[0],
                        next: if shadow.fetched_len > 1 {
                            shadow.fetched[1]
                        } else {
                            0
                        },
                        f: cpu.r.f,
                        sp_before,
                        sp_after: cpu.r.sp,
                        counter_read: shadow.counter_read,
                        counter_written: shadow.counter_written,
                        slots_read: shadow.slots_read,
                        slots_written: shadow.slots_written,
                    };
                    if !t.step(&effects) || t.watched().any(|w| shadow.read_first(w)) {
                        break false;
                    }
                    shadow.watched_len = 0;
                    for w in t.watched() {
                        shadow.watched[shadow.watched_len] = w;
                        shadow.watched_len += 1;
                    }
                }
            }
            plan.pcs[n] = at;
            plan.ends[n] = shadow.cycles as u16;
            n += 1;
            if pc == start.pc {
                cpu.r.pc = pc;
                break cpu.r == start;
            }
        };
        let banks_back = shadow.bus.cart.bank_state() == saved_banks;
        shadow.clear_map();
        let (overlay, len) = (shadow.overlay, shadow.overlay_len);
        plan.len = n;
        if !banks_back {
            self.bus.cart.set_bank_state(saved_banks);
        }
        self.bus.refresh_rom_window();
        (closed && banks_back && cpu.ime == self.cpu.ime).then_some((overlay, len))
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
        let mut iterations = limit.saturating_sub(now + 1) / cycles;
        if let Some((_, max)) = &self.busy.counter {
            iterations = iterations.min(*max);
        }
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
        if let Some((track, _)) = self.busy.counter.take() {
            // The counter as the last skipped iteration left it, and the stack bytes holding
            // the F it derived.
            let counter = track.counter_after(iterations);
            for (addr, v) in
                std::iter::once((track.addr, counter)).chain(track.slot_values(iterations))
            {
                self.bus.set_ram(addr, v);
            }
            self.wait_loop_stats.busy_counter_skips += 1;
        }
        let stats = &mut self.wait_loop_stats;
        stats.busy_skips += 1;
        stats.busy_skipped_instructions += skipped;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::{find_last, RejectedLoops, REJECTED_SLOTS, RETRY_MAX_LOOKS, RETRY_MIN_LOOKS};
    use super::{IDLE_CHECK_INTERVAL, MAX_LOOK_BACKOFF, QUIET_LOOKS_PER_BACKOFF};
    use crate::gameboy::GameBoy;
    use crate::test_rng::xorshift;

    /// A program that never waits in a loop the looks could skip (each iteration increments
    /// a byte of work RAM): after `QUIET_LOOKS_PER_BACKOFF` looks the interval between looks
    /// doubles, up to `MAX_LOOK_BACKOFF` times, and the look count follows; a look that skips
    /// brings the interval back.
    #[test]
    fn looks_back_off_while_nothing_is_skipped() {
        let mut rom = vec![0u8; 0x8000];
        rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]);
        // 0150: LD HL,C000; L: INC (HL); JR L.
        rom[0x150..0x156].copy_from_slice(&[0x21, 0x00, 0xC0, 0x34, 0x18, 0xFD]);
        rom[0x14D] = crate::cartridge::header::compute_header_checksum(&rom);
        let mut gb = GameBoy::new(rom.into(), None).unwrap();
        gb.tick(10, false, false);
        let longest = IDLE_CHECK_INTERVAL << MAX_LOOK_BACKOFF;
        assert_eq!(gb.look_interval(), longest);
        assert!(gb.busy.quiet_looks >= QUIET_LOOKS_PER_BACKOFF * MAX_LOOK_BACKOFF);
        let looks = gb.wait_loop_stats.idle_looks;
        let frames = 30;
        gb.tick(frames, false, false);
        let expected = frames as u64 * crate::lcd::FRAME_CYCLES / longest;
        let looked = gb.wait_loop_stats.idle_looks - looks;
        // (A few more: a look the trace could not serve yet comes again soon.)
        assert!(
            looked + 2 >= expected && looked <= expected * 9 / 8,
            "{looked} looks in {frames} frames, expected about {expected}"
        );
        assert_eq!(gb.wait_loop_stats.busy_skips, 0);
        gb.count_look(true);
        assert_eq!(gb.look_interval(), IDLE_CHECK_INTERVAL);
        for _ in 0..QUIET_LOOKS_PER_BACKOFF {
            gb.count_look(false);
        }
        assert_eq!(gb.look_interval(), 2 * IDLE_CHECK_INTERVAL);
    }

    /// A failed loop waits twice as many looks after each further failure, up to the most; a
    /// pass forgets it.
    #[test]
    fn rejected_loops_back_off_and_forget_on_a_pass() {
        let mut r = RejectedLoops::default();
        let waits = |r: &mut RejectedLoops, key| (0..200).take_while(|_| r.waits(key)).count();
        assert_eq!(waits(&mut r, 7), 0, "never failed: no wait");
        let mut expected = RETRY_MIN_LOOKS as usize;
        for _ in 0..8 {
            r.failed(7);
            assert_eq!(waits(&mut r, 7), expected);
            expected = (expected * 2).min(RETRY_MAX_LOOKS as usize);
        }
        assert_eq!(expected, RETRY_MAX_LOOKS as usize);
        r.passed(7);
        r.failed(7);
        assert_eq!(waits(&mut r, 7), RETRY_MIN_LOOKS as usize, "a pass forgets");
        // Keys are independent; the oldest slot goes to a new key when all are taken.
        r.failed(7);
        for key in 100..100 + REJECTED_SLOTS as u32 {
            r.failed(key);
        }
        assert_eq!(waits(&mut r, 7), 0, "key 7's slot was reused");
        assert_eq!(waits(&mut r, 101), RETRY_MIN_LOOKS as usize);
    }

    /// `find_last` against a plain backward search, on runs of every length up to 70 drawn
    /// from a few values (so that most runs hold the one searched for, some several times).
    #[test]
    fn find_last_is_the_last_match() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        for len in 0..70 {
            for _ in 0..40 {
                let run: Vec<u16> = (0..len).map(|_| (next() % 6) as u16).collect();
                let x = (next() % 7) as u16;
                assert_eq!(
                    find_last(&run, x),
                    run.iter().rposition(|&p| p == x),
                    "{run:?} {x}"
                );
            }
        }
    }
}
