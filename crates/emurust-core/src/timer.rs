//! DIV, TIMA, TMA and TAC (Pan Docs: "Timer and Divider Registers").
//!
//! The 16-bit system counter advances every T-cycle; DIV is its upper byte and TIMA counts
//! falling edges of the counter bit selected by TAC. The timer is lazy: it catches up when
//! the system syncs it, and tells the scheduler how far away its next interrupt is.
//!
//! Behaviour matched to PyBoy 2.8.1: after an overflow TIMA reads 0 for 4 cycles, then the
//! interrupt is raised and TMA is loaded, followed by a 4-cycle window in which TIMA writes
//! are ignored and TMA writes go through to TIMA. The scheduling hint is measured from the
//! last sync, and is left as it was when a sync finds no time has passed.

use crate::state::{StateReader, StateWriter};
use crate::CoreError;

pub mod pyboy_state;

/// "Nothing scheduled" as the scheduler understands it.
pub const FAR_AWAY: u64 = 1 << 31;

/// Counter bit whose falling edge clocks TIMA, for TAC's low two bits.
const TAC_EDGE_BIT: [u16; 4] = [1 << 9, 1 << 3, 1 << 5, 1 << 7];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reload {
    /// Counting normally.
    Idle,
    /// TIMA overflowed: it reads 0 until the countdown ends, then the interrupt fires.
    Overflowed,
    /// TMA was just loaded; TIMA ignores CPU writes until the countdown ends.
    Loaded,
}

#[derive(Clone, Debug)]
pub struct Timer {
    counter: u16,
    tima: u8,
    tma: u8,
    tac: u8,
    reload: Reload,
    reload_countdown: u8,
    synced_at: u64,
    hint: u64,
    /// A register changed (or a state loaded) since the last sync that advanced time: `hint`
    /// may not describe the registers, so [`Timer::sync_if_due`] must not trust it.
    stale_hint: bool,
    /// DIV as a loaded PyBoy state stored it, where that differs from the counter's upper
    /// byte (states of PyBoy before format 12 kept a separate DIV and a sub-counter). PyBoy
    /// shows the stored byte until the timer next advances or DIV is written.
    div_shown: Option<u8>,
    /// A sync at a cycle from `synced_at` up to (not including) this one only counts (see
    /// [`Timer::no_overflow_within`]): `synced_at + hint` while no reload is under way, the hint
    /// is fresh and no stored DIV is shown; 0 otherwise. Kept by the out-of-line sync, cleared
    /// with [`Timer::mark_stale`]. With the timer off the hint stays FAR_AWAY while `synced_at`
    /// moves, so this bound is at most the real one; past it the out-of-line sync does the same
    /// counting.
    count_until: u64,
}

impl Default for Timer {
    fn default() -> Self {
        Self::new()
    }
}

impl Timer {
    pub fn new() -> Self {
        Timer {
            counter: 0,
            tima: 0,
            tma: 0,
            tac: 0,
            reload: Reload::Idle,
            reload_countdown: 0,
            synced_at: 0,
            hint: 0,
            stale_hint: true,
            div_shown: None,
            count_until: 0,
        }
    }

    /// A register changed or a state loaded: `hint` may not describe the registers.
    #[inline]
    fn mark_stale(&mut self) {
        self.stale_hint = true;
        self.count_until = 0;
    }

    #[inline]
    fn enabled(&self) -> bool {
        self.tac & 0b100 != 0
    }

    #[inline]
    fn edge_bit(&self) -> u16 {
        TAC_EDGE_BIT[(self.tac & 3) as usize]
    }

    /// The full 16-bit system counter (the APU's frame sequencer watches one of its bits).
    #[inline]
    pub fn counter(&self) -> u16 {
        self.counter
    }

    /// The cycle of the last sync (checked against the machine's clock when a state loads).
    pub(crate) fn synced_at(&self) -> u64 {
        self.synced_at
    }

    /// Cycles until the timer wants the CPU's attention, as of the last sync.
    #[inline]
    pub fn cycles_to_interrupt(&self) -> u64 {
        self.hint
    }

    fn increment_tima(&mut self) {
        if self.tima == 0xFF {
            self.tima = self.tma;
            self.reload = Reload::Overflowed;
            self.reload_countdown = 4;
        } else {
            self.tima += 1;
        }
    }

