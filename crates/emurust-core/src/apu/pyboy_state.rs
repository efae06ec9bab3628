//! The sound section of a PyBoy 2.8.1 save state (format version 29, DMG), in either sound
//! mode and at any sample rate (the sample buffer's length depends on it).
//!
//! PyBoy stores its sound unit's clocks, frame-sequencer bookkeeping and sample buffer, then
//! each channel. Every PyBoy field has a counterpart here (names differ, meanings are the
//! same; see the field docs in `apu.rs` and `channels.rs`). Fields that only a Game Boy Color
//! ever changes (duty-change latches, sample suppression, CH1 sweep delays, CH3 restart,
//! CH4 divider counter, the double-speed shift) are exchanged as they are on Game Boy Color
//! hardware; on a DMG they must hold their DMG values, and a state where they do not is
//! refused.
//! Fields PyBoy does not save (the times of the last DIV edge write and power-off) take the
//! values a freshly created PyBoy has: 0.

use super::{
    check_count, check_shadow, Apu, Envelope, Length, Noise, Pulse, SoundOptions, Sweep, Wave,
};
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// Byte length of PyBoy's pulse-channel block (CH2; CH1 adds its sweep).
const PULSE_LEN: usize = 60;
const SWEEP_EXTRA_LEN: usize = 45;
const WAVE_LEN: usize = 74;
const NOISE_LEN: usize = 90;
/// Byte length of PyBoy's sound section with these options.
pub fn pyboy_sound_section_len(options: SoundOptions) -> usize {
    24 + options.sample_buffer_len() + PYBOY_SOUND_FIXED_LEN
}

/// The part of PyBoy's sound section after the sample buffer.
const PYBOY_SOUND_FIXED_LEN: usize = 1
    + 16
    + 8
    + 16
    + 16
    + 3
    + 8
    + 1
    + PULSE_LEN
    + SWEEP_EXTRA_LEN
    + PULSE_LEN
    + WAVE_LEN
    + NOISE_LEN;

/// NR52 status bits PyBoy stores as each channel's "enable".
const CH1_ON: u8 = 0x01;
const CH2_ON: u8 = 0x02;

fn err(msg: String) -> CoreError {
    CoreError::State(format!("PyBoy sound: {msg}"))
}

fn flag(r: &mut StateReader) -> Result<bool, CoreError> {
    Ok(r.u8()? != 0)
}

/// A field only a Game Boy Color sets: it must be zero in a DMG state (`cgb` false).
fn dmg_zero(cgb: bool, v: u64, what: &str) -> Result<(), CoreError> {
    if !cgb && v != 0 {
        return Err(err(format!(
            "{what} is {v}, which only a Game Boy Color produces"
        )));
    }
    Ok(())
}

fn period(v: i64, what: &str) -> Result<i64, CoreError> {
    if !(1..=(112i64 << 15)).contains(&v) {
        return Err(err(format!("{what} period {v} out of range")));
    }
    Ok(v)
}

fn save_env_regs(w: &mut StateWriter, e: &Envelope) {
    w.u8(e.initial);
    w.bool(e.rising);
    w.u8(e.pace);
}

fn load_env_regs(r: &mut StateReader) -> Result<Envelope, CoreError> {
    let (initial, rising, pace) = (r.u8()?, r.u8()?, r.u8()?);
    if initial > 15 || rising > 1 || pace > 7 {
        return Err(err("envelope register fields out of range".into()));
    }
    Ok(Envelope {
        initial,
        rising: rising != 0,
        pace,
        countdown: 0,
        volume: 0,
    })
}

fn save_pulse(w: &mut StateWriter, p: &Pulse, on_bit: u8) {
    let p = &p.settled();
    w.u8(p.duty);
    w.u8(p.length_load);
    save_env_regs(w, &p.env);
    w.u16(p.freq);
    w.bool(p.length.enabled);
    w.u8(if p.on { on_bit } else { 0 });
    w.i64(p.length.remaining);
    w.i64(p.env.countdown);
    w.i64(p.countdown);
    w.i64(p.step_cycles);
    w.i64(p.step as i64);
    w.i64(p.env.volume);
    w.bool(p.suppressed);
    w.u8(p.pending_duty);
    w.bool(p.duty_pending);
}

