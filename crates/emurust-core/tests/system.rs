//! Whole-machine behaviours that the CPU vectors cannot show.

mod common;

use std::sync::Arc;

use emurust_core::GameBoy;

/// A 32 KiB ROM-only image with `program` at 0x150 and a valid header.
fn rom_with(program: &[u8]) -> Arc<[u8]> {
    let mut rom = vec![0u8; 0x8000];
    rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]);
    rom[0x150..0x150 + program.len()].copy_from_slice(program);
    rom[0x14D] = emurust_core::cartridge::header::compute_header_checksum(&rom);
    rom.into()
}

#[test]
fn illegal_opcode_locks_the_cpu_and_time_goes_on() {
    // LD A,0x42; LD (0xC000),A; <illegal 0xD3>; LD A,0x99; LD (0xC000),A
    let mut gb = GameBoy::new(
        rom_with(&[
            0x3E, 0x42, 0xEA, 0x00, 0xC0, 0xD3, 0x3E, 0x99, 0xEA, 0x00, 0xC0,
        ]),
        None,
    )
    .unwrap();
    let start = gb.bus.cycles;
    gb.tick(10, true, true);
    assert!(gb.cpu.locked);
    assert_eq!(
        gb.bus.peek(0xC000),
        0x42,
        "nothing after the illegal opcode runs"
    );
    assert!(gb.bus.cycles >= start + 10 * 70224 - 70224);
    assert_eq!(gb.frames, 10);
    // the LCD keeps producing frames and interrupts keep being flagged
    assert_ne!(gb.bus.if_reg & 1, 0);
}

#[test]
fn halt_with_ime_off_resumes_when_an_interrupt_is_pending() {
    // DI; LD A,1; LDH (IE),A (VBlank); HALT; LD A,0x55; LD (0xC000),A; JR -2
    let program = [
        0xF3, 0x3E, 0x01, 0xE0, 0xFF, 0x76, 0x3E, 0x55, 0xEA, 0x00, 0xC0, 0x18, 0xFE,
    ];
    let mut gb = GameBoy::new(rom_with(&program), None).unwrap();
    gb.tick(1, false, false);
    gb.tick(2, false, false);
    assert_eq!(gb.bus.peek(0xC000), 0x55);
    assert!(!gb.cpu.halted);
}

#[test]
fn interrupt_dispatch_pushes_pc_and_jumps_to_the_vector() {
    // at 0x40: LD A,0x77; LD (0xC001),A; RETI
    let mut program = vec![0u8; 0];
    // main: LD A,1; LDH (IE),A; EI; loop: JR -2
    program.extend_from_slice(&[0x3E, 0x01, 0xE0, 0xFF, 0xFB, 0x18, 0xFE]);
    let mut rom = rom_with(&program).to_vec();
    rom[0x40..0x46].copy_from_slice(&[0x3E, 0x77, 0xEA, 0x01, 0xC0, 0xD9]);
    let mut gb = GameBoy::new(rom.into(), None).unwrap();
    gb.tick(3, false, false);
    assert_eq!(gb.bus.peek(0xC001), 0x77);
    assert!(gb.cpu.ime, "RETI re-enabled interrupts");
}

#[test]
fn save_state_resume_is_identical_and_deterministic() {
    let rom: Arc<[u8]> =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../games/dodge.gb"))
            .unwrap()
            .into();
    let mut a = GameBoy::new(rom.clone(), None).unwrap();
    a.tick(80, false, true);
    a.set_buttons(emurust_core::joypad::button::START);
    a.tick(3, false, true);
    a.set_buttons(0);
    let state = a.save_state();
    let mut b = GameBoy::new(rom, None).unwrap();
    b.load_state(&state).unwrap();
    for gb in [&mut a, &mut b] {
        gb.set_buttons(emurust_core::joypad::button::LEFT);
        gb.tick(100, true, true);
    }
    assert_eq!(a.save_state(), b.save_state());
    assert_eq!(a.bus.lcd.screen_rgba(), b.bus.lcd.screen_rgba());
}

/// OAM bytes still holding the first source pattern after this program: switch the LCD and
/// the APU off (so that no device event ends a CPU slice for a long while), fill C100-C19F
/// with 0x11, start an OAM DMA from C1, wait 32 M-cycles, write 0x12 to the register `reg`
/// (FF00+reg), refill the source with 0x22 using work RAM writes only (which do not make the
/// DMA catch up), wait for the transfer to end. The DMA copies lazily, when the CPU slice ends
/// or the program touches memory that could see it, so the count tells how far it had got
/// when the write was made.
fn dma_bytes_copied_before_refill(reg: u8) -> usize {
    #[rustfmt::skip]
    let program = [
        0xAF, 0xE0, 0x40, 0xE0, 0x26,             // XOR A; LDH (40),A; LDH (26),A
        0x21, 0x00, 0xC1, 0x0E, 0xA0, 0x3E, 0x11, // LD HL,C100; LD C,160; LD A,11
        0x22, 0x0D, 0x20, 0xFC,                   // fill: LD (HL+),A; DEC C; JR NZ,fill
        0x3E, 0xC1, 0xE0, 0x46,                   // LD A,C1; LDH (46),A
        0x06, 0x08, 0x05, 0x20, 0xFD,             // LD B,8; DEC B; JR NZ,-3
        0x3E, 0x12, 0xE0, reg,                    // LD A,12; LDH (reg),A
        0x21, 0x00, 0xC1, 0x0E, 0xA0, 0x3E, 0x22, // LD HL,C100; LD C,160; LD A,22
        0x22, 0x0D, 0x20, 0xFC,                   // refill
        0x06, 0xC8, 0x05, 0x20, 0xFD,             // LD B,200; DEC B; JR NZ,-3
        0x18, 0xFE,                               // JR -2
    ];
    let mut gb = GameBoy::new(rom_with(&program), None).unwrap();
    gb.tick(2, false, false);
    let oam = gb.bus.lcd.oam();
    assert!(oam.iter().all(|&b| b == 0x11 || b == 0x22), "{oam:?}");
    oam.iter().filter(|&&b| b == 0x11).count()
}