    /// Catch up to absolute cycle `now`. Returns true when the timer interrupt fires.
    /// Inlined: nearly every sync (one at each scheduler turn's end) only counts; the rest
    /// is out of line.
    #[inline]
    pub fn sync(&mut self, now: u64) -> bool {
        // The machine's syncs never go back in time (a loaded state's sync time is checked
        // against its clock), so `now - synced_at` does not wrap.
        debug_assert!(now >= self.synced_at, "timer synced backwards");
        if now < self.count_until {
            // Before the overflow (or with the timer off): count. The overflow's time stays
            // where it was, so the distance shrinks by what elapsed (FAR_AWAY stays). No stored
            // DIV is shown (see `count_until`), and an empty span changes nothing.
            debug_assert!(
                self.no_overflow_within(now - self.synced_at) && self.div_shown.is_none()
            );
            self.count_to(now, now - self.synced_at);
            return false;
        }
        let elapsed = now.wrapping_sub(self.synced_at);
        if elapsed == 0 {
            return false;
        }
        self.sync_through_overflow(now, elapsed)
    }

    /// A sync to `now`, `elapsed` cycles on, through which TIMA cannot overflow: only the
    /// counter (and TIMA, with the timer on) moves, and the overflow's distance shrinks.
    #[inline(always)]
    fn count_to(&mut self, now: u64, elapsed: u64) {
        self.synced_at = now;
        if self.enabled() {
            self.count_without_overflow(elapsed);
            self.hint -= elapsed;
        } else {
            self.counter = self.counter.wrapping_add(elapsed as u16);
        }
    }

    /// [`Timer::sync`] of `elapsed` cycles that may hold an overflow or a reload, or with a
    /// stale `hint`.
    #[inline(never)]
    fn sync_through_overflow(&mut self, now: u64, elapsed: u64) -> bool {
        let fired = self.sync_span(now, elapsed);
        self.count_until = if self.reload == Reload::Idle {
            self.synced_at.saturating_add(self.hint)
        } else {
            0
        };
        fired
    }

    fn sync_span(&mut self, now: u64, elapsed: u64) -> bool {
        self.div_shown = None;
        if self.no_overflow_within(elapsed) {
            // Only counting (with the timer off, past `count_until`).
            self.count_to(now, elapsed);
            return false;
        }
        self.synced_at = now;
        self.stale_hint = false;

        if !self.enabled() && self.reload == Reload::Idle {
            self.counter = self.counter.wrapping_add(elapsed as u16);
            self.hint = FAR_AWAY;
            return false;
        }
        // Count arithmetically while TIMA cannot overflow; walk cycle by cycle, like the
        // hardware, only through an overflow and its reload (a few cycles), however long the
        // span (a halted CPU lets the timer fall behind by many overflows).
        let mut left = elapsed;
        let mut fired = false;
        while left > 0 {
            if self.reload == Reload::Idle {
                if !self.enabled() {
                    self.counter = self.counter.wrapping_add(left as u16);
                    break;
                }
                let to_overflow = self.cycles_to_overflow_irq();
                if left < to_overflow {
                    self.count_without_overflow(left);
                    break;
                }
                // Up to the cycle before the overflowing edge; that cycle is walked.
                self.count_without_overflow(to_overflow - 1);
                left -= to_overflow - 1;
            }
            fired |= self.walk_one_cycle();
            left -= 1;
        }
        self.hint = if self.enabled() {
            let mut h = self.cycles_to_overflow_irq();
            if self.reload == Reload::Overflowed {
                h = h.min(self.reload_countdown as u64);
            }
            h
        } else {
            FAR_AWAY
        };
        fired
    }

    /// Advance `cycles` that contain no overflowing edge: TIMA takes the falling edges of the
    /// watched bit, counted arithmetically (the period is a power of two: shift, don't divide).
    #[inline]
    fn count_without_overflow(&mut self, cycles: u64) {
        let shift = (2 * self.edge_bit() as u64).trailing_zeros();
        let start = self.counter as u64;
        let edges = ((start + cycles) >> shift) - (start >> shift);
        self.tima += edges as u8;
        self.counter = (start + cycles) as u16;
    }