fn load_pulse(r: &mut StateReader, what: &str, cgb: bool) -> Result<Pulse, CoreError> {
    let mut p = Pulse::new();
    p.duty = r.u8()?;
    p.length_load = r.u8()?;
    if p.duty > 3 || p.length_load > 0x3F {
        return Err(err(format!("{what}: NRx1 fields out of range")));
    }
    p.env = load_env_regs(r)?;
    p.freq = r.u16()?;
    if p.freq > 0x7FF {
        return Err(err(format!(
            "{what}: period value {:#x} out of range",
            p.freq
        )));
    }
    p.length = Length {
        enabled: flag(r)?,
        remaining: 0,
    };
    p.on = r.u8()? != 0;
    p.length.remaining = check_count(r.i64()?, "length counter")?;
    p.env.countdown = check_count(r.i64()?, "envelope countdown")?;
    p.countdown = check_count(r.i64()?, "timer countdown")?;
    p.step_cycles = period(r.i64()?, what)?;
    let step = r.i64()?;
    if !(0..8).contains(&step) {
        return Err(err(format!("{what}: duty step {step} out of range")));
    }
    p.step = step as u8;
    p.env.volume = check_count(r.i64()?, "envelope volume")?;
    let suppressed = r.u8()?;
    dmg_zero(cgb, suppressed as u64, "the sample suppression")?;
    // Only read while an update is pending (CGB); kept as PyBoy keeps it (a state of format
    // version 22 or older sets it to the duty).
    p.pending_duty = r.u8()? & 3;
    let duty_pending = r.u8()?;
    dmg_zero(cgb, duty_pending as u64, "a pending duty update")?;
    if cgb {
        p.suppressed = suppressed != 0;
        p.duty_pending = duty_pending != 0;
    }
    Ok(p)
}

fn save_sweep(w: &mut StateWriter, s: &Sweep) {
    w.u8(s.pace);
    w.bool(s.negate);
    w.u8(s.shift);
    w.i64(s.countdown);
    w.i64(s.check_delay);
    w.i64(s.calc_delay);
    w.i64(s.restart_hold);
    w.bool(s.negated);
    w.bool(s.active);
    w.i64(s.shadow);
}

fn load_sweep(r: &mut StateReader, cgb: bool) -> Result<Sweep, CoreError> {
    let (pace, negate, shift) = (r.u8()?, r.u8()?, r.u8()?);
    if pace > 7 || negate > 1 || shift > 7 {
        return Err(err("NR10 fields out of range".into()));
    }
    let countdown = check_count(r.i64()?, "sweep countdown")?;
    let check_delay = check_count(r.i64()?, "sweep check delay")?;
    let calc_delay = r.i64()?;
    dmg_zero(cgb, calc_delay as u64, "the delayed sweep calculation")?;
    let restart_hold = r.i64()?;
    dmg_zero(cgb, restart_hold as u64, "the sweep restart hold")?;
    let negated = flag(r)?;
    let active = flag(r)?;
    let shadow = check_shadow(r.i64()?)?;
    Ok(Sweep {
        pace,
        negate: negate != 0,
        shift,
        countdown,
        active,
        shadow,
        check_delay,
        negated,
        restart_hold,
        calc_delay,
        cgb,
    })
}

fn save_wave(w: &mut StateWriter, c: &Wave) {
    w.buf.extend_from_slice(&c.ram);
    w.bool(c.dac);
    w.u8(c.length_load);
    w.u8(c.level);
    w.u16(c.freq);
    w.bool(c.length.enabled);
    // PyBoy keeps "enabled" as the channel's NR52 bit (0x04), as for the pulse channels.
    w.u8(if c.on { 0x04 } else { 0 });
    w.i64(c.length.remaining);
    w.i64(c.countdown);
    w.i64(c.step_cycles);
    w.i64(c.pos as i64);
    w.bool(c.suppressed); // always clear on the DMG (cleared at once there)
    w.i64(c.level_shift as i64);
    w.bool(c.fetch_window);
    w.bool(c.restart_pending);
    // The sample position equals the fetch position on DMG.
    w.i64(if c.cgb { c.sample_pos } else { c.pos } as i64);
}

