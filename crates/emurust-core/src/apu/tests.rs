use super::*;

/// Register read masks: the bits that always read as 1 (Pan Docs, "Audio Registers";
/// what PyBoy returns), for FF10-FF2F.
const READ_MASK: [u8; 0x20] = [
    0x80, 0x3F, 0x00, 0xFF, 0xBF, // NR10-NR14
    0xFF, 0x3F, 0x00, 0xFF, 0xBF, // FF15, NR21-NR24
    0x7F, 0xFF, 0x9F, 0xFF, 0xBF, // NR30-NR34
    0xFF, 0xFF, 0x00, 0x00, 0xBF, // FF1F, NR41-NR44
    0x00, 0x00, 0x70, // NR50, NR51, NR52
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, // FF27-FF2F
];

fn powered_apu() -> Apu {
    let mut a = Apu::new(SoundOptions::default());
    a.write(0xFF26, 0x80, 0, 0);
    a
}

fn nr52(a: &mut Apu, now: u64) -> u8 {
    a.read(0xFF26, now)
}

#[test]
fn power_on_reads() {
    let mut a = Apu::new(SoundOptions::default());
    for addr in 0xFF10..0xFF30u16 {
        let expect = READ_MASK[(addr - 0xFF10) as usize];
        assert_eq!(a.read(addr, 0), expect, "{addr:04X}");
    }
    for addr in 0xFF30..0xFF40u16 {
        assert_eq!(a.read(addr, 0), 0xFF, "{addr:04X}");
    }
}

#[test]
fn masks_after_writing_all_ones_and_zeros() {
    let mut a = powered_apu();
    for addr in (0xFF10..0xFF26u16).chain(0xFF27..0xFF30) {
        a.write(addr, 0xFF, 4, 0);
    }
    // Every bit reads back as 1; NR52 shows all four channels triggered (DACs on).
    for addr in 0xFF10..0xFF30u16 {
        assert_eq!(a.read(addr, 4), 0xFF, "{addr:04X}");
    }
    for addr in (0xFF10..0xFF26u16).chain(0xFF27..0xFF30) {
        a.write(addr, 0x00, 8, 0);
    }
    for addr in 0xFF10..0xFF30u16 {
        let expect = match addr {
            // DACs off: every channel is off again; power stays on
            0xFF26 => 0xF0,
            _ => READ_MASK[(addr - 0xFF10) as usize],
        };
        assert_eq!(a.read(addr, 8), expect, "{addr:04X}");
    }
}

#[test]
fn trigger_sets_status_and_dac_off_clears_it() {
    let mut a = powered_apu();
    a.write(0xFF12, 0xF0, 0, 0); // CH1 DAC on
    a.write(0xFF14, 0x80, 0, 0);
    assert_eq!(nr52(&mut a, 0), 0xF1);
    a.write(0xFF17, 0x08, 0, 0); // CH2 DAC on (volume 0, rising)
    a.write(0xFF19, 0x80, 0, 0);
    assert_eq!(nr52(&mut a, 0), 0xF3);
    a.write(0xFF1A, 0x80, 0, 0);
    a.write(0xFF1E, 0x80, 0, 0);
    assert_eq!(nr52(&mut a, 0), 0xF7);
    a.write(0xFF21, 0x10, 0, 0);
    a.write(0xFF23, 0x80, 0, 0);
    assert_eq!(nr52(&mut a, 0), 0xFF);
    a.write(0xFF12, 0x07, 0, 0); // DAC off
    assert_eq!(nr52(&mut a, 0), 0xFE);
    a.write(0xFF1A, 0x00, 0, 0);
    assert_eq!(nr52(&mut a, 0), 0xFA);
    // Trigger with the DAC off does not start the channel.
    a.write(0xFF14, 0x80, 0, 0);
    assert_eq!(nr52(&mut a, 0), 0xFA);
}

#[test]
fn length_expiry_turns_channel_off() {
    // Power on at cycle 0: sequencer events at 8192*k; lengths are clocked on odd steps
    // (k = 1, 3, 5, ...).
    let mut a = powered_apu();
    a.write(0xFF21, 0xF0, 0, 0);
    a.write(0xFF20, 0x3E, 0, 0); // length 2
    a.write(0xFF23, 0xC0, 0, 0); // trigger + length enable (step 0: no extra clock)
    assert_eq!(nr52(&mut a, 100), 0xF8);
    assert_eq!(nr52(&mut a, 8191), 0xF8);
    assert_eq!(nr52(&mut a, 8192), 0xF8); // step 1: length 2 -> 1
    assert_eq!(nr52(&mut a, 3 * 8192 - 1), 0xF8);
    assert_eq!(nr52(&mut a, 3 * 8192), 0xF0); // step 3: 1 -> 0, off
}

#[test]
fn extra_length_clock_in_first_half() {
    // After step 1 (odd), enabling length via NRx4 clocks it once immediately.
    let mut a = powered_apu();
    a.tick(8192 + 10);
    a.write(0xFF21, 0xF0, 8200, 0);
    a.write(0xFF20, 0x3F, 8200, 0); // length 1
    a.write(0xFF23, 0x80, 8200, 0); // trigger, length disabled
    assert_eq!(nr52(&mut a, 8200), 0xF8);
    a.write(0xFF23, 0x40, 8204, 0); // enable length: extra clock 1 -> 0: off
    assert_eq!(nr52(&mut a, 8204), 0xF0);
}