    /// One T-cycle as the hardware takes it: the reload countdown, then the counter and the
    /// watched bit's falling edge. True when the interrupt fires.
    fn walk_one_cycle(&mut self) -> bool {
        let mut fired = false;
        if self.reload != Reload::Idle {
            self.reload_countdown -= 1;
            if self.reload_countdown == 0 {
                if self.reload == Reload::Overflowed {
                    self.reload = Reload::Loaded;
                    self.reload_countdown = 4;
                    fired = true;
                } else {
                    self.reload = Reload::Idle;
                }
            }
        }
        let before = self.counter;
        self.counter = before.wrapping_add(1);
        let bit = self.edge_bit();
        if self.enabled() && before & bit != 0 && self.counter & bit == 0 {
            self.increment_tima();
        }
        fired
    }

    /// The cycle before which [`Timer::sync_if_due`] does nothing (skips every sync), or
    /// `None` when it would sync at its next call (a reload under way, a stale `hint`).
    #[inline]
    pub fn quiet_until(&self) -> Option<u64> {
        if self.reload == Reload::Idle && !self.stale_hint {
            Some(self.synced_at.saturating_add(self.hint))
        } else {
            None
        }
    }

    /// [`Timer::sync`] only if it could do more than count: when TIMA may have overflowed by
    /// `now`, a reload is under way, or `hint` is stale. Skipping is exact: a sync that finds
    /// no overflow adds `now - synced_at` to the counter and TIMA's edges, and those compose,
    /// so a later sync reaches the same state. Used while the CPU is halted, where nothing
    /// reads the timer between syncs.
    #[inline]
    pub fn sync_if_due(&mut self, now: u64) -> bool {
        if self.no_overflow_within(now.wrapping_sub(self.synced_at)) {
            return false;
        }
        self.sync(now)
    }

    /// True when the next `elapsed` cycles after the last sync hold no overflow and no
    /// reload (and `hint` can be trusted to say so): only counting happens in them.
    #[inline]
    fn no_overflow_within(&self, elapsed: u64) -> bool {
        self.reload == Reload::Idle && !self.stale_hint && elapsed < self.hint
    }

    /// What [`Timer::cycles_to_interrupt`] would return after a sync at `now` (for a timer
    /// that [`Timer::sync_if_due`] left behind).
    #[inline]
    pub fn cycles_to_interrupt_at(&self, now: u64) -> u64 {
        if now == self.synced_at || self.reload != Reload::Idle || self.stale_hint {
            self.hint
        } else if self.enabled() {
            self.hint - (now - self.synced_at)
        } else {
            FAR_AWAY
        }
    }

    /// Cycles from now until TIMA's next overflow (the next edge plus one period per step left).
    fn cycles_to_overflow_irq(&self) -> u64 {
        let period = 2 * self.edge_bit() as u64;
        let counter = self.counter as u64;
        let to_next_edge = (counter & !(period - 1)) + period - counter;
        to_next_edge + (0xFF - self.tima as u64) * period
    }

    /// Replace DIV (the counter's upper byte), keeping the lower byte and without catching
    /// up or re-planning (what PyBoy's game wrappers do to seed a game's randomness).
    pub fn set_div_keep_low(&mut self, div: u8) {
        self.mark_stale();
        self.div_shown = None;
        self.counter = ((div as u16) << 8) | (self.counter & 0xFF);
    }

    pub fn read_div(&self) -> u8 {
        self.div_shown.unwrap_or((self.counter >> 8) as u8)
    }

    pub fn read_tima(&self) -> u8 {
        if self.reload == Reload::Overflowed {
            0
        } else {
            self.tima
        }
    }

    pub fn read_tma(&self) -> u8 {
        self.tma
    }

    pub fn read_tac(&self) -> u8 {
        self.tac | 0b1111_1000
    }

    /// Writing DIV clears the counter; a falling edge of the selected bit clocks TIMA.
    pub fn write_div(&mut self) {
        self.mark_stale();
        self.div_shown = None;
        if self.enabled() && self.counter & self.edge_bit() != 0 {
            self.increment_tima();
        }
        self.counter = 0;
    }

    pub fn write_tima(&mut self, value: u8) {
        self.mark_stale();
        if self.reload != Reload::Loaded {
            self.tima = value;
        }
    }

    pub fn write_tma(&mut self, value: u8) {
        self.mark_stale();
        self.tma = value;
        if self.reload != Reload::Idle {
            self.tima = value;
        }
    }