fn load_wave(r: &mut StateReader, cgb: bool) -> Result<Wave, CoreError> {
    let mut c = Wave::new();
    c.cgb = cgb;
    for b in c.ram.iter_mut() {
        *b = r.u8()?;
    }
    c.dac = flag(r)?;
    c.length_load = r.u8()?;
    c.level = r.u8()?;
    c.freq = r.u16()?;
    if c.level > 3 || c.freq > 0x7FF {
        return Err(err("CH3 register fields out of range".into()));
    }
    c.length.enabled = flag(r)?;
    c.on = flag(r)?;
    c.length.remaining = check_count(r.i64()?, "length counter")?;
    c.countdown = check_count(r.i64()?, "timer countdown")?;
    c.step_cycles = period(r.i64()?, "CH3")?;
    let pos = r.i64()?;
    if !(0..32).contains(&pos) {
        return Err(err(format!("CH3 position {pos} out of range")));
    }
    c.pos = pos as u8;
    let suppressed = r.u8()?;
    dmg_zero(cgb, suppressed as u64, "CH3's sample suppression")?;
    c.suppressed = suppressed != 0;
    let shift = r.i64()?;
    if !(0..=4).contains(&shift) {
        return Err(err(format!("CH3 volume shift {shift} out of range")));
    }
    c.level_shift = shift as u8;
    c.fetch_window = flag(r)?;
    let restart = r.u8()?;
    dmg_zero(cgb, restart as u64, "CH3's pending restart")?;
    c.restart_pending = restart != 0;
    let sample_pos = r.i64()?;
    if cgb {
        if !(0..32).contains(&sample_pos) {
            return Err(err(format!(
                "CH3 sample position {sample_pos} out of range"
            )));
        }
        c.sample_pos = sample_pos as u8;
    } else if sample_pos != pos {
        return Err(err(
            "CH3 sample and fetch positions differ, which only a Game Boy Color produces".into(),
        ));
    }
    Ok(c)
}

fn save_noise(w: &mut StateWriter, c: &Noise) {
    let c = &c.settled();
    w.u8(c.length_load);
    save_env_regs(w, &c.env);
    w.u8(c.clock_shift);
    w.bool(c.short_mode);
    w.u8(c.divisor);
    w.bool(c.length.enabled);
    w.u8(if c.on { 0x08 } else { 0 }); // NR52 bit, as PyBoy keeps it
    w.i64(c.length.remaining);
    w.i64(c.countdown);
    w.i64(c.env.countdown);
    w.i64(c.step_cycles);
    w.i64(c.lfsr as i64);
    w.i64(if c.short_mode { 0x4040 } else { 0x4000 });
    w.i64(c.env.volume);
    // The Game Boy Color's divider counter: counter, countdown, alignment, running.
    w.i64(c.counter as i64);
    w.i64(c.counter_countdown);
    w.i64(c.alignment as i64);
    w.bool(c.counter_running);
}