#[test]
fn a_write_to_ly_does_not_end_the_cpu_slice() {
    // PyBoy ends its CPU slice after every write to FF00-FF4B except LY (FF44), which it
    // ignores before reaching that point. A write to SCY (FF42) ends the slice: the DMA
    // catches up right then, copying more of the old pattern than after the LY write.
    let after_scy = dma_bytes_copied_before_refill(0x42);
    let after_ly = dma_bytes_copied_before_refill(0x44);
    let after_unmapped = dma_bytes_copied_before_refill(0x4C);
    eprintln!("old bytes: SCY {after_scy}, LY {after_ly}, FF4C {after_unmapped}");
    assert!(after_scy > after_ly, "SCY {after_scy}, LY {after_ly}");
    assert_eq!(
        after_ly, after_unmapped,
        "LY behaves like an unmapped register"
    );
}

#[test]
fn the_memory_view_of_oam_reads_ff_while_a_started_dma_runs() {
    // PyBoy's memory view (pyboy.memory) gives 0xFF for OAM once a transfer has started and
    // until it ends, and the stored bytes otherwise; peek must show the same.
    let mut gb = GameBoy::new(rom_with(&[0x18, 0xFE]), None).unwrap();
    gb.bus.lcd.oam_mut()[0] = 0x5A;
    gb.bus.poke(0xFF46, 0xC0);
    assert_eq!(
        gb.bus.peek(0xFE00),
        0x5A,
        "the transfer starts 12 cycles after the write"
    );
    gb.bus.cycles += 12;
    assert_eq!(gb.bus.peek(0xFE00), 0xFF);
    assert_eq!(gb.bus.peek(0xFE9F), 0xFF);
    assert_eq!(
        gb.bus.peek(0xFEA0),
        0x00,
        "the area after OAM is not affected"
    );
    gb.tick(1, false, false);
    assert_eq!(
        gb.bus.peek(0xFE00),
        gb.bus.peek(0xC000),
        "the copy, once it has ended"
    );
    assert_eq!(gb.bus.peek(0xFE00), gb.bus.lcd.oam()[0]);
}

/// The fast paths (`GameBoy::run_halted_turns`: lazy timer and APU catch-ups while the CPU is
/// halted; `run_poll_loop` and `run_dma_wait_loop`: LY/STAT polling loops and OAM DMA wait
/// loops without the interpreter; `light_turn_end`: a running CPU's turns ended inside the
/// slice loop) change nothing: every frame's screen, samples and whole
/// machine state are the same as turn by turn and instruction by instruction, on our games and
/// test ROMs (HALT with timer, STAT, VBlank and serial interrupts, music on all four channels,
/// LCD off/on, OAM DMA waits with interrupts and every source), on DMG and Game Boy Color
/// hardware, sound sampled, emulated but not sampled, and off, with changing buttons.
#[test]
fn the_fast_paths_give_the_general_paths_results() {
    use emurust_core::apu::SoundOptions;
    use emurust_core::gameboy::Options;
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut roms: Vec<_> = ["games", "roms"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(repo.join(dir)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "gb"))
        .collect();
    roms.sort();
    assert!(roms.len() >= 15, "our games and test ROMs: {roms:?}");
    let mut halted_frames = 0;
    for path in &roms {
        let rom: Arc<[u8]> = std::fs::read(path).unwrap().into();
        for (cgb, emulated, sampled) in [
            (Some(false), true, true),
            (Some(false), true, false),
            (Some(false), false, false),
            (Some(true), true, true),
            (Some(true), true, false),
            (Some(true), false, false),
        ] {
            let options = Options {
                cgb,
                sound: SoundOptions {
                    emulated,
                    ..SoundOptions::default()
                },
            };
            let mut fast = GameBoy::with_options(rom.clone(), None, options).unwrap();
            let mut slow = GameBoy::with_options(rom.clone(), None, options).unwrap();
            slow.halted_fast_path = false;
            slow.wait_loop_fast_paths = false;
            slow.light_turns = false;
            slow.bus.light_write_ends = false;
            let what = format!("{} cgb={cgb:?} sound={emulated}/{sampled}", path.display());
            // Fewer frames in debug builds (overflow checks on), which run ~15x slower.
            let frames: u32 = if cfg!(debug_assertions) { 100 } else { 240 };
            for frame in 0..frames {
                let buttons = (frame / 10)
                    .wrapping_mul(0x9E37_79B9)
                    .rotate_left(frame % 7) as u8;
                for gb in [&mut fast, &mut slow] {
                    gb.set_buttons(if frame % 30 < 20 { buttons } else { 0 });
                    gb.run_frame(frame % 3 == 0, sampled);
                }
                halted_frames += fast.cpu.halted as u32;
                assert_eq!(
                    fast.bus.apu.samples(),
                    slow.bus.apu.samples(),
                    "{what} frame {frame}"
                );
                if frame % 3 == 0 {
                    assert!(
                        fast.bus.lcd.screen_rgba() == slow.bus.lcd.screen_rgba(),
                        "{what} frame {frame}: screens differ"
                    );
                }
                common::assert_same_state(&format!("{what} frame {frame}"), &fast, &slow);
            }
        }
    }
    // The test means something only if the programs do halt.
    assert!(halted_frames > 400, "halted at {halted_frames} frame ends");
}
