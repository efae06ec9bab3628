//! The timer's section of a PyBoy 2.8.1 save state (format version 29).
//!
//! Layout (little-endian): DIV (1), TIMA (1), the 16-bit system counter (2), the reload
//! countdown (2), TMA (1), TAC (1), the reload phase (1: 0 counting, 1 overflowed, 2 TMA
//! loaded), the cycle count of the last catch-up (8) and the scheduling hint (8).

use super::{Reload, Timer};
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// Byte length of PyBoy's timer section.
pub const PYBOY_TIMER_SECTION_LEN: usize = 25;

impl Timer {
    pub fn save_pyboy(&self, w: &mut StateWriter) {
        w.u8(self.read_div());
        w.u8(self.tima);
        w.u16(self.counter);
        w.u16(self.reload_countdown as u16);
        w.u8(self.tma);
        w.u8(self.tac);
        w.u8(match self.reload {
            Reload::Idle => 0,
            Reload::Overflowed => 1,
            Reload::Loaded => 2,
        });
        w.u64(self.synced_at);
        w.u64(self.hint);
    }

    /// Decode PyBoy's timer section into a new timer.
    pub fn load_pyboy(r: &mut StateReader) -> Result<Timer, CoreError> {
        let div = r.u8()?; // the counter's upper byte, except in older PyBoy states
        let tima = r.u8()?;
        let counter = r.u16()?;
        let countdown = r.u16()?;
        let tma = r.u8()?;
        let tac = r.u8()?;
        let reload = match r.u8()? {
            0 => Reload::Idle,
            1 => Reload::Overflowed,
            2 => Reload::Loaded,
            v => {
                return Err(CoreError::State(format!(
                    "PyBoy timer: reload phase {v} is not 0-2"
                )))
            }
        };
        if countdown > 4 || (reload != Reload::Idle && countdown == 0) {
            return Err(CoreError::State(format!(
                "PyBoy timer: reload countdown {countdown} out of range"
            )));
        }
        let synced_at = r.u64()?;
        let hint = r.u64()?;
        if hint > i64::MAX as u64 {
            return Err(CoreError::State(
                "PyBoy timer: negative interrupt distance".into(),
            ));
        }
        let mut t = Timer::new();
        t.counter = counter;
        t.tima = tima;
        t.tma = tma;
        t.tac = tac & 0b111;
        t.reload = reload;
        t.reload_countdown = countdown as u8;
        t.synced_at = synced_at;
        t.hint = hint;
        if div != (counter >> 8) as u8 {
            t.div_shown = Some(div);
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_mid_reload() {
        let mut t = Timer::new();
        t.write_tac(0b101);
        t.write_tima(0xFE);
        t.sync(100);
        assert!(!t.sync(140)); // overflow at some point, still reloading
        let mut w = StateWriter::new();
        t.save_pyboy(&mut w);
        assert_eq!(w.buf.len(), PYBOY_TIMER_SECTION_LEN);
        let mut u = Timer::load_pyboy(&mut StateReader::new(&w.buf)).unwrap();
        let mut w2 = StateWriter::new();
        u.save_pyboy(&mut w2);
        assert_eq!(w.buf, w2.buf);
        for now in (141..400).step_by(3) {
            assert_eq!(t.sync(now), u.sync(now));
            assert_eq!(t.read_tima(), u.read_tima());
            assert_eq!(t.cycles_to_interrupt(), u.cycles_to_interrupt());
        }
    }

    #[test]
    fn rejects_bad_phase_and_truncation() {
        let mut w = StateWriter::new();
        Timer::new().save_pyboy(&mut w);
        let mut bad = w.buf.clone();
        bad[8] = 7;
        assert!(Timer::load_pyboy(&mut StateReader::new(&bad)).is_err());
        assert!(Timer::load_pyboy(&mut StateReader::new(&w.buf[..20])).is_err());
    }
}
