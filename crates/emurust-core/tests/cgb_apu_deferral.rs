//! The Game Boy Color APU's deferred turn-end catch-ups (`Apu::defer_turn_end_cgb`) end
//! exactly where catching it up at every turn's end does, in a whole machine: a program that
//! keeps all four channels busy (CH4's counter and LFSR, CH3's wave, CH1's sweep), retriggers
//! and reprograms them at scattered times from interrupts (CH4 triggered from off, NR43
//! divisor changes), scrolls SCX, switches the timer and the HBlank interrupt on and off
//! (long and short halts), and switches between single and double speed, runs with the
//! deferral on and off, sampled and not; every frame's samples and whole machine state must
//! be the same. (Its turns all last an even number of cycles, as programs' seem to, so CH4's
//! alignment differs between eager and deferred chunks only where sample targets, at odd
//! cycles too, split them; the APU's unit test `deferred_cgb_turn_ends_match_eager_catch_ups`
//! has odd turns as well.)

mod common;

use std::sync::Arc;

use emurust_core::apu::SoundOptions;
use emurust_core::gameboy::Options;
use emurust_core::GameBoy;

/// Machine code, with the `LD A,n; LDH (n),A` pairs and backward jumps spelled out.
struct Code(Vec<u8>);

impl Code {
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }
    /// `LD A,value; LDH (0xFF00+reg),A`
    fn set(&mut self, reg: u8, value: u8) -> &mut Self {
        self.bytes(&[0x3E, value, 0xE0, reg])
    }
    /// A relative jump (`op`: JR 0x18, JR NZ 0x20, JR Z 0x28) back to offset `target`.
    fn jr_back(&mut self, op: u8, target: usize) -> &mut Self {
        let rel = target as isize - (self.0.len() as isize + 2);
        self.bytes(&[op, rel as i8 as u8])
    }
}

const MAIN: usize = 0x150;
const WORK: usize = 0x400;
const RNG: [u8; 2] = [0x00, 0xC0]; // C000: the handler's random state
const SWITCH: [u8; 2] = [0x01, 0xC0]; // C001: a speed switch is asked for