#[test]
fn power_off_clears_registers_but_not_wave_ram() {
    let mut a = powered_apu();
    for (addr, v) in [
        (0xFF10, 0x7F),
        (0xFF11, 0xBF),
        (0xFF12, 0xF3),
        (0xFF24, 0x77),
        (0xFF25, 0xF3),
    ] {
        a.write(addr, v, 0, 0);
    }
    a.write(0xFF30, 0x12, 0, 0);
    a.write(0xFF26, 0x00, 0, 0);
    assert_eq!(a.read(0xFF26, 0), 0x70);
    for addr in 0xFF10..0xFF30u16 {
        assert_eq!(
            a.read(addr, 0),
            READ_MASK[(addr - 0xFF10) as usize],
            "{addr:04X}"
        );
    }
    assert_eq!(a.read(0xFF30, 0), 0x12);
    // While off, writes are ignored (except NRx1 lengths and wave RAM).
    a.write(0xFF12, 0xF0, 0, 0);
    a.write(0xFF11, 0xC0, 0, 0); // duty is not written on DMG while off
    a.write(0xFF24, 0x55, 0, 0);
    a.write(0xFF31, 0x34, 0, 0);
    assert_eq!(a.read(0xFF12, 0), 0x00);
    assert_eq!(a.read(0xFF11, 0), 0x3F);
    assert_eq!(a.read(0xFF24, 0), 0x00);
    assert_eq!(a.read(0xFF31, 0), 0x34);
    a.write(0xFF26, 0x80, 0, 0);
    assert_eq!(a.read(0xFF26, 0), 0xF0);
}

#[test]
fn wave_ram_locked_while_playing() {
    let mut a = powered_apu();
    for i in 0..16u16 {
        a.write(0xFF30 + i, (i as u8) * 0x11, 0, 0);
    }
    a.write(0xFF1A, 0x80, 0, 0);
    a.write(0xFF1D, 0x00, 0, 0); // period 2*(2048) = 4096 cycles per sample
    a.write(0xFF1E, 0x80, 0, 0);
    // The first fetch comes at 4096 + 5 cycles.
    assert_eq!(a.read(0xFF35, 100), 0xFF);
    assert_eq!(a.read(0xFF35, 4100), 0xFF);
    let mut b = Apu::new(SoundOptions::default());
    let mut w = StateWriter::new();
    a.save_state(&mut w);
    b.load_state(&mut StateReader::new(&w.buf)).unwrap();
    assert_eq!(a.read(0xFF35, 4101), 0x00); // fetching sample 1 (byte 0): the byte it fetches
                                            // The window is decided per catch-up: a catch-up that did not cross the fetch closes it.
    assert_eq!(a.read(0xFF35, 4102), 0xFF);
    // A catch-up that crossed the fetch one cycle ago still sees it open.
    assert_eq!(b.read(0xFF35, 4102), 0x00);
    assert_eq!(b.read(0xFF35, 4103), 0xFF);
    // Writes go to the byte being played, too.
    let mut c = Apu::new(SoundOptions::default());
    c.load_state(&mut StateReader::new(&w.buf)).unwrap();
    c.write(0xFF3F, 0xAB, 4101, 0);
    c.write(0xFF3F, 0xCD, 4110, 0); // ignored
    c.write(0xFF1A, 0x00, 4120, 0); // DAC off stops the channel: RAM is free again
    assert_eq!(c.read(0xFF30, 4120), 0xAB);
    assert_eq!(c.read(0xFF3F, 4120), 0xFF);
}

/// On Game Boy Color hardware wave RAM stays reachable while CH3 plays, at the byte CH3 is at:
/// PyBoy's memory view shows that byte between frames (as a CPU read does), not 0xFF.
#[test]
fn debug_read_of_wave_ram_on_cgb_shows_the_current_byte() {
    let mut a = Apu::new(SoundOptions::default());
    a.set_cgb();
    a.write(0xFF26, 0x80, 0, 0);
    for i in 0..16u16 {
        a.write(0xFF30 + i, (i as u8) * 0x11, 0, 0);
    }
    a.write(0xFF1A, 0x80, 0, 0);
    a.write(0xFF1D, 0x00, 0, 0);
    a.write(0xFF1E, 0x80, 0, 0);
    for now in [4101u64, 4102, 8197, 8300, 20000] {
        let mut b = a.clone();
        for addr in 0xFF30..=0xFF3F {
            assert_eq!(
                a.debug_read(addr, now),
                b.read(addr, now),
                "{addr:04X} at {now}"
            );
        }
        a.tick(now);
        assert_ne!(a.debug_read(0xFF30, now), 0xFF, "at {now}");
    }
}

/// The debugger view shows what PyBoy's memory view shows: its read catches the APU up first
/// (empty between frames), which closes CH3's window, so wave RAM reads 0xFF while CH3 plays
/// even in the cycle a CPU read would see the fetched byte. And it changes nothing.
#[test]
fn debug_read_is_pyboys_memory_view() {
    let mut a = powered_apu();
    for i in 0..16u16 {
        a.write(0xFF30 + i, (i as u8) * 0x11, 0, 0);
    }
    a.write(0xFF1A, 0x80, 0, 0);
    a.write(0xFF1D, 0x00, 0, 0);
    a.write(0xFF1E, 0x80, 0, 0);
    a.tick(4101); // the first fetch happens in this catch-up: the window is open
    assert_eq!(a.peek(0xFF30), 0x00);
    for addr in 0xFF30..=0xFF3F {
        assert_eq!(a.debug_read(addr, 4101), 0xFF, "{addr:04X}");
    }
    assert_eq!(a.peek(0xFF30), 0x00, "debug_read left the window open");
    // The registers read as a CPU read at that moment reads them.
    let mut b = a.clone();
    for addr in 0xFF10..0xFF30 {
        assert_eq!(a.debug_read(addr, 4101), b.read(addr, 4101), "{addr:04X}");
    }
    // With the APU lagging behind `now`, the result is that of catching up (on a copy).
    let mut c = a.clone();
    for now in [4102u64, 8197, 8198, 8199, 12294] {
        let mut d = a.clone();
        assert_eq!(a.debug_read(0xFF26, now), d.read(0xFF26, now));
        assert_eq!(
            a.debug_read(0xFF3A, now),
            c.clone().read(0xFF3A, now),
            "at {now}"
        );
    }
    c.tick(8197);
    assert_eq!(c.peek(0xFF30), 0x11, "second fetch: byte 1, window open");
    assert_eq!(
        a.debug_read(0xFF30, 8197),
        0x11,
        "a lagging APU: the catch-up's window"
    );
    // Silent CH3: wave RAM is free, and shown as is.
    a.write(0xFF1A, 0x00, 9000, 0);
    assert_eq!(a.debug_read(0xFF35, 9000), 0x55);
}

