//! The serial port (SB at FF01, SC at FF02) with no link partner (Pan Docs: "Serial Data Transfer").
//!
//! With no cable, the byte shifted in is all ones, so SB reads 0xFF after any write — PyBoy 2.8.1
//! shows it that way too. A transfer started with the internal clock completes after
//! 8 bits at 8192 Hz (1024 cycles), clears SC bit 7 and raises the serial interrupt. With the
//! external clock nothing ever arrives. The bytes a program sends are kept so tests and users
//! can read them (test ROMs report over serial).

use crate::state::{StateReader, StateWriter};
use crate::timer::FAR_AWAY;
use crate::CoreError;

pub mod pyboy_state;

const CYCLES_PER_BYTE: u64 = 8 * 128;
/// Sent bytes kept; older ones are dropped first (a program printing forever must not grow memory).
const SENT_CAPACITY: usize = 1 << 20;

#[derive(Clone, Debug)]
pub struct Serial {
    sb: u8,
    sc: u8,
    transferring: bool,
    clock: u64,
    done_at: u64,
    synced_at: u64,
    hint: u64,
    /// Every byte written to SB, in order (what PyBoy's serial buffer captures).
    sent: Vec<u8>,
    /// SC bits that read as 1: bits 1-6 on the DMG, bits 2-6 in CGB mode (bit 1 selects the
    /// clock speed there).
    sc_fixed: u8,
}

impl Default for Serial {
    fn default() -> Self {
        Self::new()
    }
}

impl Serial {
    pub fn new() -> Self {
        Serial {
            sb: 0xFF,
            sc: 0b0111_1110,
            transferring: false,
            clock: 0,
            done_at: FAR_AWAY,
            synced_at: 0,
            hint: 0,
            sent: Vec::new(),
            sc_fixed: 0b0111_1110,
        }
    }

    /// The cycle of the last sync and the port's own clock (checked when a state loads).
    pub(crate) fn times(&self) -> (u64, u64) {
        (self.synced_at, self.clock)
    }

    /// [`set_cgb_mode`](Self::set_cgb_mode) for a port whose SC was just restored.
    pub fn set_cgb_mode_keep_sc(&mut self, on: bool) {
        self.sc_fixed = if on { 0b0111_1100 } else { 0b0111_1110 };
    }

    /// PyBoy's serial port in CGB mode (SC bit 1 writable; power-on SC 0x7C).
    pub fn set_cgb_mode(&mut self, on: bool) {
        self.sc_fixed = if on { 0b0111_1100 } else { 0b0111_1110 };
        self.sc = self.sc_fixed;
    }

    /// No transfer under way: a sync only moves the clock, and syncs compose (one sync to
    /// `now` equals any sequence of syncs ending at `now`).
    #[inline]
    pub fn idle(&self) -> bool {
        !self.transferring
    }

    #[inline]
    pub fn cycles_to_interrupt(&self) -> u64 {
        self.hint
    }

    /// Catch up to absolute cycle `now`; true when a transfer completes (serial interrupt).
    pub fn sync(&mut self, now: u64) -> bool {
        let elapsed = now.wrapping_sub(self.synced_at);
        if elapsed == 0 {
            return false;
        }
        self.synced_at = now;
        self.clock += elapsed;
        let mut done = false;
        if self.transferring && self.clock >= self.done_at {
            self.sc &= 0x7F;
            self.transferring = false;
            self.done_at = FAR_AWAY;
            done = true;
        }
        self.hint = if self.transferring {
            self.done_at - self.clock
        } else {
            FAR_AWAY
        };
        done
    }

    pub fn read_sb(&self) -> u8 {
        self.sb
    }

    pub fn read_sc(&self) -> u8 {
        self.sc
    }

    pub fn write_sb(&mut self, value: u8) {
        if self.sent.len() >= SENT_CAPACITY {
            self.sent.drain(..SENT_CAPACITY / 2);
        }
        self.sent.push(value);
        // No partner: the bits shifted in are ones.
        self.sb = 0xFF;
    }

    pub fn write_sc(&mut self, value: u8) {
        self.sc = value | self.sc_fixed;
        let internal_clock = self.sc & 1 != 0;
        if internal_clock {
            self.transferring = self.sc & 0x80 != 0;
            self.done_at = self.clock + CYCLES_PER_BYTE;
            // PyBoy schedules the completion even when bit 7 is clear; the hint is kept alike.
            self.hint = CYCLES_PER_BYTE;
        } else {
            // An external clock never ticks without a cable.
            self.transferring = false;
            self.done_at = FAR_AWAY;
            self.hint = FAR_AWAY;
        }
    }

    /// Bytes written to SB so far.
    pub fn sent(&self) -> &[u8] {
        &self.sent
    }

    pub fn clear_sent(&mut self) {
        self.sent.clear();
    }

    pub fn take_sent(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.sent)
    }

    pub fn restore_sent(&mut self, sent: Vec<u8>) {
        self.sent = sent;
    }

    pub fn save_state(&self, w: &mut StateWriter) {
        w.u8(self.sb);
        w.u8(self.sc);
        w.bool(self.transferring);
        w.u64(self.clock);
        w.u64(self.done_at);
        w.u64(self.synced_at);
        w.u64(self.hint);
    }

    /// The sent-bytes log is output, not machine state: loading a state keeps it.
    pub fn load_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.sb = r.u8()?;
        self.sc = r.u8()? | self.sc_fixed;
        self.transferring = r.bool()?;
        self.clock = r.u64()?;
        self.done_at = r.u64()?;
        self.synced_at = r.u64()?;
        self.hint = r.u64()?;
        if self.transferring && self.done_at < self.clock.saturating_sub(CYCLES_PER_BYTE) {
            return Err(CoreError::State(
                "serial transfer end lies in the past".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_clock_transfer_takes_1024_cycles() {
        let mut s = Serial::new();
        s.sync(100);
        s.write_sb(b'A');
        assert_eq!(s.read_sb(), 0xFF);
        s.write_sc(0x81);
        assert_eq!(s.read_sc(), 0xFF);
        assert_eq!(s.cycles_to_interrupt(), 1024);
        assert!(!s.sync(100 + 1023));
        assert!(s.sync(100 + 1024));
        assert_eq!(s.read_sc(), 0x7F);
        assert_eq!(s.sent(), b"A");
        assert_eq!(s.cycles_to_interrupt(), FAR_AWAY);
    }

    #[test]
    fn external_clock_never_completes() {
        let mut s = Serial::new();
        s.write_sc(0x80);
        assert!(!s.sync(1 << 20));
        assert_eq!(s.read_sc() & 0x80, 0x80);
    }

    #[test]
    fn state_round_trip() {
        let mut s = Serial::new();
        s.write_sc(0x81);
        s.sync(500);
        let mut w = StateWriter::new();
        s.save_state(&mut w);
        let mut t = Serial::new();
        t.load_state(&mut StateReader::new(&w.buf)).unwrap();
        assert_eq!(s.sync(2000), t.sync(2000));
        assert_eq!(s.read_sc(), t.read_sc());
    }
}