/// The program (a 32 KiB CGB-only ROM, see the module docs).
fn program() -> Arc<[u8]> {
    let mut main = Code(Vec::new());
    main.bytes(&[0xF3, 0x31, 0xFE, 0xFF]) // DI; LD SP,FFFE
        .set(0x26, 0x80) // NR52: on
        .set(0x24, 0x77)
        .set(0x25, 0xFF)
        .set(0x1A, 0x80) // CH3: DAC on, 100 %, period 0x700, trigger
        .set(0x1C, 0x20)
        .set(0x1D, 0x00)
        .set(0x1E, 0x87)
        .set(0x10, 0x12) // CH1: sweep up (pace 1, shift 2), 50 %, trigger
        .set(0x11, 0x80)
        .set(0x12, 0xF0)
        .set(0x13, 0x00)
        .set(0x14, 0x86)
        .set(0x16, 0x40) // CH2
        .set(0x17, 0xF1)
        .set(0x19, 0x85)
        .set(0x21, 0xF0) // CH4: full volume, divisor 1, shift 2, trigger
        .set(0x22, 0x21)
        .set(0x23, 0x80)
        .set(0x06, 0xC0) // TMA: 64 ticks of 16 cycles a period
        .set(0x07, 0x05)
        .set(0x41, 0x40) // STAT: LY=LYC source, LYC 0x40
        .set(0x45, 0x40)
        .set(0xFF, 0x07) // IE: VBlank, STAT, timer
        .set(0x0F, 0x00)
        .bytes(&[0x3E, 0x2B, 0xEA, RNG[0], RNG[1]]) // the random state's seed
        .bytes(&[0xAF, 0xEA, SWITCH[0], SWITCH[1]])
        .bytes(&[0xFB]); // EI
    let idle = main.0.len();
    main.bytes(&[0x76, 0x00]) // HALT; NOP
        .bytes(&[0xFA, SWITCH[0], SWITCH[1], 0xB7]) // LD A,(SWITCH); OR A
        .jr_back(0x28, idle)
        // The speed switch, as roms/src/cgb.s does it: IE off, KEY1 armed, STOP.
        .bytes(&[0xAF, 0xEA, SWITCH[0], SWITCH[1]])
        .bytes(&[0xF3, 0xF0, 0xFF, 0x47, 0xAF, 0xE0, 0xFF]) // DI; B = IE; IE = 0
        .set(0x00, 0x30)
        .set(0x4D, 0x01)
        .bytes(&[0x10, 0x00]) // STOP
        .bytes(&[0x78, 0xE0, 0xFF, 0xFB]) // IE = B; EI
        .jr_back(0x18, idle);

    // Every interrupt: a new random byte B (an LCG mixed with DIV), a delay of 1-16 loops,
    // then registers written from B.
    let mut work = Code(Vec::new());
    let dl = 24;
    work.bytes(&[0xF5, 0xC5, 0xE5]) // PUSH AF, BC, HL
        .bytes(&[0xFA, RNG[0], RNG[1], 0x47, 0x87, 0x87, 0x80, 0xC6, 0x3B]) // A = 5 A + 0x3B
        .bytes(&[0xEA, RNG[0], RNG[1]])
        .bytes(&[0x21, 0x04, 0xFF, 0xAE, 0x47]) // B = A ^ DIV
        .bytes(&[0xE6, 0x0F, 0x3C, 0x4F]); // C = (B & 15) + 1
    assert_eq!(work.0.len(), dl);
    work.bytes(&[0x0D]) // DEC C
        .jr_back(0x20, dl)
        .bytes(&[0x78, 0xE0, 0x43]) // SCX = B
        .bytes(&[0x78, 0x07, 0xA0, 0xE6, 0x08, 0xF6, 0x40, 0xE0, 0x41]) // STAT: HBlank 1 in 4
        .bytes(&[0x78, 0xE6, 0x04, 0xF6, 0x01, 0xE0, 0x07]) // TAC: timer on or off
        .bytes(&[0x78, 0xE0, 0x22]) // NR43 = B
        .bytes(&[0x78, 0xE6, 0x01, 0x3D, 0xE6, 0xF0, 0xE0, 0x21]) // NR42: DAC on or off
        .set(0x23, 0x80) // NR44: trigger (from off when the DAC was off)
        .bytes(&[0x78, 0x0F, 0xE0, 0x22]) // NR43 = B rotated: another divisor
        .bytes(&[0x78, 0xE6, 0x7F, 0xE0, 0x10]) // NR10 = B & 0x7F
        .bytes(&[0x78, 0xE6, 0x02, 0x0F, 0x0F, 0xF6, 0x06, 0xE0, 0x14]) // NR14: trigger 1 in 2
        .bytes(&[0x78, 0xE0, 0x1D]) // NR33 = B
        .bytes(&[0x78, 0xE6, 0x80, 0xF6, 0x07, 0xE0, 0x1E]) // NR34: trigger 1 in 2
        .bytes(&[0x78, 0xE6, 0x04, 0x0F, 0x0F, 0x0F, 0xF6, 0x05, 0xE0, 0x19]) // NR24
        // 1 in 32: ask the main loop for a speed switch.
        .bytes(&[
            0x78, 0xE6, 0x7C, 0x20, 0x05, 0x3E, 0x01, 0xEA, SWITCH[0], SWITCH[1],
        ])
        .bytes(&[0xE1, 0xC1, 0xF1, 0xD9]); // POP HL, BC, AF; RETI

    let mut rom = vec![0u8; 0x8000];
    for vector in [0x40, 0x48, 0x50] {
        rom[vector..vector + 3].copy_from_slice(&[0xC3, WORK as u8, (WORK >> 8) as u8]);
    }
    rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, MAIN as u8, (MAIN >> 8) as u8]);
    rom[0x143] = 0x80; // CGB flag: Game Boy Color mode
    rom[MAIN..MAIN + main.0.len()].copy_from_slice(&main.0);
    assert!(MAIN + main.0.len() <= WORK);
    rom[WORK..WORK + work.0.len()].copy_from_slice(&work.0);
    rom[0x14D] = emurust_core::cartridge::header::compute_header_checksum(&rom);
    rom.into()
}

#[test]
fn deferred_cgb_apu_catch_ups_end_as_eager_ones() {
    let rom = program();
    let frames: u32 = if cfg!(debug_assertions) { 300 } else { 1200 };
    for sampled in [false, true] {
        let options = Options {
            cgb: None,
            sound: SoundOptions::default(),
        };
        let mut deferred = GameBoy::with_options(rom.clone(), None, options).unwrap();
        let mut eager = GameBoy::with_options(rom.clone(), None, options).unwrap();
        assert!(deferred.is_cgb_mode());
        eager.apu_turn_deferral = false;
        let (mut double_speed_frames, mut halted_frames) = (0, 0);
        for frame in 0..frames {
            for gb in [&mut deferred, &mut eager] {
                gb.run_frame(false, sampled);
            }
            double_speed_frames += deferred.bus.cgbx.double_speed as u32;
            halted_frames += deferred.cpu.halted as u32;
            let what = format!("sampled={sampled} frame {frame}");
            assert_eq!(
                deferred.bus.apu.samples(),
                eager.bus.apu.samples(),
                "{what}"
            );
            common::assert_same_state(&what, &deferred, &eager);
        }
        // The program did what it is meant to: both speeds, and mostly halted.
        assert!(
            double_speed_frames > frames / 5 && double_speed_frames < frames * 4 / 5,
            "double speed at {double_speed_frames} of {frames} frame ends"
        );
        assert!(
            halted_frames > frames / 2,
            "halted at {halted_frames} of {frames} frame ends"
        );
    }
}