#[test]
fn scheduling_hint_first_samples() {
    // Sample targets k * 4194304/48000 accumulated in f64, 512 Hz targets every 8192.
    let mut a = Apu::new(SoundOptions::default());
    assert_eq!(a.cycles_to_interrupt(), 88);
    let mut expected = Vec::new();
    let mut seen = Vec::new();
    let cps = 4194304.0f64 / 48000.0;
    let mut t = cps;
    for now in (0..2000u64).step_by(4) {
        a.tick(now);
        while t <= now as f64 {
            t += cps;
        }
        expected.push(t.ceil() as u64);
        seen.push(a.cycles_to_interrupt());
    }
    assert_eq!(seen, expected);
    assert_eq!(&seen[..4], &[88, 88, 88, 88]);
    assert_eq!(seen[22], 175); // at cycle 88 the next target is 174.76...
}

#[test]
fn scheduling_hint_rounding_quirk() {
    // 375 samples are exactly 32768 cycles, but the f64 accumulated over 375 additions lands
    // just above it, so the 375th sample is not due at 32768 and PyBoy's ceil gives 32769
    // (the exact value would give 32768 + 88 after taking that sample).
    let mut a = Apu::new(SoundOptions::default());
    a.tick(32767);
    assert_eq!(a.cycles_to_interrupt(), 32768); // the 512 Hz target
    a.tick(32768);
    assert_eq!(a.cycles_to_interrupt(), 32769);
    a.tick(32769);
    assert_eq!(a.cycles_to_interrupt(), 32856);
}

#[test]
fn hint_is_not_updated_by_writes() {
    let mut a = Apu::new(SoundOptions::default());
    a.tick(1000);
    let h = a.cycles_to_interrupt();
    a.write(0xFF26, 0x80, 1000, 0x1234);
    assert_eq!(a.cycles_to_interrupt(), h);
    a.on_div_write(1000, 0x1000);
    assert_eq!(a.cycles_to_interrupt(), h);
}

#[test]
fn sampling_off_keeps_hint() {
    let mut a = Apu::new(SoundOptions::default());
    let mut b = Apu::new(SoundOptions::default());
    b.set_sampling(false);
    for now in (0..70224u64).step_by(52) {
        a.tick(now);
        b.tick(now);
        assert_eq!(a.cycles_to_interrupt(), b.cycles_to_interrupt());
    }
    assert_eq!(b.samples().len(), 0);
    assert_eq!(a.samples().len(), 2 * 803);
}

#[test]
fn save_load_round_trip() {
    let mut a = powered_apu();
    a.write(0xFF25, 0xFF, 0, 0);
    a.write(0xFF12, 0xF3, 0, 0);
    a.write(0xFF11, 0x80, 0, 0);
    a.write(0xFF14, 0xC7, 0, 0);
    a.write(0xFF21, 0xA1, 0, 0);
    a.write(0xFF22, 0x31, 0, 0);
    a.write(0xFF23, 0x80, 0, 0);
    a.tick(12345);
    let mut w = StateWriter::new();
    a.save_state(&mut w);
    let mut b = Apu::new(SoundOptions::default());
    b.load_state(&mut StateReader::new(&w.buf)).unwrap();
    let mut w2 = StateWriter::new();
    b.save_state(&mut w2);
    assert_eq!(w.buf, w2.buf);
    for now in (12345..200_000u64).step_by(333) {
        a.tick(now);
        b.tick(now);
        assert_eq!(a.read(0xFF26, now), b.read(0xFF26, now));
        assert_eq!(a.cycles_to_interrupt(), b.cycles_to_interrupt());
    }
    assert_eq!(a.samples(), b.samples());
    // Truncated state is an error, not a panic.
    for cut in [0, 10, w.buf.len() / 2, w.buf.len() - 1] {
        let mut c = Apu::new(SoundOptions::default());
        assert!(c.load_state(&mut StateReader::new(&w.buf[..cut])).is_err());
    }
}

// ------------------------------------------------------------------------------------------
// Replay of traces recorded from PyBoy 2.8.1 by tools/apu_trace.py (see its docstring)
// ------------------------------------------------------------------------------------------

/// One recorded interaction, with absolute cycle stamps; `hint` is PyBoy's
/// `sound._cycles_to_interrupt` right after it.
#[derive(Debug)]
enum Ev {
    Tick {
        now: u64,
        sampling: bool,
    },
    Read {
        addr: u16,
        value: u8,
        now: u64,
    },
    Write {
        addr: u16,
        value: u8,
        now: u64,
        div: u16,
    },
    Div {
        now: u64,
        div: u16,
    },
    Buffer(Vec<i8>),
    Init,
}