fn load_noise(r: &mut StateReader, cgb: bool) -> Result<Noise, CoreError> {
    let mut c = Noise::new();
    c.cgb = cgb;
    c.length_load = r.u8()?;
    c.env = load_env_regs(r)?;
    let (shift, short, divisor) = (r.u8()?, r.u8()?, r.u8()?);
    if c.length_load > 0x3F || shift > 15 || short > 1 || divisor > 7 {
        return Err(err("CH4 register fields out of range".into()));
    }
    c.clock_shift = shift;
    c.short_mode = short != 0;
    c.divisor = divisor;
    c.length.enabled = flag(r)?;
    c.on = flag(r)?;
    c.length.remaining = check_count(r.i64()?, "length counter")?;
    c.countdown = check_count(r.i64()?, "timer countdown")?;
    c.env.countdown = check_count(r.i64()?, "envelope countdown")?;
    c.step_cycles = period(r.i64()?, "CH4")?;
    let lfsr = r.i64()?;
    if !(0..=0x7FFF).contains(&lfsr) {
        return Err(err(format!("CH4 shift register {lfsr:#x} out of range")));
    }
    c.lfsr = lfsr as u16;
    let feed = r.i64()?;
    let expected = if c.short_mode { 0x4040 } else { 0x4000 };
    if feed != expected {
        return Err(err(format!(
            "CH4 feedback mask {feed:#x} disagrees with NR43"
        )));
    }
    c.env.volume = check_count(r.i64()?, "envelope volume")?;
    // The Game Boy Color's divider counter (not used on a DMG).
    let (counter, countdown, alignment) = (r.i64()?, r.i64()?, r.i64()?);
    let running = flag(r)?;
    // Used on the CGB only; a DMG keeps it as PyBoy does (a state of format version 25 or
    // older sets the countdown to half the divisor and "running" to the channel's status).
    if !(0..0x4000).contains(&counter) || !(0..4).contains(&alignment) {
        return Err(err("CH4 divider counter out of range".into()));
    }
    c.counter = counter as u16;
    c.counter_countdown = check_count(countdown, "CH4 divider countdown")?;
    c.alignment = alignment as u8;
    c.counter_running = running;
    Ok(c)
}

impl Apu {
    pub fn save_pyboy(&self, w: &mut StateWriter) {
        debug_assert_eq!(self.lag.cycles, 0, "saved between frames, caught up");
        let start = w.buf.len();
        w.u64(self.samples_len as u64);
        w.u64(self.options.samples_per_frame() as u64);
        w.f64(self.cycles_per_sample);
        for &s in self.samples.iter() {
            w.u8(s as u8);
        }
        w.u8(self.speed_shift); // CGB double speed
        w.f64(self.next_sample);
        w.f64(self.next_seq);
        w.u64(self.hint);
        w.u64(self.clock);
        w.u64(self.caught_up_to);
        w.u64(self.seq_mode as u64);
        w.u64(self.seq_step);
        w.bool(self.div_edge_written);
        w.u8(if self.powered { 0x80 } else { 0 });
        w.bool(!self.sampling);
        // NR51, one byte per bit as PyBoy keeps it: CH4..CH1 left, then CH4..CH1 right.
        for bit in [0x80u8, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01] {
            w.u8(self.nr51 & bit);
        }
        w.u8(self.nr50);
        save_pulse(w, &self.ch1, CH1_ON);
        save_sweep(w, &self.sweep);
        save_pulse(w, &self.ch2, CH2_ON);
        save_wave(w, &self.ch3);
        save_noise(w, &self.ch4);
        debug_assert_eq!(w.buf.len() - start, pyboy_sound_section_len(self.options));
    }