    /// Changing TAC can make the watched signal fall, which clocks TIMA once.
    pub fn write_tac(&mut self, value: u8) {
        self.mark_stale();
        let was_high = self.enabled() && self.counter & self.edge_bit() != 0;
        let new_bit = TAC_EDGE_BIT[(value & 3) as usize];
        let now_high = value & 0b100 != 0 && self.counter & new_bit != 0;
        if was_high && !now_high {
            self.increment_tima();
        }
        self.tac = value & 0b111;
    }

    pub fn save_state(&self, w: &mut StateWriter) {
        w.u16(self.counter);
        w.u8(self.tima);
        w.u8(self.tma);
        w.u8(self.tac);
        w.u8(match self.reload {
            Reload::Idle => 0,
            Reload::Overflowed => 1,
            Reload::Loaded => 2,
        });
        w.u8(self.reload_countdown);
        w.u64(self.synced_at);
        w.u64(self.hint);
    }

    /// DIV as a loaded PyBoy state stored it, while it differs from the counter's upper byte.
    pub(crate) fn div_shown(&self) -> Option<u8> {
        self.div_shown
    }

    pub(crate) fn set_div_shown(&mut self, div: Option<u8>) {
        self.div_shown = div;
        self.count_until = 0;
    }

    pub fn load_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.counter = r.u16()?;
        self.tima = r.u8()?;
        self.tma = r.u8()?;
        self.tac = r.u8()? & 0b111;
        self.reload = match r.u8()? {
            0 => Reload::Idle,
            1 => Reload::Overflowed,
            2 => Reload::Loaded,
            v => {
                return Err(CoreError::State(format!(
                    "timer reload phase {v} is not 0-2"
                )))
            }
        };
        self.reload_countdown = r.u8()?;
        if self.reload != Reload::Idle && !(1..=4).contains(&self.reload_countdown) {
            return Err(CoreError::State(
                "timer reload countdown out of range".into(),
            ));
        }
        self.synced_at = r.u64()?;
        self.hint = r.u64()?;
        self.mark_stale();
        self.div_shown = None; // in the state's last section (see GameBoy::save_state)
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: advance one cycle at a time, the way Pan Docs describes the circuit, and
    /// without `sync`'s shortcut before an overflow (a stale hint turns it off).
    fn step_slow(t: &mut Timer, cycles: u64) -> u32 {
        let mut irqs = 0;
        for _ in 0..cycles {
            let now = t.synced_at + 1;
            t.mark_stale();
            if t.sync(now) {
                irqs += 1;
            }
        }
        irqs
    }

    #[test]
    fn div_counts_every_256_cycles() {
        let mut t = Timer::new();
        t.sync(255);
        assert_eq!(t.read_div(), 0);
        t.sync(256);
        assert_eq!(t.read_div(), 1);
        t.sync(256 * 300);
        assert_eq!(t.read_div(), (300 % 256) as u8);
    }

    #[test]
    fn tima_rates_match_tac() {
        for (tac, period) in [(0b100u8, 1024u64), (0b101, 16), (0b110, 64), (0b111, 256)] {
            let mut t = Timer::new();
            t.write_tac(tac);
            t.sync(period * 10);
            assert_eq!(t.read_tima(), 10, "tac {tac:#x}");
        }
    }

    #[test]
    fn overflow_reads_zero_then_reloads_and_fires_once() {
        let mut t = Timer::new();
        t.write_tma(0xF0);
        t.write_tima(0xFF);
        t.write_tac(0b101); // every 16 cycles
        t.sync(15);
        assert_eq!(t.read_tima(), 0xFF);
        assert!(!t.sync(16)); // overflow
        assert_eq!(t.read_tima(), 0);
        let irqs = step_slow(&mut t, 4);
        assert_eq!(irqs, 1);
        assert_eq!(t.read_tima(), 0xF0);
        // in the 4 cycles after reload, TIMA writes are ignored and TMA writes go through
        t.write_tima(0x12);
        assert_eq!(t.read_tima(), 0xF0);
        t.write_tma(0x34);
        assert_eq!(t.read_tima(), 0x34);
    }