fn parse_trace(data: &[u8]) -> Vec<(Ev, u64, usize)> {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(data)
        .read_to_string(&mut text)
        .unwrap();
    let mut last = 0i64;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let f: Vec<i64> = line[1..]
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        let (ev, hint) = match &line[..1] {
            "I" => (Ev::Init, f[0]),
            "T" => {
                last += f[0];
                (
                    Ev::Tick {
                        now: last as u64,
                        sampling: f[1] == 1,
                    },
                    last + f[2],
                )
            }
            "R" => {
                last += f[2];
                let ev = Ev::Read {
                    addr: 0xFF10 + f[0] as u16,
                    value: f[1] as u8,
                    now: last as u64,
                };
                (ev, last + f[3])
            }
            "W" => {
                last += f[2];
                let ev = Ev::Write {
                    addr: 0xFF10 + f[0] as u16,
                    value: f[1] as u8,
                    now: last as u64,
                    div: f[3] as u16,
                };
                (ev, last + f[4])
            }
            "D" => {
                last += f[0];
                (
                    Ev::Div {
                        now: last as u64,
                        div: f[1] as u16,
                    },
                    last + f[2],
                )
            }
            "B" => {
                let n = f[0] as usize;
                let bytes = f[1..1 + n].iter().map(|&x| x as i8).collect();
                (Ev::Buffer(bytes), last + f[1 + n])
            }
            _ => panic!("bad trace line {}: {line:.80}", n + 1),
        };
        out.push((ev, hint as u64, n + 1));
    }
    out
}

fn replay(name: &str, data: &[u8]) {
    let events = parse_trace(data);
    let mut apu = Apu::new(SoundOptions::default());
    let mut counts = [0usize; 5];
    for (i, (ev, hint, line)) in events.iter().enumerate() {
        let ctx = || format!("{name}:{line}: {ev:?}");
        match ev {
            Ev::Init => {}
            Ev::Tick { now, sampling } => {
                apu.set_sampling(*sampling);
                // PyBoy's Motherboard catches the sound unit up right before each access;
                // our read/write/on_div_write do that catch-up themselves.
                let pre_access = match events.get(i + 1) {
                    Some((Ev::Read { now: t, .. }, _, _))
                    | Some((Ev::Write { now: t, .. }, _, _))
                    | Some((Ev::Div { now: t, .. }, _, _)) => t == now,
                    _ => false,
                };
                if pre_access {
                    continue; // its hint is checked after the access (same value)
                }
                apu.tick(*now);
                counts[0] += 1;
            }
            Ev::Read { addr, value, now } => {
                assert_eq!(apu.read(*addr, *now), *value, "{}", ctx());
                counts[1] += 1;
            }
            Ev::Write {
                addr,
                value,
                now,
                div,
            } => {
                apu.write(*addr, *value, *now, *div);
                counts[2] += 1;
            }
            Ev::Div { now, div } => {
                apu.on_div_write(*now, *div);
                counts[3] += 1;
            }
            Ev::Buffer(bytes) => {
                assert_eq!(apu.samples(), &bytes[..], "samples at {name}:{line}");
                apu.clear_samples();
                counts[4] += 1;
            }
        }
        assert_eq!(apu.cycles_to_interrupt(), *hint, "hint after {}", ctx());
        if i % 997 == 0 {
            // save -> load -> continue must be indistinguishable
            let mut w = StateWriter::new();
            apu.save_state(&mut w);
            let mut b = Apu::new(SoundOptions::default());
            b.load_state(&mut StateReader::new(&w.buf)).unwrap();
            apu = b;
        }
    }
    eprintln!(
        "{name}: ticks {} reads {} writes {} div-writes {} frames {}",
        counts[0], counts[1], counts[2], counts[3], counts[4]
    );
    assert!(counts[1] + counts[2] > 1000, "trace too small");
}

/// A random mix of register writes/reads, wave RAM and DIV writes, with delays.
#[test]
fn replay_pyboy_trace_random1() {
    replay("random1", include_bytes!("testdata/trace_random1.txt.gz"));
}

/// Wave RAM at many phases, NRx4 length quirks, DIV-write/power-on, sweep, envelopes.
#[test]
fn replay_pyboy_trace_directed1() {
    replay(
        "directed1",
        include_bytes!("testdata/trace_directed1.txt.gz"),
    );
}

/// Sweep's delayed overflow check, the sequencer skip after DIV writes, length re-clocking,
/// wave RAM in tight loops with sampling on and off (two phase variants).
#[test]
fn replay_pyboy_trace_directed2() {
    replay(
        "directed2",
        include_bytes!("testdata/trace_directed2.txt.gz"),
    );
}

#[test]
fn replay_pyboy_trace_directed2b() {
    replay(
        "directed2b",
        include_bytes!("testdata/trace_directed2b.txt.gz"),
    );
}

#[test]
fn first_frame_hints_match_pyboy() {
    // The boot ROM's first slices: PyBoy's values, straight from the trace.
    let ev = parse_trace(include_bytes!("testdata/trace_random1.txt.gz"));
    let hints: Vec<u64> = ev.iter().take(14).map(|e| e.1).collect();
    assert_eq!(hints[..3], [88, 88, 88]);
    let mut a = Apu::new(SoundOptions::default());
    for (now, want) in [
        (12, 88),
        (100, 175),
        (276, 350),
        (636, 700),
        (1336, 1399),
        (2736, 2797),
    ] {
        a.tick(now);
        assert_eq!(a.cycles_to_interrupt(), want, "at {now}");
    }
    for (now, want) in [
        (5536, 5593),
        (11136, 11185),
        (22324, 22370),
        (44700, 44740),
        (70224, 70255),
    ] {
        a.tick(now);
        assert_eq!(a.cycles_to_interrupt(), want, "at {now}");
    }
}

