//! The serial port's section of a PyBoy 2.8.1 save state (format version 29).
//!
//! Layout: SB (1), SC (1), transfer running (0x80 or 0, as PyBoy keeps it: SC & 0x80) (1), internal clock (1), cycle count of the last
//! catch-up (8), scheduling hint (8), the port's own clock (8), the transfer's end (8).

use super::Serial;
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// Byte length of PyBoy's serial section.
pub const PYBOY_SERIAL_SECTION_LEN: usize = 36;

impl Serial {
    pub fn save_pyboy(&self, w: &mut StateWriter) {
        w.u8(self.sb);
        w.u8(self.sc);
        // PyBoy keeps the flag as SC & 0x80.
        w.u8(if self.transferring { 0x80 } else { 0 });
        w.u8(self.sc & 1);
        w.u64(self.synced_at);
        w.u64(self.hint);
        w.u64(self.clock);
        w.u64(self.done_at);
    }

    /// Decode PyBoy's serial section into a new port (with an empty sent-bytes log).
    pub fn load_pyboy(r: &mut StateReader) -> Result<Serial, CoreError> {
        let mut s = Serial::new();
        s.sb = r.u8()?;
        // Bits 2-6 always read 1; bit 1 too on the DMG (kept as saved: CGB mode uses it).
        s.sc = r.u8()? | 0b0111_1100;
        s.transferring = r.u8()? != 0;
        let internal_clock = r.u8()? != 0;
        s.synced_at = r.u64()?;
        s.hint = r.u64()?;
        s.clock = r.u64()?;
        s.done_at = r.u64()?;
        if internal_clock != (s.sc & 1 != 0) || (s.transferring && s.sc & 0x80 == 0) {
            return Err(CoreError::State(
                "PyBoy serial: transfer flags disagree with SC".into(),
            ));
        }
        if s.hint > i64::MAX as u64 {
            return Err(CoreError::State(
                "PyBoy serial: negative interrupt distance".into(),
            ));
        }
        Ok(s)
    }
}

impl Serial {
    /// A state from before PyBoy's format version 15 has no serial section: PyBoy keeps its
    /// port, whose next catch-up runs from its own last one to the loaded cycle count (with
    /// unsigned arithmetic: a count behind it moves the port's clock back). The same, done
    /// now: the port's clock moves by that span and it is caught up to `now`.
    pub(crate) fn rebase_pyboy(&mut self, now: u64) {
        self.clock = self.clock.wrapping_add(now.wrapping_sub(self.synced_at));
        self.synced_at = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_during_transfer() {
        let mut s = Serial::new();
        s.sync(1000);
        s.write_sc(0x81);
        s.sync(1500);
        let mut w = StateWriter::new();
        s.save_pyboy(&mut w);
        assert_eq!(w.buf.len(), PYBOY_SERIAL_SECTION_LEN);
        let mut t = Serial::load_pyboy(&mut StateReader::new(&w.buf)).unwrap();
        let mut w2 = StateWriter::new();
        t.save_pyboy(&mut w2);
        assert_eq!(w.buf, w2.buf);
        assert!(!t.sync(2023));
        assert!(t.sync(2024));
        assert_eq!(t.read_sc(), 0x7F);
    }
}
