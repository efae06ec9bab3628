//! The MBC3 clock's block in a PyBoy 2.8.1 save state.
//!
//! Layout: a wall-clock "time zero" (f64), halt (1), carry (1), seconds, minutes, hours, day
//! low, day bit 8 (1 each), halt (1), carry (1) again, the sub-second cycle count (8) and the
//! wall-clock time of saving (f64).
//!
//! Our clock runs on emulated time only, so the two wall-clock times are ignored on load
//! (PyBoy would add the host time elapsed since saving) and written as the largest double on
//! save, which makes PyBoy add no host time when it loads our state. What PyBoy does not save
//! takes the values its freshly created clock has: nothing latched, latch not armed, and the
//! last catch-up at cycle 0 (so the next catch-up counts every cycle since power-on, as in
//! PyBoy).

use super::{Rtc, RTC_CYCLES_PER_SECOND};
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// Byte length of PyBoy's RTC block.
pub const PYBOY_RTC_LEN: usize = 33;

impl Rtc {
    pub fn save_pyboy(&self, w: &mut StateWriter) {
        w.f64(f64::MAX);
        w.bool(self.halt);
        w.bool(self.day_carry);
        w.u8(self.seconds);
        w.u8(self.minutes);
        w.u8(self.hours);
        w.u8(self.day_low);
        w.u8(self.day_high & 1);
        w.bool(self.halt);
        w.bool(self.day_carry);
        w.u64(self.sub_second);
        w.f64(f64::MAX);
    }

    pub fn load_pyboy(r: &mut StateReader) -> Result<Rtc, CoreError> {
        let _time_zero = r.f64()?;
        let (_halt, _carry) = (r.u8()?, r.u8()?);
        let mut c = Rtc::new();
        c.seconds = r.u8()? & 0x3F;
        c.minutes = r.u8()? & 0x3F;
        c.hours = r.u8()? & 0x1F;
        c.day_low = r.u8()?;
        c.day_high = r.u8()? & 1;
        c.halt = r.u8()? & 1 != 0;
        c.day_carry = r.u8()? & 1 != 0;
        c.sub_second = r.u64()? % RTC_CYCLES_PER_SECOND;
        let _saved_at = r.f64()?;
        c.last_now = 0;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_counters_and_resets_the_rest() {
        let mut c = Rtc::new();
        c.catch_up(RTC_CYCLES_PER_SECOND * 3725 + 1234);
        c.write_latch(0);
        c.write_latch(1);
        let mut w = StateWriter::new();
        c.save_pyboy(&mut w);
        assert_eq!(w.buf.len(), PYBOY_RTC_LEN);
        let d = Rtc::load_pyboy(&mut StateReader::new(&w.buf)).unwrap();
        assert_eq!(d.live_registers(), c.live_registers());
        assert_eq!(d.sub_second, 1234);
        assert_eq!(d.latched_registers(), [0; 5]);
        assert_eq!(d.last_now, 0);
    }
}