#[test]
fn power_off_keeps_length_timers() {
    // DMG: length timers survive power-off (Pan Docs, "Audio Details").
    let mut a = powered_apu();
    a.write(0xFF20, 0x3F, 0, 0); // CH4 length 1
    a.write(0xFF26, 0x00, 0, 0);
    a.write(0xFF26, 0x80, 0, 0);
    a.write(0xFF21, 0xF0, 0, 0);
    a.write(0xFF23, 0xC0, 0, 0); // trigger + length at step 0: length stays 1
    assert_eq!(nr52(&mut a, 8191), 0xF8);
    assert_eq!(nr52(&mut a, 8192), 0xF0);
}

#[test]
fn ceil_cycles_matches_f64_ceil() {
    let mut t = 0.0f64;
    // The accumulated sample targets of many frames, and a spread of awkward values.
    for _ in 0..2_000_000 {
        assert_eq!(ceil_cycles(t), t.ceil() as u64, "{t}");
        t += SoundOptions::default().cycles_per_sample();
    }
    for t in [
        0.0,
        0.5,
        1.0,
        8192.0,
        (1u64 << 52) as f64 + 0.5,
        (1u64 << 53) as f64,
        // Either side of the signed fast path's limit, and outside the domain.
        (1u64 << 62) as f64 - 1024.0,
        (1u64 << 62) as f64,
        (1u64 << 62) as f64 + 0.25e6,
        -0.5,
        -1.0,
        f64::NAN,
        9.0e18,
        1.8e19,
        1.0e300,
        f64::MAX,
    ] {
        assert_eq!(ceil_cycles(t), t.ceil() as u64, "{t}");
    }
}

/// Counters of a corrupt state are rejected when it loads instead of being run, where they
/// overflowed (debug builds panicked) or, for the sweep's shadow period, made no sense.
#[test]
fn corrupt_counters_are_rejected() {
    let corruptions: [fn(&mut Apu); 7] = [
        |a| a.ch1.env.countdown = i64::MIN,
        |a| a.ch2.countdown = i64::MAX,
        |a| a.ch3.length.remaining = -(1 << 50),
        |a| a.ch4.env.volume = i64::MIN,
        |a| a.ch4.countdown = i64::MIN,
        |a| a.sweep.shadow = -1,
        |a| a.sweep.check_delay = i64::MIN,
    ];
    for (i, corrupt) in corruptions.iter().enumerate() {
        let mut a = powered_apu();
        corrupt(&mut a);
        let mut w = StateWriter::new();
        a.save_state(&mut w);
        let e = Apu::new(SoundOptions::default()).load_state(&mut StateReader::new(&w.buf));
        assert!(matches!(e, Err(CoreError::State(_))), "case {i}");
    }
    let mut w = StateWriter::new();
    powered_apu().save_state(&mut w);
    Apu::new(SoundOptions::default())
        .load_state(&mut StateReader::new(&w.buf))
        .unwrap();
}

/// The APU's clock, its sequencer step and its targets must fit together (checked by the
/// machine for every state it loads).
#[test]
fn clock_and_targets_must_fit_together() {
    let (max_count, max_distance) = (1 << 62, 1 << 24);
    let mut a = powered_apu();
    a.tick(100_000);
    assert!(a.check_times(max_count, max_distance).is_ok());
    let corruptions: [fn(&mut Apu); 4] = [
        |a| a.clock = u64::MAX,
        |a| a.seq_step = u64::MAX,
        |a| a.next_sample = 1e30,
        |a| a.next_seq = 0.0,
    ];
    for (i, corrupt) in corruptions.iter().enumerate() {
        let mut b = powered_apu();
        b.tick(100_000_000);
        corrupt(&mut b);
        assert!(b.check_times(max_count, max_distance).is_err(), "case {i}");
    }
}

/// Without sound emulation (PyBoy's `sound_emulated=False`): FF10-FF3F read 0, writes change
/// nothing, no samples, the hint stays MAX_CYCLES; what PyBoy's Motherboard keeps doing around
/// its sound object (the DIV-write flag, the NR52 power-on realignment) still happens.
#[test]
fn not_emulated_is_pyboys_sound_off() {
    let off = SoundOptions {
        emulated: false,
        sample_rate: 48000,
    };
    let mut a = Apu::new(off);
    assert_eq!(a.cycles_to_interrupt(), MAX_CYCLES);
    a.write(0xFF26, 0x80, 100, 0);
    for (addr, v) in [
        (0xFF12u16, 0xF0u8),
        (0xFF14, 0x87),
        (0xFF30, 0x12),
        (0xFF24, 0x77),
    ] {
        a.write(addr, v, 200, 0);
    }
    for addr in 0xFF10..0xFF40 {
        assert_eq!(a.read(addr, 300), 0, "{addr:04X}");
        assert_eq!(a.debug_read(addr, 300), 0, "{addr:04X}");
    }
    a.set_sampling(true);
    a.tick(100_000);
    assert!(a.samples().is_empty());
    assert_eq!(a.cycles_to_interrupt(), MAX_CYCLES);
    assert_eq!(a.caught_up_to, 100_000);
    assert_eq!(a.clock, 0, "PyBoy's sound.cycles stays 0");
    // A DIV write on the APU bit's falling edge, then NR52 power-on while the bit is set
    // again: the flag and the realigned frame-sequencer target (from sound.cycles = 0).
    a.on_div_write(100_100, 0x1000);
    assert!(a.div_edge_written);
    assert_eq!(a.next_seq, MAX_CYCLES as f64);
    a.write(0xFF26, 0x80, 100_200, 0x1234);
    assert_eq!(a.seq_mode, SEQ_SKIP);
    assert_eq!(a.seq_step, 1);
    assert_eq!(a.next_seq, (0x2000 - 0x1234) as f64);
    a.write(0xFF14, 0x00, 100_300, 0);
    assert!(!a.div_edge_written);
    assert_eq!(a.cycles_to_interrupt(), MAX_CYCLES);
    assert!(!a.powered);
}