    /// Decode PyBoy's sound section into a new APU with `options` (those of the PyBoy that
    /// loads the state: PyBoy does not save whether sound is emulated, and a state loads into
    /// either mode), of Game Boy Color hardware with `cgb`. The state must have been saved at
    /// the same sample rate.
    pub fn load_pyboy(
        r: &mut StateReader,
        options: SoundOptions,
        cgb: bool,
    ) -> Result<Apu, CoreError> {
        let mut a = Apu::new(options);
        let head = r.u64()?;
        let per_frame = r.u64()?;
        let ours = options.samples_per_frame();
        if per_frame != ours as u64 {
            return Err(err(format!(
                "the state was saved at {per_frame} samples per frame, this emulator samples \
                 at {} Hz ({ours} per frame): create it with the sample rate the state was \
                 saved with",
                options.sample_rate
            )));
        }
        let _cycles_per_sample = r.f64()?;
        if head > a.samples.len() as u64 || head % 2 != 0 {
            return Err(err(format!("sample buffer position {head} out of range")));
        }
        a.samples_len = head as usize;
        for s in a.samples.iter_mut() {
            *s = r.u8()? as i8;
        }
        let shift = r.u8()?;
        dmg_zero(cgb, shift as u64, "the double-speed shift")?;
        if shift > 1 {
            return Err(err(format!("speed shift {shift} out of range")));
        }
        a.speed_shift = shift;
        a.next_sample = r.f64()?;
        a.next_seq = r.f64()?;
        for t in [a.next_sample, a.next_seq] {
            if !(t.is_finite() && t >= 0.0) {
                return Err(err(format!("bad target time {t}")));
            }
        }
        a.refresh_targets();
        a.hint = r.u64()?;
        if a.hint > i64::MAX as u64 {
            return Err(err("negative interrupt distance".into()));
        }
        a.clock = r.u64()?;
        a.caught_up_to = r.u64()?;
        let mode = r.u64()?;
        if !matches!(mode, 0..=3 | 5) {
            return Err(err(format!("frame-sequencer mode {mode} out of range")));
        }
        a.seq_mode = mode as u8;
        a.seq_step = r.u64()?;
        a.div_edge_written = flag(r)?;
        a.powered = flag(r)?;
        a.sampling = !flag(r)?;
        let mut nr51 = 0u8;
        for bit in [0x80u8, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01] {
            if r.u8()? != 0 {
                nr51 |= bit;
            }
        }
        a.nr51 = nr51;
        a.nr50 = r.u8()?;
        a.ch1 = load_pulse(r, "CH1", cgb)?;
        a.sweep = load_sweep(r, cgb)?;
        a.ch2 = load_pulse(r, "CH2", cgb)?;
        a.ch3 = load_wave(r, cgb)?;
        a.ch4 = load_noise(r, cgb)?;
        if cgb {
            a.set_cgb();
        }
        // Not saved by PyBoy; a fresh PyBoy has 0.
        a.last_div_edge_clock = 0;
        a.last_power_off_clock = 0;
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy_apu() -> Apu {
        let mut a = Apu::new(SoundOptions::default());
        let mut now = 100;
        a.write(0xFF26, 0x80, now, 0);
        for (addr, v) in [
            (0xFF24u16, 0x77u8),
            (0xFF25, 0xF3),
            (0xFF10, 0x35),
            (0xFF11, 0x80),
            (0xFF12, 0xF3),
            (0xFF13, 0x40),
            (0xFF14, 0xC6),
            (0xFF16, 0x41),
            (0xFF17, 0xA5),
            (0xFF18, 0x10),
            (0xFF19, 0x87),
            (0xFF1A, 0x80),
            (0xFF1C, 0x40),
            (0xFF1D, 0x30),
            (0xFF1E, 0x87),
            (0xFF21, 0xF1),
            (0xFF22, 0x4B),
            (0xFF23, 0x80),
        ] {
            now += 37;
            a.write(addr, v, now, 0);
        }
        a.tick(now + 20_000);
        a
    }

    #[test]
    fn section_length_and_round_trip() {
        let a = busy_apu();
        let mut w = StateWriter::new();
        a.save_pyboy(&mut w);
        assert_eq!(
            w.buf.len(),
            pyboy_sound_section_len(SoundOptions::default())
        );
        let mut b = Apu::load_pyboy(
            &mut StateReader::new(&w.buf),
            SoundOptions::default(),
            false,
        )
        .unwrap();
        let mut w2 = StateWriter::new();
        b.save_pyboy(&mut w2);
        assert_eq!(w.buf, w2.buf);
        // Both run on identically.
        let mut a = a;
        let now = a.clock;
        for k in 1..200u64 {
            a.tick(now + k * 997);
            b.tick(now + k * 997);
            for addr in 0xFF10..=0xFF3F {
                assert_eq!(a.peek(addr), b.peek(addr));
            }
        }
        assert_eq!(a.samples(), b.samples());
    }

    #[test]
    fn refuses_cgb_fields_and_other_sample_rates() {
        let mut w = StateWriter::new();
        busy_apu().save_pyboy(&mut w);
        let mut bad = w.buf.clone();
        bad[8] = 0x21; // samples per frame
        let d = SoundOptions::default();
        assert!(Apu::load_pyboy(&mut StateReader::new(&bad), d, false).is_err());
        let mut bad = w.buf.clone();
        bad[24 + d.sample_buffer_len()] = 1; // speed shift
        assert!(Apu::load_pyboy(&mut StateReader::new(&bad), d, false).is_err());
        assert!(
            Apu::load_pyboy(&mut StateReader::new(&w.buf[..w.buf.len() - 1]), d, false).is_err()
        );
    }
}