    #[test]
    fn lazy_sync_equals_cycle_by_cycle() {
        let mut fast = Timer::new();
        let mut slow = Timer::new();
        for t in [&mut fast, &mut slow] {
            t.write_tma(0xC0);
            t.write_tac(0b101);
        }
        let mut fast_irqs = 0;
        let mut now = 0;
        for chunk in [3u64, 17, 100, 1, 4, 4, 999, 64, 5000, 12] {
            now += chunk;
            if fast.sync(now) {
                fast_irqs += 1;
            }
        }
        let slow_irqs = step_slow(&mut slow, now);
        assert_eq!(fast.read_tima(), slow.read_tima());
        assert_eq!(fast.read_div(), slow.read_div());
        // the lazy timer can merge interrupts within one sync only if the scheduler lets it:
        // the hint must never point past the next interrupt
        assert!(fast_irqs <= slow_irqs);
    }

    #[test]
    fn hint_points_at_the_overflow_interrupt() {
        let mut t = Timer::new();
        t.write_tac(0b101);
        t.write_tima(0xFE);
        t.sync(1);
        // next edge at 16, then one more period to overflow at 32, interrupt 4 cycles later
        assert_eq!(t.cycles_to_interrupt(), 15 + 16);
        t.sync(32);
        assert_eq!(t.read_tima(), 0);
        assert_eq!(t.cycles_to_interrupt(), 4);
        assert!(!t.sync(35));
        assert!(t.sync(36));
    }

    #[test]
    fn div_write_and_tac_change_can_clock_tima() {
        let mut t = Timer::new();
        t.write_tac(0b101);
        t.sync(8); // bit 3 set
        t.write_div();
        assert_eq!(t.read_tima(), 1);
        t.sync(8 + 8);
        t.write_tac(0b000); // disabling while the bit is high is a falling edge
        assert_eq!(t.read_tima(), 2);
    }

    #[test]
    fn state_round_trip() {
        let mut t = Timer::new();
        t.write_tac(0b110);
        t.write_tma(7);
        t.sync(12345);
        let mut w = StateWriter::new();
        t.save_state(&mut w);
        let mut u = Timer::new();
        u.load_state(&mut StateReader::new(&w.buf)).unwrap();
        t.sync(99999);
        u.sync(99999);
        assert_eq!(
            (t.read_tima(), t.read_div(), t.hint),
            (u.read_tima(), u.read_div(), u.hint)
        );
        assert!(u.load_state(&mut StateReader::new(&w.buf[..5])).is_err());
    }

    /// The observable state and the scheduling distance.
    fn snapshot(t: &Timer) -> (u16, u8, u8, u8, Reload, u8, u64) {
        (
            t.counter,
            t.tima,
            t.tma,
            t.tac,
            t.reload,
            t.reload_countdown,
            t.hint,
        )
    }

    /// Long syncs (across many overflows and reloads) reach exactly the state of syncing
    /// every cycle, and fire when it fires; syncs skipped by `sync_if_due` at scheduler-like
    /// points fire at the same points as real syncs there, with the same distances. Under
    /// random register writes at random times.
    #[test]
    fn long_and_skipped_syncs_equal_cycle_by_cycle() {
        let mut next = crate::test_rng::xorshift(0x2545_F491_4F6C_DD1D);
        for _ in 0..300 {
            let mut timers = [Timer::new(), Timer::new(), Timer::new(), Timer::new()];
            let mut now = 0u64;
            for _ in 0..40 {
                let [fast, slow, eager, lazy] = &mut timers;
                // Span lengths from 1 cycle to several overflows at the fastest rate.
                let span = 1 + next() % [8, 64, 600, 9000][(next() % 4) as usize];
                let mut at = now;
                while at < now + span {
                    at = (at + 4 + next() % 40).min(now + span);
                    assert_eq!(lazy.sync_if_due(at), eager.sync(at), "at {at}");
                    assert_eq!(lazy.cycles_to_interrupt_at(at), eager.cycles_to_interrupt());
                }
                now += span;
                let slow_fired = step_slow(slow, span) > 0;
                assert_eq!(fast.sync(now), slow_fired);
                lazy.sync(now);
                for t in [&*fast, &*eager, &*lazy] {
                    assert_eq!(snapshot(t), snapshot(slow));
                }
                // The same register write to all three, as the CPU would make it.
                let (op, v) = (next() % 6, next() as u8);
                for t in timers.iter_mut() {
                    match op {
                        0 => t.write_div(),
                        1 => t.write_tima(v),
                        2 => t.write_tma(v),
                        3 => t.write_tac(v | 0b100),
                        4 => t.write_tac(v),
                        _ => {}
                    }
                }
            }
        }
    }
}