/// The sample rate changes the sample period, the buffer and the chunking; registers and
/// channels run the same at every rate.
#[test]
fn other_sample_rates() {
    for rate in [1u32, 8000, 22050, 44100, 96000, 4_194_304] {
        let opts = SoundOptions {
            emulated: true,
            sample_rate: rate,
        };
        let mut a = Apu::new(opts);
        let mut b = Apu::new(SoundOptions::default());
        assert_eq!(
            a.cycles_to_interrupt(),
            ceil_cycles(opts.cycles_per_sample().min(8192.0))
        );
        for apu in [&mut a, &mut b] {
            apu.write(0xFF26, 0x80, 40, 0);
            apu.write(0xFF25, 0xFF, 44, 0);
            apu.write(0xFF12, 0xF3, 48, 0);
            apu.write(0xFF14, 0xC7, 52, 0);
        }
        let mut total = 0;
        for k in 1..=30u64 {
            let now = k * 70224;
            a.set_sampling(true);
            a.clear_samples();
            a.tick(now);
            b.tick(now);
            total += a.samples().len() / 2;
            assert!(a.samples().len() <= opts.sample_buffer_len());
            for addr in 0xFF10..0xFF30 {
                assert_eq!(a.read(addr, now), b.read(addr, now), "{rate} Hz {addr:04X}");
            }
        }
        // (the samples of the first 52 cycles, before the first clear, are not counted)
        let expect = ((30.0 * 70224.0 - 52.0) / opts.cycles_per_sample()) as usize;
        assert!(
            total.abs_diff(expect) <= 1,
            "{rate} Hz: {total} samples, {expect} expected"
        );
    }
}

/// A state must not depend on when a channel's lazy timer last settled: a silent channel
/// (here CH2 at volume 0, on CGB hardware with a duty change waiting for the next duty step)
/// is not settled by sampling, and its save must still equal one taken right after a settle.
#[test]
fn saved_state_does_not_depend_on_when_timers_settled() {
    let mut a = Apu::new(SoundOptions::default());
    a.set_cgb();
    a.write(0xFF26, 0x80, 0, 0);
    a.write(0xFF25, 0xFF, 0, 0);
    a.write(0xFF17, 0x08, 0, 0); // CH2: DAC on, volume 0, rising envelope paused
    a.write(0xFF16, 0x00, 0, 0);
    a.write(0xFF18, 0x00, 0, 0);
    a.write(0xFF19, 0x87, 0, 0); // trigger, period 4 * 0x100 cycles
    a.write(0xFF16, 0xC0, 8, 0); // duty 3, applied at the next duty step
    a.tick(20_000); // sampled: several duty steps, none settled
    let mut unsettled = StateWriter::new();
    a.save_state(&mut unsettled);
    a.save_cgb_state(&mut unsettled);
    a.write(0xFF18, 0x00, 20_000, 0); // same period: only settles the timer
    let mut settled = StateWriter::new();
    a.save_state(&mut settled);
    a.save_cgb_state(&mut settled);
    assert_eq!(unsettled.buf, settled.buf);
    assert_eq!(a.read(0xFF16, 20_000), 0xFF, "the duty change applied");
}

/// The lazy channel timers (pulse duty timers, the noise channel's LFSR clock and the CGB's
/// noise counter) must give exactly what settling them after every catch-up chunk gives:
/// register reads, samples and saved states, through random register writes (triggers,
/// length expiry, DAC off, NR43 and NR51 changes, power off and on) with sampling on and off.
/// The eager side never takes `sample_span`'s silent path, so the lazy side's silent spans
/// are checked against the general loop too.
#[test]
fn lazy_channel_timers_match_eager_ones() {
    let mut next = crate::test_rng::xorshift(0x9E37_79B9_7F4A_7C15);
    // Registers of the lazy channels and the mixer, weighted by repetition.
    const REGS: [u16; 20] = [
        0xFF11, 0xFF12, 0xFF13, 0xFF14, 0xFF16, 0xFF17, 0xFF18, 0xFF19, 0xFF20, 0xFF21, 0xFF21,
        0xFF22, 0xFF22, 0xFF23, 0xFF23, 0xFF25, 0xFF25, 0xFF26, 0xFF10, 0xFF1A,
    ];
    for cgb in [false, true] {
        for _ in 0..30 {
            let mut lazy = Apu::new(SoundOptions::default());
            if cgb {
                lazy.set_cgb();
            }
            let mut eager = lazy.clone();
            eager.eager_timers = true;
            let mut now = 0u64;
            for apu in [&mut lazy, &mut eager] {
                apu.write(0xFF26, 0x80, 0, 0);
            }
            for step in 0..1500 {
                now += match next() % 8 {
                    0 => next() % 20_000,
                    1..=3 => next() % 8,
                    _ => next() % 400,
                };
                let r = next();
                let addr = REGS[(r % REGS.len() as u64) as usize];
                let mut value = (r >> 8) as u8;
                match addr {
                    // Mostly keep the APU on, and the DACs on (volume 0 now and then).
                    0xFF26 => value = if value < 16 { 0 } else { 0x80 },
                    0xFF12 | 0xFF17 | 0xFF21 if value & 0x0F < 4 => value &= 0x0F,
                    // Triggers with the length timer on, to have channels expire.
                    0xFF14 | 0xFF19 | 0xFF23 if value & 0x80 != 0 => value |= 0x40,
                    // Short lengths.
                    0xFF11 | 0xFF16 | 0xFF20 => value |= 0x38,
                    _ => {}
                }
                let sampling = !(r >> 16).is_multiple_of(4);
                for apu in [&mut lazy, &mut eager] {
                    apu.set_sampling(sampling);
                    apu.write(addr, value, now, 0);
                }
                let read = 0xFF10 + ((r >> 24) % 0x17) as u16;
                assert_eq!(
                    lazy.read(read, now),
                    eager.read(read, now),
                    "cgb {cgb}, step {step}: {read:04X}"
                );
                if cgb {
                    assert_eq!(lazy.pcm12(), eager.pcm12(), "step {step}: PCM12");
                    assert_eq!(lazy.pcm34(), eager.pcm34(), "step {step}: PCM34");
                }
                if step % 5 == 4 {
                    assert_eq!(lazy.samples(), eager.samples(), "step {step}: samples");
                    let (mut a, mut b) = (StateWriter::new(), StateWriter::new());
                    lazy.save_state(&mut a);
                    eager.save_state(&mut b);
                    if cgb {
                        lazy.save_cgb_state(&mut a);
                        eager.save_cgb_state(&mut b);
                    }
                    let (mut pa, mut pb) = (StateWriter::new(), StateWriter::new());
                    lazy.save_pyboy(&mut pa);
                    eager.save_pyboy(&mut pb);
                    assert!(a.buf == b.buf && pa.buf == pb.buf, "step {step}: states");
                    lazy.clear_samples();
                    eager.clear_samples();
                }
            }
        }
    }
}

/// Game Boy Color: the scheduler's turn-end catch-ups deferred while they can wait
/// ([`Apu::lagging_turn_end`], made up by the next access or by the frame's end) must leave
/// exactly what catching up at every turn's end leaves: samples, register reads and saved
/// states, in single and double speed, sampling on and off, through random register writes
/// (CH4 triggered from off, which reads the alignment that each catch-up's chunks move, NR43
/// divisor changes, CH1's sweep, CH3, NR52 power cycles). The turn ends fall at any cycle,
/// odd ones included (programs' turns do not seem to: their CPU cycles between turn ends are
/// even, so neither the odd cycle double speed drops per catch-up nor CH4's per-chunk
/// alignment shows there; here both do).
#[test]
fn deferred_cgb_turn_ends_match_eager_catch_ups() {
    let mut next = crate::test_rng::xorshift(0xD1B5_4A32_D192_ED03);
    const REGS: [u16; 24] = [
        0xFF10, 0xFF10, 0xFF12, 0xFF13, 0xFF14, 0xFF14, 0xFF17, 0xFF19, 0xFF1A, 0xFF1D, 0xFF1E,
        0xFF21, 0xFF21, 0xFF22, 0xFF22, 0xFF22, 0xFF23, 0xFF23, 0xFF23, 0xFF23, 0xFF25, 0xFF26,
        0xFF24, 0xFF11,
    ];
    // Deferred turn ends: all, with an odd number of APU cycles, with an odd number of CPU
    // cycles in double speed, and past a sample target.
    let (mut deferred_turns, mut odd, mut odd_double, mut past_samples) = (0u64, 0, 0, 0);
    for run in 0..40 {
        let mut deferred = Apu::new(SoundOptions::default());
        deferred.set_cgb();
        let mut eager = deferred.clone();
        let mut now = 0u64;
        for apu in [&mut deferred, &mut eager] {
            apu.write(0xFF26, 0x80, 0, 0);
            apu.write(0xFF25, 0xFF, 0, 0);
            apu.write(0xFF21, 0xF0, 0, 0);
            apu.write(0xFF23, 0x80, 0, 0);
        }
        for frame in 0..40 {
            for step in 0..60 {
                // A few turn ends (any length, mostly short), then maybe an access.
                for _ in 0..next() % 12 {
                    now += match next() % 8 {
                        0 => next() % 3000,
                        1..=2 => 1 + next() % 8,
                        _ => 1 + next() % 300,
                    };
                    let (owed, cpu_cycles) = (deferred.lag.cycles, now - deferred.caught_up_to);
                    let sample_at = deferred.lag.sample_at;
                    deferred.lagging_turn_end(now);
                    if deferred.lag.cycles > owed {
                        deferred_turns += 1;
                        past_samples += (owed != 0 && deferred.lag.sample_at != sample_at) as u64;
                        odd += (cpu_cycles >> deferred.speed_shift) & 1;
                        odd_double += cpu_cycles & deferred.speed_shift as u64 & 1;
                    }
                    eager.tick(now);
                }
                let r = next();
                match r % 4 {
                    0 => {
                        let addr = REGS[((r >> 8) % REGS.len() as u64) as usize];
                        let mut value = (r >> 16) as u8;
                        match addr {
                            0xFF26 => value = if value < 24 { 0 } else { 0x80 },
                            0xFF21 if value & 0x0F < 6 => value &= 0x0F, // DAC off: CH4 off
                            0xFF12 | 0xFF17 => value |= 0x80,
                            0xFF1A => value |= 0x80,
                            // Sweeps without shift (the CGB calculates a moment after the
                            // sequencer's clock), and periods that overflow doubled.
                            0xFF10 if value & 0x80 != 0 => value &= 0x70,
                            0xFF14 => value |= 0x04,
                            _ => {}
                        }
                        if addr == 0xFF26 && value != 0 {
                            // Back on: the channels and routes as at the start.
                            for apu in [&mut deferred, &mut eager] {
                                apu.write(0xFF26, 0x80, now, 0);
                                apu.write(0xFF25, 0xFF, now, 0);
                            }
                        } else {
                            for apu in [&mut deferred, &mut eager] {
                                apu.write(addr, value, now, 0);
                            }
                        }
                    }
                    1 => {
                        let read = 0xFF10 + ((r >> 8) % 0x30) as u16;
                        let what = format!("run {run} frame {frame} step {step}: {read:04X}");
                        assert_eq!(deferred.read(read, now), eager.read(read, now), "{what}");
                    }
                    _ => {}
                }
            }
            // The frame's end: the make-up, then everything compared.
            deferred.catch_up_if_behind(now);
            eager.catch_up_if_behind(now);
            let what = format!("run {run} frame {frame}");
            assert_eq!(deferred.samples(), eager.samples(), "{what}: samples");
            assert_eq!(deferred.cycles_to_interrupt(), eager.cycles_to_interrupt());
            let (mut a, mut b) = (StateWriter::new(), StateWriter::new());
            for (apu, w) in [(&deferred, &mut a), (&eager, &mut b)] {
                apu.save_state(w);
                apu.save_cgb_state(w);
                apu.save_pyboy(w);
            }
            assert!(a.buf == b.buf, "{what}: states differ");
            // The next frame: sampling on or off, now and then the other speed (the CPU's
            // STOP catches the APU up first).
            let r = next();
            for apu in [&mut deferred, &mut eager] {
                apu.clear_samples();
                apu.set_sampling(!r.is_multiple_of(3));
                if (r >> 8).is_multiple_of(4) {
                    apu.tick(now);
                    apu.speed_shift ^= 1;
                }
            }
        }
    }
    assert!(
        deferred_turns > 100_000 && odd > 10_000 && odd_double > 10_000 && past_samples > 10_000,
        "{deferred_turns} turn ends deferred, {odd} odd, {odd_double} odd in double speed, \
         {past_samples} past samples"
    );
}

/// The sum one target at a time (what `pass_targets` must equal).
fn pass_targets_one_by_one(mut t: f64, c: f64, limit: f64) -> (u64, f64, f64) {
    let (mut passed, mut last) = (0u64, t);
    while t <= limit {
        last = t;
        passed += 1;
        t += c;
    }
    (passed, last, t)
}

/// `pass_targets` from `t` to `limit` against the one-by-one sum (count, last and next target,
/// bit for bit); how many it passed, and the next target.
fn assert_passes_like_the_sum(t: f64, c: f64, limit: f64, what: &str) -> (u64, f64) {
    let fast = super::pass_targets(t, c, limit);
    let slow = pass_targets_one_by_one(t, c, limit);
    assert_eq!(
        (fast.0, fast.1.to_bits(), fast.2.to_bits()),
        (slow.0, slow.1.to_bits(), slow.2.to_bits()),
        "step {c}, {what}: from {t} to {limit}"
    );
    (slow.0, slow.2)
}

/// `pass_targets`'s closed form against adding one target at a time: from power-on (the
/// first target at `c`) through more than a million targets, at PyBoy's rates and odd ones
/// (among them steps that fall halfway between two multiples of a binade's spacing, where
/// rounding goes to the even one), in jumps of every length from 0 to past several binades,
/// and up to 2^53.
#[test]
fn sample_targets_in_closed_form_match_the_running_sum() {
    let mut next = crate::test_rng::xorshift(0x5EED_F00D_1234_5678);
    // 4194304 Hz / rate (48 kHz's step ties in [128, 256)); steps ending in a bit 2^-33 tie
    // in [2^20, 2^21); 1.0: every sum exact.
    let steps = [
        4_194_304.0 / 48_000.0,
        4_194_304.0 / 44_100.0,
        4_194_304.0 / 22_050.0,
        4_194_304.0 / 32_768.0,
        4_194_304.0 / 12_345.0,
        4_194_304.0 / 1.0,
        1.0,
        0.75,
        3.0 / 32.0,
        1.5,
        87.5,
        1.0 + 1.0 / (1u64 << 33) as f64,
        87.0 + 1.0 / (1u64 << 33) as f64,
    ];
    for c in steps {
        let mut t = c;
        let mut checked = 0u64;
        while checked < 1_200_000 {
            let span = match next() % 4 {
                0 => (next() % 16) as f64 * c,
                1 => (next() % 4096) as f64 * c,
                2 => (next() % 200_000) as f64 * c,
                _ => (next() % 1000) as f64,
            };
            let limit = (t + span).floor();
            let (passed, after) = assert_passes_like_the_sum(t, c, limit, "from power-on");
            checked += passed.max(1);
            t = after;
        }
        // Up to 2^53, the last binade's end (steps of at least 1: smaller ones stop moving
        // the sum before it, one at a time as in closed form).
        if c < 1.0 {
            continue;
        }
        let t = (1u64 << 53) as f64 - 1000.0 * c;
        assert_passes_like_the_sum(t, c, (1u64 << 53) as f64 - 1.0, "near 2^53");
    }
}

/// `sample_targets` (the post-boot snapshot's targets at another sample rate) against the sum
/// one target at a time from power-on, counting those in (`since`, `now`]; `since` past `now`
/// included.
#[test]
fn sample_targets_match_the_running_sum_from_power_on() {
    let mut next = crate::test_rng::xorshift(0x00DD_BA11_5A3E);
    for rate in [48_000.0, 44_100.0, 22_050.0, 32_768.0, 12_345.0] {
        let c = 4_194_304.0 / rate;
        for _ in 0..200 {
            let now = next() % 20_000_000;
            let since = if next().is_multiple_of(8) {
                now + next() % 1000
            } else {
                now.saturating_sub(next() % 70_224)
            };
            let (mut t, mut n) = (c, 0usize);
            while t <= now as f64 {
                n += (t > since as f64) as usize;
                t += c;
            }
            let (next_target, taken) = super::sample_targets(c, since, now);
            assert_eq!(
                (next_target.to_bits(), taken),
                (t.to_bits(), n),
                "rate {rate}, since {since}, now {now}"
            );
        }
    }
}
