//! The whole machine: CPU, system bus (memory map and I/O), OAM DMA, and the scheduler.
//!
//! Timing model. To be bit-exact with PyBoy 2.8.1 we reproduce how it sequences time, which
//! is coarser than the hardware's M-cycles:
//! - Instructions are atomic. Devices observe each data access at a "stamp": the cycle count
//!   when PyBoy performs it (the timer, serial port and APU see `cycles`; the LCD, VRAM and OAM
//!   see `cycles + offset`). The stamps are measured per opcode in [`crate::pyboy_timing`].
//! - The CPU runs in slices. A slice lasts until the nearest event any device announces
//!   (timer overflow, LCD interrupt or frame end, APU, serial), at least 4 cycles, or until an
//!   instruction "bails" (a write to a control register, HALT, an interrupt becoming enabled).
//!   Interrupts are dispatched only at the start of a slice. After each slice every device
//!   catches up and raises its interrupt flags.
//! - A halted CPU skips the whole slice at once.
//!
//! A frame ends when the LCD says so; `run_frame` is exactly what PyBoy's `tick()` advances.

use std::sync::Arc;

use crate::apu::{Apu, SoundOptions};
use crate::cartridge::Cartridge;
use crate::cpu::{Bus, Cpu, Registers, Step};
use crate::data_access_by_cycle::DATA_ACCESS_BY_CYCLE;
use crate::interrupts;
use crate::joypad::Joypad;
use crate::lcd::{Lcd, FRAME_CYCLES};
use crate::pyboy_timing::{Stamp, DATA_ACCESS};
use crate::serial::Serial;
use crate::state::{StateReader, StateWriter};
use crate::timer::Timer;
use crate::CoreError;
use plain_bus::PlainBus;

mod busy_loop;
mod cgb;
mod counter_loop;
mod idle_loop;
mod plain_bus;
pub mod pyboy_state;
mod pyboy_state_versions;
mod short_loop;

/// The largest cycle or frame count a save state may hold: 2^62 T-cycles are some 35,000
/// years of Game Boy time, so no real state comes near, and counting on from there cannot
/// overflow.
const MAX_STATE_COUNT: u64 = 1 << 62;

/// How far a device's last catch-up may lie from the machine's cycle count in a save state.
/// Every device catches up at the end of each scheduler slice (at most about a frame, 70,224
/// cycles), so a state saved by emurust or PyBoy has them a few cycles apart; a larger gap
/// only comes from a corrupt state, and the device would then catch up across it (the timer
/// walks a span in which TIMA overflows cycle by cycle).
const MAX_SYNC_DISTANCE: u64 = 1 << 24;

pub use cgb::{select_hardware, CgbSystem};
pub use idle_loop::{LoopVerdict, WaitLoopStats};

const OPCODE_RETI: u16 = 0xD9;
const OPCODE_DI: u16 = 0xF3;
const OPCODE_LDH_A_N: u16 = 0xF0;

/// OAM DMA as PyBoy models it: 160 bytes, one per 4 cycles after a start delay, copied lazily
/// whenever the CPU touches memory that could observe it.
#[derive(Clone, Debug, Default)]
struct OamDma {
    active: bool,
    /// True while the DMA itself reads its source (its reads bypass the DMA checks).
    reading: bool,
    source: u8,
    index: u8,
    start: u64,
}

impl OamDma {
    /// The page the copy reads: on the DMG, sources FE and FF read work RAM (DE, DF).
    #[inline]
    fn page(&self, cgb: bool) -> u8 {
        if self.source >= 0xFE && !cgb {
            self.source - 0x20
        } else {
            self.source
        }
    }
}

/// Where opcode fetches (and `run_plain`'s data reads) read cartridge ROM directly, without
/// the memory map: for each quarter of the address space (`addr >> 14`) a pointer to the first
/// byte of the ROM bank mapped there, less the quarter's first address (so the byte at `addr`
/// is at `bases[addr >> 14] + addr`), or null where the window serves nothing: 8000-FFFF always,
/// 0000-7FFF while the boot ROM is mapped (a boot ROM's run is short). One load and one test
/// per fetch is what the interpreter's loop pays for.
///
/// Valid while the cartridge's ROM image and bank offsets are those it was made from:
/// [`SystemBus::refresh_rom_window`] remakes it whenever the machine starts running
/// (`GameBoy::run_frame` and the other entry points that run CPU slices; a host may have
/// overridden ROM bytes or loaded a state before), after every write to the MBC registers
/// (the CPU's and the interrupt dispatch's stack writes among them) and when the boot ROM
/// unmaps. Nothing else changes the ROM or its banks while the machine runs. Debug builds
/// check it at every slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RomWindow {
    bases: [*const u8; 4],
}

impl Default for RomWindow {
    /// Serves no address (every fetch takes the memory map).
    fn default() -> Self {
        RomWindow {
            bases: [std::ptr::null(); 4],
        }
    }
}

impl RomWindow {
    /// The byte at `addr` if the window serves it.
    #[inline(always)]
    fn read(&self, addr: u16) -> Option<u8> {
        let addr = addr as usize;
        // SAFETY: `addr >> 14` < 4.
        let base = unsafe { *self.bases.get_unchecked(addr >> 14) };
        if base.is_null() {
            return None;
        }
        debug_assert!(addr < 0x8000);
        // SAFETY: a non-null base serves its quarter of 0000-7FFF: it points `addr`'s quarter
        // start before the bank mapped there, inside the ROM image (checked when the window
        // was made); the window is current (see above).
        Some(unsafe { *base.wrapping_add(addr) })
    }

    /// The little-endian word at `addr` and `addr + 1` if the window serves both from the
    /// same bank (one lookup for the two bytes).
    #[inline(always)]
    fn read_word(&self, addr: u16) -> Option<u16> {
        let addr = addr as usize;
        // SAFETY: `addr >> 14` < 4.
        let base = unsafe { *self.bases.get_unchecked(addr >> 14) };
        if base.is_null() || addr & 0x3FFF == 0x3FFF {
            return None;
        }
        // SAFETY: as in `read`; `addr + 1` lies in the same quarter, so in the same bank.
        Some(u16::from_le_bytes(unsafe {
            std::ptr::read_unaligned(base.wrapping_add(addr) as *const [u8; 2])
        }))
    }
}

// SAFETY: the pointers are addresses into the ROM image of the cartridge owned by the same
// bus (an `Arc<[u8]>`, itself Send and Sync); the window is only read through `&mut
// SystemBus`, after a refresh on the thread that runs the slice.
unsafe impl Send for RomWindow {}
unsafe impl Sync for RomWindow {}

/// Everything the CPU reaches through memory: the memory map, the devices and the clock.
pub struct SystemBus {
    pub cart: Cartridge,
    pub lcd: Lcd,
    pub apu: Apu,
    pub timer: Timer,
    pub serial: Serial,
    pub joypad: Joypad,
    pub wram: [u8; 0x2000],
    pub hram: [u8; 0x7F],
    /// FEA0-FEFF: PyBoy backs the unusable area with plain memory.
    pub unusable: [u8; 0x60],
    /// Written values of unimplemented registers in FF00-FF4B (they read back as 0xFF).
    io_scratch: [u8; 0x4C],
    pub if_reg: u8,
    pub ie_reg: u8,
    boot_rom: Option<Arc<[u8]>>,
    pub boot_rom_mapped: bool,
    /// A CGB boot ROM of more than 256 bytes: also mapped at 0200-08FF.
    boot_rom_big: bool,
    /// Opcode fetches from 0100-7FFF (`addr - 0x100 < fetch_span`) read the cartridge
    /// directly; 0 while a big boot ROM is mapped (its 0200-08FF take the slow path).
    fetch_span: u16,
    /// Direct opcode fetches from the mapped ROM banks (see [`RomWindow`]).
    rom_window: RomWindow,
    /// Game Boy Color hardware (PyBoy's `mb.cgb`).
    pub cgb: bool,
    /// Its registers and banked work RAM (unused on the DMG).
    pub cgbx: Box<CgbSystem>,
    dma: OamDma,
    /// T-cycles since power-on (PyBoy's `cpu.cycles`). During an instruction each bus call
    /// adds its M-cycle (devices see `instr_start` and the stamps, never this; the M-cycles
    /// so far pick a data access's stamp, see `SystemBus::data_access_stamp`).
    pub cycles: u64,

    // The instruction in flight.
    instr_start: u64,
    /// The start of the instruction before it, kept only where the LCD's deferral needs it
    /// (`lcd_deferral_access` with DMG sound; the general path always keeps it).
    prev_instr_start: u64,
    /// 0x000-0x0FF base opcodes, 0x100-0x1FF CB-prefixed ones (see [`Bus::decoded`]). Valid
    /// during the instruction's data accesses and after `Cpu::step` (`run_plain` hands it over
    /// only before a data access that needs it).
    opcode: u16,
    hl_at_start: u16,
    /// Within `GameBoy::run_frame`: the APU may skip its end-of-turn catch-ups while
    /// [`Apu::catch_up_can_wait`]; register accesses and the frame's end catch it up.
    apu_may_lag: bool,
    /// While not 0: the LCD's transitions before this cycle, the rest of a line or of several
    /// (see [`Lcd::deferrable_line_end`], [`Lcd::deferrable_span_end`]), run late: the slice
    /// runs to this cycle (a turn's end) rather than ending a turn at each of them. Any access
    /// that may see or change what they do replays them first, and most also end the
    /// deferral (`SystemBus::lcd_deferral_access`).
    lcd_deferred_until: u64,
    /// The slice's target after an access ended the LCD's deferral: the first transition
    /// after the instruction's start, where the turn in progress ends.
    deferral_retarget: u64,
    /// The line (LY) on which an access to LY or STAT last ended a deferral: no new one
    /// starts on it (a polling loop reads them over and over, and deferrals it ends at each read
    /// cost more than they save; Shock Lobster polls LY for much of each frame).
    lcd_polled_line: u8,
    /// [`BAIL_END`]: set by writes that may change what the scheduler planned; ends the
    /// slice. [`BAIL_POLL`]: an `LDH A,(n)` just read an LCD register a polling loop may wait
    /// on (a hint for [`GameBoy::run_poll_loop`]; the slice goes on). [`BAIL_DMA_WAIT`]: an
    /// instruction was fetched from HRAM while an OAM DMA runs (a hint for
    /// [`GameBoy::run_dma_wait_loop`]). [`BAIL_SHORT_LOOP`]: a short branch back into what may
    /// be a short loop (a hint for `GameBoy::run_short_loop`).
    bail: u8,
    /// The head of the last loop `GameBoy::run_short_loop` would not run: the plain loop's
    /// branches back to it are not handed over (a fill of VRAM, say, would be refused at each
    /// iteration). Only speed depends on it.
    short_loop_refused: u16,
    /// Let a write that ends PyBoy's CPU slice but changes nothing the scheduler planned (a
    /// bank switch, a joypad select, the LCD's drawing registers, the sound unit while off)
    /// end its turn lightly, the slice going on ([`SystemBus::end_slice_unless_light`]; the
    /// default). Off, each such write ends the slice as in PyBoy. Same results either way
    /// (tested); a switch for that test.
    #[doc(hidden)]
    pub light_write_ends: bool,
}

/// The stamp (cycles, LCD offset) of the data access an instruction that started at
/// `instr_start` with `opcode` makes when the clock reads `cycles` (its bus calls so far, this
/// one's included): the system bus's and the plain loop's, which keeps the clock in a local.
#[inline(always)]
fn data_access_stamp(instr_start: u64, cycles: u64, opcode: u16) -> (u64, u64) {
    let m = (cycles - instr_start) / 4;
    debug_assert!((1..8).contains(&m), "M-cycle {m}");
    let s = DATA_ACCESS_BY_CYCLE[opcode as usize & 0x1FF][m as usize & 7];
    (instr_start + s.cycles as u64, s.offset as u64)
}

/// Whether `opcode` (as [`SystemBus::opcode`] holds it) is a store whose write is its last
/// M-cycle: the instruction ends with the write (a bank switch's turn end can then be light).
const fn store_ends_with_write(opcode: u16) -> bool {
    matches!(
        opcode,
        0x02 | 0x12 | 0x22 | 0x32 | 0x36 | 0x70..=0x75 | 0x77 | 0xEA
    )
}

/// [`store_ends_with_write`], and the stores into FF00-FFFF (`LDH (a8),A`, `LD (C),A`).
const fn io_store_ends_with_write(opcode: u16) -> bool {
    store_ends_with_write(opcode) || matches!(opcode, 0xE0 | 0xE2)
}

/// See [`SystemBus::bail`].
const BAIL_END: u8 = 1;
const BAIL_POLL: u8 = 2;
const BAIL_DMA_WAIT: u8 = 4;
/// EI armed its delayed enable: [`GameBoy::run_plain`] hands the next instructions to the
/// general path (which runs EI's countdown). The slice goes on.
const BAIL_EI: u8 = 8;
/// An access ended the LCD's deferral (see [`SystemBus::lcd_deferred_until`]): the slice's
/// target becomes `SystemBus::deferral_retarget`. The slice goes on.
const BAIL_RETARGET: u8 = 16;
/// The plain loop branched back into what may be a short loop (`short_loop`): a hint for
/// [`GameBoy::run_short_loop`]; the slice goes on.
const BAIL_SHORT_LOOP: u8 = 32;

impl SystemBus {
    fn new(cart: Cartridge, boot_rom: Option<Arc<[u8]>>, cgb: bool, sound: SoundOptions) -> Self {
        let cgb_mode = cgb && cart.header().cgb_flag & 0x80 != 0;
        let boot_rom_big = boot_rom.as_ref().is_some_and(|b| b.len() >= 0x900);
        let mut lcd = Lcd::new();
        let mut apu = Apu::new(sound);
        let mut serial = Serial::new();
        if cgb {
            lcd.set_cgb(true);
            apu.set_cgb();
            serial.set_cgb_mode(cgb_mode);
        }
        SystemBus {
            cart,
            lcd,
            apu,
            timer: Timer::new(),
            serial,
            joypad: Joypad::new(),
            wram: [0; 0x2000],
            hram: [0; 0x7F],
            unusable: [0; 0x60],
            io_scratch: [0; 0x4C],
            if_reg: 0,
            ie_reg: 0,
            boot_rom_mapped: boot_rom.is_some(),
            boot_rom,
            boot_rom_big,
            fetch_span: if boot_rom_big { 0 } else { 0x8000 - 0x100 },
            rom_window: RomWindow::default(),
            cgb,
            cgbx: Box::new(CgbSystem::new(cgb_mode)),
            dma: OamDma::default(),
            cycles: 0,
            instr_start: 0,
            prev_instr_start: 0,
            opcode: 0,
            hl_at_start: 0,
            apu_may_lag: false,
            bail: 0,
            short_loop_refused: 0xFFFF,
            light_write_ends: true,
            lcd_deferred_until: 0,
            deferral_retarget: 0,
            lcd_polled_line: 0xFF,
        }
    }

    /// A restored machine's clocks must fit together (see [`MAX_STATE_COUNT`] and
    /// [`MAX_SYNC_DISTANCE`]); checked for every state, ours and PyBoy's, before it is used.
    fn check_state_times(&self, frames: u64) -> Result<(), CoreError> {
        let bad = |what: String| Err(CoreError::State(what));
        if self.cycles > MAX_STATE_COUNT || frames > MAX_STATE_COUNT {
            return bad(format!(
                "cycle count {} or frame count {frames} out of range",
                self.cycles
            ));
        }
        let (serial_synced, serial_clock) = self.serial.times();
        // The timer, serial port and APU catch up to the cycle count itself (never past it);
        // the LCD and an OAM DMA in progress look a few cycles ahead. An idle DMA's start is
        // history: it is read only while a transfer runs.
        let dma_start = if self.dma.active {
            self.dma.start
        } else {
            self.cycles
        };
        let stamps = [
            ("timer", self.timer.synced_at(), false),
            ("serial port", serial_synced, false),
            ("APU", self.apu.caught_up_to(), false),
            ("LCD", self.lcd.last_now(), true),
            ("OAM DMA", dma_start, true),
        ];
        for (device, at, may_lead) in stamps {
            if (at > self.cycles && !may_lead) || at.abs_diff(self.cycles) > MAX_SYNC_DISTANCE {
                return bad(format!(
                    "the {device} was last brought up to cycle {at}, far from the machine's \
                     cycle {}",
                    self.cycles
                ));
            }
        }
        if serial_clock > MAX_STATE_COUNT {
            return bad(format!("serial clock {serial_clock} out of range"));
        }
        self.apu.check_times(MAX_STATE_COUNT, MAX_SYNC_DISTANCE)
    }

    /// Recompute `fetch_span` after `boot_rom_mapped` was restored.
    fn refresh_fetch_span(&mut self) {
        self.fetch_span = if self.boot_rom_big && self.boot_rom_mapped {
            0
        } else {
            0x8000 - 0x100
        };
    }

    /// Remake [`RomWindow`] from the cartridge's current ROM image and banks.
    fn refresh_rom_window(&mut self) {
        self.rom_window = self.current_rom_window();
    }

    /// The [`RomWindow`] of the cartridge's current ROM image and banks (one that serves
    /// nothing while the boot ROM is mapped or if a mapped bank would reach past the image's
    /// end).
    fn current_rom_window(&self) -> RomWindow {
        let (rom, bases) = self.cart.rom_and_bases();
        let fits = bases[0].max(bases[1]) + 0x4000 <= rom.len();
        let p = rom.as_ptr();
        let window = [
            p.wrapping_add(bases[0]),
            p.wrapping_add(bases[1]).wrapping_sub(0x4000),
        ];
        // Null means "not served"; an adjusted base that happened to be null (an image at
        // 0x4000) takes the memory map.
        if !fits || self.boot_rom_mapped || window.iter().any(|b| b.is_null()) {
            return RomWindow::default();
        }
        RomWindow {
            bases: [window[0], window[1], std::ptr::null(), std::ptr::null()],
        }
    }

    /// The timer's and the LCD's part of a turn's end at `now` (`GameBoy::end_turn`,
    /// `GameBoy::light_turn_end`). `timer_may_wait`: the timer syncs only when due.
    #[inline(always)]
    fn timer_and_lcd_turn_end(&mut self, now: u64, timer_may_wait: bool) {
        // The two are independent (each only ORs its interrupt into IF).
        self.lcd.tick_turn_end(now);
        self.drain_lcd_irq();
        let timer_fired = if timer_may_wait {
            self.timer.sync_if_due(now)
        } else {
            self.timer.sync(now)
        };
        if timer_fired {
            self.if_reg |= interrupts::TIMER;
        }
    }

    /// Cycles to the nearest of the timer's, the APU's and the serial port's next events, as
    /// their distances say now (the scheduler's `others_at`, a busy loop's skip limit).
    fn other_devices_distance(&self) -> u64 {
        self.timer
            .cycles_to_interrupt_at(self.cycles)
            .min(self.apu.cycles_to_interrupt())
            .min(self.serial.cycles_to_interrupt())
    }

    #[inline]
    fn pending_interrupts(&self) -> u8 {
        self.if_reg & self.ie_reg & 0x1F
    }

    #[inline]
    fn drain_lcd_irq(&mut self) {
        self.if_reg |= self.lcd.take_irq();
    }

    /// [`Bus::read`] of anything but work RAM, and of HRAM while an OAM DMA runs (the memory
    /// map lets the DMA catch up first).
    #[inline(never)]
    fn read_slow<const DEFER_LCD: bool>(&mut self, addr: u16) -> u8 {
        if DEFER_LCD && self.lcd_deferred_until != 0 {
            self.lcd_deferral_access(addr, false);
        }
        let (now, offset) = self.data_access_stamp();
        self.read_at(addr, now, offset)
    }

    /// [`Bus::write`] of anything but work RAM, and of HRAM while an OAM DMA runs.
    #[inline(never)]
    fn write_slow<const DEFER_LCD: bool>(&mut self, addr: u16, value: u8) {
        if addr < 0x8000 {
            // Inert for the LCD's deferral (see `inert_during_lcd_deferral`).
            return self.write_mbc_from_cpu(addr, value);
        }
        let (now, offset) = self.data_access_stamp();
        if DEFER_LCD && self.lcd_deferred_until != 0 {
            self.lcd_deferral_access(addr, true);
        }
        self.write_at(addr, value, now, offset)
    }

    /// An instruction's write to the MBC's registers (Pokemon Red switches banks hundreds of
    /// times a frame). PyBoy ends its CPU slice after it, and the turn end and slice start
    /// that follow change nothing but the APU's clock when they would be light (see
    /// `GameBoy::light_turn_end`): no device event is due before the slice's planned end (the
    /// LCD's, the timer's and the serial port's catch-ups compose; a lagging LCD's slice is a
    /// single instruction anyway), no interrupt is pending, no OAM DMA, serial transfer or
    /// HDMA runs. Then the slice goes on, with that APU part done here, at the instruction's
    /// end; the plain loop reads the remade ROM window at its next fetch.
    fn write_mbc_from_cpu(&mut self, addr: u16, value: u8) {
        // Only the clock's latch (6000-7FFF) needs the write's stamp.
        let now = if addr >= 0x6000 {
            self.data_access_stamp().0
        } else {
            0
        };
        self.cart.write_rom_area(addr, value, now);
        self.refresh_rom_window();
        // The instruction ends at `cycles` when its write is its last M-cycle.
        self.end_slice_unless_light(store_ends_with_write(self.opcode));
    }

    /// After a write that ends PyBoy's CPU slice but changes nothing any device's next event
    /// or the interrupts depend on (a bank switch, a joypad select, a write to the sound unit
    /// while it is off): the slice goes on when its turn end would be light, as for
    /// [`SystemBus::write_mbc_from_cpu`]; `ends_with_write` says that the instruction ends
    /// with the write (at `cycles`).
    #[inline]
    fn end_slice_unless_light(&mut self, ends_with_write: bool) {
        if !(ends_with_write
            && self.light_write_ends
            && self.pending_interrupts() == 0
            && self.light_turn_end_devices(self.cycles))
        {
            self.bail |= BAIL_END;
        }
    }

    /// Accesses that neither see nor change anything the LCD's deferred transitions do or
    /// depend on, nor what the scheduler planned: cartridge ROM and its bank registers (a
    /// bank switch's own turn end, `write_mbc_from_cpu`, needs no LCD), cartridge RAM, work
    /// RAM and its echo, HRAM (slow only during an OAM DMA, when nothing is deferred), the
    /// joypad register (a write only selects what reads show), and reads of the timer's
    /// registers (a sync, and syncs compose: no overflow comes before the deferral's end,
    /// which is before `others_at`). Everything else (the LCD's registers, VRAM and OAM, IF
    /// and IE, the other devices' registers) replays the deferred transitions first.
    #[inline]
    fn inert_during_lcd_deferral(addr: u16, write: bool) -> bool {
        addr < 0x8000
            || (0xA000..0xFE00).contains(&addr)
            || (0xFF80..0xFFFF).contains(&addr)
            || addr == 0xFF00
            || ((0xFF04..=0xFF07).contains(&addr) && !write)
    }

    /// The sound registers and wave RAM while the unit is off, but for NR52 (FF26): such an
    /// access only catches the APU up (its sequencer steps on), which changes no turn end's
    /// outcome, and the turn ends' records then do not matter
    /// ([`Apu::turn_end_records_matter`]). (PokemonRedExperiments v2's game leaves the unit
    /// off and its sound engine writes NR50 and NR51 every frame.)
    #[inline]
    fn apu_access_inert(&self, addr: u16) -> bool {
        (0xFF10..0xFF40).contains(&addr) && addr != 0xFF26 && !self.apu.powered()
    }

    /// Accesses that see or change only what the deferred transitions do, not whether they
    /// may be deferred nor what the scheduler planned: VRAM and OAM, and writes of the LCD's
    /// scroll, window and palette registers. They run after the transitions due by their
    /// instruction's start, and the deferral goes on. Not STAT, LYC, LCDC or DMA writes, nor
    /// the LCD registers' reads: polling loops read those, and the polling-loop fast path
    /// (`run_poll_loop`, which ticks the LCD itself) saves more than the deferral.
    #[inline]
    fn keeps_lcd_deferral(addr: u16) -> bool {
        (0x8000..0xA000).contains(&addr)
            || (0xFE00..0xFF00).contains(&addr)
            || Lcd::is_drawing_register(addr)
    }

    /// An access (not yet made) while the LCD's transitions are deferred: unless it is inert,
    /// the deferred transitions due by the start of its instruction (`instr_start`) run (each
    /// turn that ended by then ran its own). Unless the access only involves the LCD, the
    /// deferral ends, and the slice's target becomes the next transition (the end of the turn
    /// in progress; a turn that ended within the instruction would have ended it, and is
    /// past).
    #[inline(never)]
    fn lcd_deferral_access(&mut self, addr: u16, write: bool) {
        if Self::inert_during_lcd_deferral(addr, write) || self.apu_access_inert(addr) {
            return;
        }
        self.replay_lcd_deferral(self.instr_start, self.prev_instr_start);
        if !Self::keeps_lcd_deferral(addr) {
            if addr == 0xFF41 || addr == 0xFF44 {
                self.lcd_polled_line = self.lcd.ly();
            }
            self.end_lcd_deferral();
        }
    }

    /// Run the deferred transitions due by `at`, an instruction boundary (the one before it
    /// started at `prev`), as the turns that ended by then would have. If one fell within that
    /// instruction, a turn ended at `at`, recording its time in the APU as
    /// `light_turn_end_devices` does, where that record matters (`run_slice`'s copy that
    /// defers keeps `prev`).
    fn replay_lcd_deferral(&mut self, at: u64, prev: u64) {
        let last = self
            .lcd
            .replay_deferred(at.min(self.lcd_deferred_until - 1), prev);
        if self.apu.turn_end_records_matter() && last > prev {
            debug_assert!(!self.cgb);
            self.apu.skip_turn_catch_up(at);
        }
    }

    /// End the LCD's deferral once its due transitions ran: the slice's target becomes the
    /// next transition (`BAIL_RETARGET`).
    fn end_lcd_deferral(&mut self) {
        self.lcd_deferred_until = 0;
        // An overdue OAM step still to run (see `Lcd::deferrable_line_end`) runs at the end of
        // the instruction under way, or of the next one at an instruction boundary.
        self.deferral_retarget = self.lcd.next_transition_at().max(self.lcd.last_now() + 1);
        self.bail |= BAIL_RETARGET;
    }

    /// The devices' side of a light turn end at `now` (see `GameBoy::light_turn_end`): false,
    /// having done nothing, while an OAM DMA, a serial transfer or an HDMA runs, or while the
    /// APU must catch up (sound emulated and `run_frame`'s deferral off, or a catch-up that
    /// cannot wait); otherwise the APU's part (it only records the time) and true. The timer's
    /// and the LCD's part is `timer_and_lcd_turn_end`.
    #[inline(always)]
    fn light_turn_end_devices(&mut self, now: u64) -> bool {
        // One branch for the three conditions (each a byte load; they nearly always hold).
        let busy = self.dma.active as u8
            | !self.serial.idle() as u8
            | (self.cgb & self.cgbx.hdma.active) as u8;
        if busy != 0 {
            return false;
        }
        if self.apu.emulated() {
            if !(self.apu_may_lag && self.apu.catch_up_can_wait()) {
                return false;
            }
            self.apu.skip_turn_catch_up(now);
        } else {
            self.apu.tick(now);
        }
        true
    }

    /// [`Bus::fetch`] outside the ROM window (see [`RomWindow`]).
    #[inline(never)]
    fn fetch_slow<const DEFER_LCD: bool>(&mut self, addr: u16) -> u8 {
        if DEFER_LCD && self.lcd_deferred_until != 0 {
            self.lcd_deferral_access(addr, false);
        }
        if addr >= 0xFF80 && self.dma.active {
            self.bail |= BAIL_DMA_WAIT;
        }
        // PyBoy fetches all operand bytes at the instruction's start, 4 cycles apart for the LCD.
        // An instruction's fetches come before its other M-cycles (tested in
        // `data_access_by_cycle`), so fetch k (the opcode's is 0) is M-cycle k + 1.
        let k = (self.cycles - self.instr_start) / 4 - 1;
        let now = self.instr_start;
        self.read_at(addr, now, 4 * k)
    }

    /// Stamp of the data access the instruction is making now: (cycles, LCD offset). Its
    /// M-cycle (the bus calls so far, its own included) and the opcode pick it, so accesses
    /// that need none (work RAM, HRAM) pay nothing for it.
    #[inline]
    fn data_access_stamp(&self) -> (u64, u64) {
        data_access_stamp(self.instr_start, self.cycles, self.opcode)
    }

    // ---------------------------------------------------------------- OAM DMA

    fn start_dma(&mut self, source: u8, now: u64) {
        // A restart before the first byte was copied keeps the shorter delay.
        self.dma.start = if self.dma.active && self.dma.index == 0 {
            now + 8
        } else {
            now + 12
        };
        self.dma.active = true;
        self.dma.reading = false;
        self.dma.source = source;
        self.dma.index = 0;
    }

    /// Copy the bytes the DMA has transferred by `now + lead`. Source reads behave as CPU
    /// reads at (`now`, `offset`), as in PyBoy.
    fn dma_catch_up(&mut self, now: u64, lead: u64, offset: u64) {
        if !self.dma.active || self.dma.reading {
            return;
        }
        let elapsed = (now + lead) as i64 - self.dma.start as i64;
        if elapsed < 4 {
            return;
        }
        let target = (elapsed / 4).min(0xA0) as u8;
        let page = self.dma.page(self.cgb);
        if (0xC0..=0xDF).contains(&page) && self.dma.index < target {
            // Work RAM (the usual source): reading it has no side effect and does not depend
            // on the time, so the bytes are copied at once.
            let (from, to) = (self.dma.index as usize, target as usize);
            let base = ((page as usize) << 8) - 0xC000;
            self.lcd.oam_mut()[from..to].copy_from_slice(&self.wram[base + from..base + to]);
            self.dma.index = target;
        }
        while self.dma.index < target {
            let page = self.dma.page(self.cgb);
            self.dma.reading = true;
            let value = self.read_at(((page as u16) << 8) | self.dma.index as u16, now, offset);
            self.dma.reading = false;
            self.lcd.oam_mut()[self.dma.index as usize] = value;
            self.dma.index += 1;
        }
        if self.dma.index == 0xA0 {
            self.dma.active = false;
        }
    }

    // ---------------------------------------------------------------- memory map

    /// A read as the CPU performs it at cycle `now` with LCD offset `offset`.
    fn read_at(&mut self, addr: u16, now: u64, offset: u64) -> u8 {
        match addr {
            0x0000..=0x3FFF => {
                if self.boot_rom_mapped
                    && (addr <= 0xFF || (self.boot_rom_big && (0x200..0x900).contains(&addr)))
                {
                    self.boot_rom.as_ref().map_or(0xFF, |b| b[addr as usize])
                } else {
                    self.cart.read_rom(addr)
                }
            }
            0x4000..=0x7FFF => self.cart.read_rom(addr),
            0x8000..=0x9FFF => {
                let v = self.lcd.read_vram(addr, now, offset);
                self.drain_lcd_irq();
                v
            }
            0xA000..=0xBFFF => self.cart.read_ram(addr, now),
            0xC000..=0xDFFF => self.wram[(addr - 0xC000) as usize],
            0xE000..=0xFDFF => self.wram[(addr - 0xE000) as usize],
            0xFE00..=0xFE9F => self.read_oam(addr, now, offset),
            0xFEA0..=0xFEFF => self.unusable[(addr - 0xFEA0) as usize],
            0xFF00..=0xFF7F => self.read_io(addr, now, offset),
            0xFF80..=0xFFFF => self.read_hram_ie(addr, now, offset),
        }
    }

    /// HRAM and IE. PyBoy routes every access at or above FF00 through its I/O code, which
    /// first lets a running OAM DMA catch up (plain RAM otherwise).
    #[inline]
    fn read_hram_ie(&mut self, addr: u16, now: u64, offset: u64) -> u8 {
        if self.dma.active {
            self.dma_catch_up(now, offset, offset);
        }
        if addr == 0xFFFF {
            self.ie_reg
        } else {
            self.hram[(addr - 0xFF80) as usize]
        }
    }

    fn read_oam(&mut self, addr: u16, now: u64, offset: u64) -> u8 {
        if offset != 0 && !self.dma.reading {
            let locked = self.lcd.oam_read_locked(now, offset);
            self.drain_lcd_irq();
            if locked {
                return 0xFF;
            }
        }
        if self.dma.active && !self.dma.reading {
            self.dma_catch_up(now, offset, offset);
            let mut started = now + offset >= self.dma.start;
            // PyBoy lets a read through (HL) see one more transferred byte.
            if self.dma.active && started && self.hl_at_start == addr {
                self.dma_catch_up(now, offset.max(4), offset);
                started = now + offset >= self.dma.start;
            }
            if self.dma.active && started {
                return 0xFF;
            }
        }
        self.lcd.oam()[(addr - 0xFE00) as usize]
    }

    fn read_io(&mut self, addr: u16, now: u64, offset: u64) -> u8 {
        if self.dma.active && !self.dma.reading {
            self.dma_catch_up(now, offset, offset);
        }
        match addr {
            0xFF00 => self.joypad.read(),
            0xFF01 | 0xFF02 => {
                if self.serial.sync(now) {
                    self.if_reg |= interrupts::SERIAL;
                }
                if addr == 0xFF01 {
                    self.serial.read_sb()
                } else {
                    self.serial.read_sc()
                }
            }
            0xFF04..=0xFF07 => {
                if self.timer.sync(now) {
                    self.if_reg |= interrupts::TIMER;
                }
                match addr {
                    0xFF04 => self.timer.read_div(),
                    0xFF05 => self.timer.read_tima(),
                    0xFF06 => self.timer.read_tma(),
                    _ => self.timer.read_tac(),
                }
            }
            0xFF0F => self.if_reg | 0xE0,
            0xFF10..=0xFF3F => self.apu.read(addr, now),
            0xFF46 => {
                self.lcd.tick(now + offset);
                self.drain_lcd_irq();
                self.dma.source
            }
            0xFF40..=0xFF4B => {
                let v = self.lcd.read_register(addr, now, offset);
                self.drain_lcd_irq();
                if self.opcode == OPCODE_LDH_A_N && (addr == 0xFF44 || addr == 0xFF41) {
                    self.bail |= BAIL_POLL;
                }
                v
            }
            0xFF4C..=0xFF7F if self.cgb => self.read_cgb_io(addr, now),
            // FF03, FF08-FF0E and, on the DMG, everything in FF4C-FF7F.
            _ => 0xFF,
        }
    }

    /// A write as the CPU performs it at cycle `now` with LCD offset `offset`.
    fn write_at(&mut self, addr: u16, value: u8, now: u64, offset: u64) {
        match addr {
            0x0000..=0x7FFF => {
                self.cart.write_rom_area(addr, value, now);
                self.refresh_rom_window();
                self.bail |= BAIL_END;
            }
            0x8000..=0x9FFF => {
                if !self
                    .lcd
                    .write_vram_between_transitions(addr, value, now, offset)
                {
                    self.lcd.write_vram(addr, value, now, offset);
                    self.drain_lcd_irq();
                }
            }
            0xA000..=0xBFFF => self.cart.write_ram(addr, value, now),
            0xC000..=0xDFFF => self.wram[(addr - 0xC000) as usize] = value,
            0xE000..=0xFDFF => self.wram[(addr - 0xE000) as usize] = value,
            0xFE00..=0xFE9F => {
                if offset != 0 {
                    let locked = self.lcd.oam_write_locked(now, offset);
                    self.drain_lcd_irq();
                    if locked {
                        return;
                    }
                }
                if self.dma.active && !self.dma.reading {
                    self.dma_catch_up(now, offset, offset);
                }
                if !self.dma.active {
                    self.lcd.oam_mut()[(addr - 0xFE00) as usize] = value;
                }
            }
            0xFEA0..=0xFEFF => self.unusable[(addr - 0xFEA0) as usize] = value,
            0xFF00..=0xFF7F => self.write_io(addr, value, now, offset),
            0xFF80..=0xFFFE => {
                if self.dma.active {
                    self.dma_catch_up(now, offset, offset);
                }
                self.hram[(addr - 0xFF80) as usize] = value;
            }
            0xFFFF => {
                if self.dma.active {
                    self.dma_catch_up(now, offset, offset);
                }
                self.ie_reg = value;
                self.bail |= BAIL_END;
            }
        }
    }

    fn write_io(&mut self, addr: u16, value: u8, now: u64, offset: u64) {
        if self.dma.active && !self.dma.reading {
            self.dma_catch_up(now, offset, offset);
        }
        if addr >= 0xFF4C {
            if addr == 0xFF50 && self.boot_rom_mapped && (value == 0x01 || value == 0x11) {
                self.boot_rom_mapped = false;
                self.fetch_span = 0x8000 - 0x100;
                self.refresh_rom_window();
                self.bail |= BAIL_END;
            } else if self.cgb {
                self.write_cgb_io(addr, value, now, offset);
            }
            return;
        }
        match addr {
            0xFF00 => {
                self.joypad.write(value);
                return self.end_slice_unless_light(io_store_ends_with_write(self.opcode));
            }
            0xFF01 | 0xFF02 => {
                if self.serial.sync(now) {
                    self.if_reg |= interrupts::SERIAL;
                }
                if addr == 0xFF01 {
                    self.serial.write_sb(value)
                } else {
                    self.serial.write_sc(value)
                }
            }
            0xFF04..=0xFF07 => {
                if self.timer.sync(now) {
                    self.if_reg |= interrupts::TIMER;
                }
                match addr {
                    0xFF04 => {
                        self.apu.on_div_write(now, self.timer.counter());
                        self.timer.write_div();
                    }
                    0xFF05 => self.timer.write_tima(value),
                    0xFF06 => self.timer.write_tma(value),
                    _ => self.timer.write_tac(value),
                }
            }
            0xFF0F => self.if_reg = value & 0x1F,
            0xFF10..=0xFF3F => {
                let off = self.apu_access_inert(addr);
                self.apu.write(addr, value, now, self.timer.counter());
                if off {
                    return self.end_slice_unless_light(io_store_ends_with_write(self.opcode));
                }
            }
            0xFF46 => {
                self.lcd.tick(now);
                self.drain_lcd_irq();
                self.start_dma(value, now);
            }
            0xFF40..=0xFF4B => {
                let pictures_only = self.lcd.write_shapes_only_pictures(addr, value);
                self.lcd.write_register(addr, value, now);
                self.drain_lcd_irq();
                if addr == 0xFF44 {
                    // LY is read-only: PyBoy catches the LCD up but, unlike every other
                    // write to FF00-FF4B, does not end the CPU slice.
                    return;
                }
                if pictures_only {
                    // No device's next event or interrupt depends on the write (a mode 3's
                    // length is worked out when it starts), as for a joypad select.
                    return self.end_slice_unless_light(io_store_ends_with_write(self.opcode));
                }
            }
            _ => self.io_scratch[(addr - 0xFF00) as usize] = value,
        }
        self.bail |= BAIL_END;
    }

    /// Set a work RAM (C000-DFFF) or HRAM (FF80-FFFE) byte, as a skipped loop left it.
    fn set_ram(&mut self, addr: u16, value: u8) {
        match addr {
            0xC000..=0xDFFF => self.wram[(addr - 0xC000) as usize] = value,
            0xFF80..=0xFFFE => self.hram[(addr - 0xFF80) as usize] = value,
            _ => debug_assert!(false, "a skipped loop writes work RAM and HRAM only"),
        }
    }

    /// Side-effect-free view of memory for debuggers, tests and Python: what PyBoy's memory
    /// view (`pyboy.memory`) shows (see [`Apu::debug_read`] for FF10-FF3F).
    // Single registers first, then the ranges they lie in: the first matching arm wins.
    #[allow(clippy::match_overlapping_arm)]
    pub fn peek(&self, addr: u16) -> u8 {
        match addr {
            0x0000..=0x3FFF
                if self.boot_rom_mapped
                    && (addr <= 0xFF || (self.boot_rom_big && (0x200..0x900).contains(&addr))) =>
            {
                self.boot_rom.as_ref().map_or(0xFF, |b| b[addr as usize])
            }
            0x0000..=0x7FFF => self.cart.read_rom(addr),
            0x8000..=0x9FFF => self.lcd.peek_vram(addr),
            0xA000..=0xBFFF => self.cart.peek_ram(addr),
            0xC000..=0xDFFF => self.wram[(addr - 0xC000) as usize],
            0xE000..=0xFDFF => self.wram[(addr - 0xE000) as usize],
            // As PyBoy's memory view: 0xFF while an OAM DMA that has started is running.
            0xFE00..=0xFE9F if self.dma.active && self.cycles >= self.dma.start => 0xFF,
            0xFE00..=0xFE9F => self.lcd.oam()[(addr - 0xFE00) as usize],
            0xFEA0..=0xFEFF => self.unusable[(addr - 0xFEA0) as usize],
            0xFF00 => self.joypad.read(),
            0xFF01 => self.serial.read_sb(),
            0xFF02 => self.serial.read_sc(),
            0xFF04 => self.timer.read_div(),
            0xFF05 => self.timer.read_tima(),
            0xFF06 => self.timer.read_tma(),
            0xFF07 => self.timer.read_tac(),
            0xFF0F => self.if_reg | 0xE0,
            0xFF10..=0xFF3F => self.apu.debug_read(addr, self.cycles),
            0xFF46 => self.dma.source,
            0xFF40..=0xFF4B => self.lcd.peek_register(addr),
            0xFF4C..=0xFF7F if self.cgb => self.peek_cgb_io(addr),
            0xFF00..=0xFF7F => 0xFF,
            0xFF80..=0xFFFE => self.hram[(addr - 0xFF80) as usize],
            0xFFFF => self.ie_reg,
        }
    }

    /// Debugger/Python write: a CPU write at the current cycle, without ending a slice.
    pub fn poke(&mut self, addr: u16, value: u8) {
        let now = self.cycles;
        self.write_at(addr, value, now, 0);
        self.bail = 0;
    }
}

impl Bus for SystemBus {
    #[inline]
    fn fetch(&mut self, addr: u16) -> u8 {
        self.cycles += 4;
        // Fast path: cartridge ROM outside the boot ROM's reach, straight from its bank.
        match self.rom_window.read(addr) {
            Some(v) => {
                debug_assert_eq!(v, self.cart.read_rom(addr));
                v
            }
            None => self.fetch_slow::<true>(addr),
        }
    }

    /// Work RAM (C000-DFFF) is plain memory with no side effects (not even for OAM DMA)
    /// and HRAM nearly so (a running DMA catches up first, as in PyBoy): they are read here,
    /// inline in each instruction, the rest in `SystemBus::read_slow`.
    #[inline(always)]
    fn read(&mut self, addr: u16) -> u8 {
        self.cycles += 4;
        if addr.wrapping_sub(0xC000) < 0x2000 {
            return self.wram[(addr & 0x1FFF) as usize];
        }
        if addr.wrapping_sub(0xFF80) < 0x7F && !self.dma.active {
            return self.hram[(addr & 0x7F) as usize];
        }
        self.read_slow::<true>(addr)
    }

    /// As in `read`: plain memory, nothing to notify, no slice to end.
    #[inline(always)]
    fn write(&mut self, addr: u16, value: u8) {
        self.cycles += 4;
        if addr.wrapping_sub(0xC000) < 0x2000 {
            self.wram[(addr & 0x1FFF) as usize] = value;
            return;
        }
        if addr.wrapping_sub(0xFF80) < 0x7F && !self.dma.active {
            self.hram[(addr & 0x7F) as usize] = value;
            return;
        }
        self.write_slow::<true>(addr, value)
    }

    #[inline]
    fn idle(&mut self) {
        self.cycles += 4;
    }

    #[inline]
    fn decoded(&mut self, opcode: u16) {
        self.opcode = opcode;
    }

    #[inline]
    fn ei(&mut self) {
        self.bail |= BAIL_EI;
    }

    #[inline]
    fn reti(&mut self) {
        // RETI re-enables interrupts before popping; PyBoy ends the slice if one is waiting.
        // (A new target from an ended LCD deferral stands.)
        self.bail = (self.bail & BAIL_RETARGET)
            | if self.pending_interrupts() != 0 {
                BAIL_END
            } else {
                0
            };
    }
}

/// A decoded machine state waiting to replace the current one.
struct Decoded {
    cpu: Cpu,
    halted_after_ei: bool,
    resume_frame: bool,
    frames: u64,
    bus: SystemBus,
}

/// What a Game Boy is created with, besides its ROM and boot ROM: the settings of PyBoy's
/// constructor that change what a program sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `PyBoy(cgb=...)`: `None` chooses the hardware from the cartridge header (or the boot
    /// ROM's size), `Some(true)` Game Boy Color, `Some(false)` DMG (see [`select_hardware`]).
    pub cgb: Option<bool>,
    /// `PyBoy(sound_emulated=..., sound_sample_rate=...)`.
    pub sound: SoundOptions,
}

/// A Game Boy: CPU and system bus, stepped frame by frame.
pub struct GameBoy {
    pub cpu: Cpu,
    pub bus: SystemBus,
    /// Set when HALT was executed right after EI's enable took effect; PyBoy then returns to
    /// the HALT itself after the interrupt.
    halted_after_ei: bool,
    pub frames: u64,
    /// Addresses of the last instructions executed (a ring), for divergence reports and the
    /// idle-loop finder; instruction `k` (counted by `instructions`) is at `k mod PC_TRACE_LEN`.
    /// Complete from instruction `pc_trace_from` on: the plain loop stores into it only while
    /// `pc_trace_on` or shortly before a look for an idle loop (see [`TRACE_LEAD`]).
    pc_trace: [u16; PC_TRACE_LEN],
    /// The first instruction since which every instruction is in `pc_trace`.
    pc_trace_from: u64,
    /// Every instruction goes into `pc_trace` (divergence reports); off by default: the store
    /// costs 1.2-1.6% of the host instructions on Pokemon Red (callgrind).
    pc_trace_on: bool,
    /// Instructions executed since power-on (statistics and the PC trace's write position;
    /// not part of save states).
    instructions: u64,
    /// The machine stopped mid-frame (right after the boot ROM exited); the next `run_frame`
    /// finishes that frame instead of starting a new one.
    resume_frame: bool,
    /// A breakpoint opcode (see [`Cpu::brk`]) ended the last slice. Host state, not saved.
    break_hit: bool,
    /// The cycle the current (or last) frame started at (statistics; not in save states).
    pub frame_start: u64,
    /// Run halted stretches through `GameBoy::run_halted_turns` (the default); off, every
    /// turn takes the general path. The results are the same either way (tested): a switch
    /// for that test and for measurements, not a setting.
    #[doc(hidden)]
    pub halted_fast_path: bool,
    /// Let the APU skip (DMG) or defer (CGB) the scheduler's turn-end catch-ups while they
    /// can wait ([`Apu::catch_up_can_wait`]; the default); off, every turn catches it up.
    /// Same results either way (tested); a switch for that test and for measurements.
    #[doc(hidden)]
    pub apu_turn_deferral: bool,
    /// Run polling loops on LY/STAT (`GameBoy::run_poll_loop`), OAM DMA wait loops
    /// (`GameBoy::run_dma_wait_loop`) and short delay, fill and copy loops (`short_loop`)
    /// without the interpreter (the default); off, the interpreter runs them (and the idle-
    /// and busy-loop fast-forwards are off too). Same results either way (tested); a switch
    /// for those tests.
    #[doc(hidden)]
    pub wait_loop_fast_paths: bool,
    /// End the turns of a running CPU inside the slice loop when they can be light
    /// (`GameBoy::light_turn_end`, the default); off, every turn returns to `run_frame`.
    /// Same results either way (tested); a switch for that test and for measurements.
    #[doc(hidden)]
    pub light_turns: bool,
    /// The idle-loop and busy-loop fast-forwards (`idle_loop`, `busy_loop`), on by default; they
    /// also need `wait_loop_fast_paths`. Same results either way (tested); a switch for tests and
    /// measurements.
    #[doc(hidden)]
    pub idle_loop_fast_forward: bool,
    /// Let a line's OAM, mode 3 and HBlank transitions run late instead of each ending a
    /// scheduler turn, where none can raise an interrupt (DMG timing, sound on or off;
    /// [`Lcd::deferrable_line_end`]); off only to check that it changes nothing.
    pub lcd_deferral: bool,
    /// With `lcd_deferral`: let the deferral go on across lines, their LY steps included, where
    /// none raises an interrupt ([`Lcd::deferrable_span_end`]); off only to check that it
    /// changes nothing.
    pub multi_line_deferral: bool,
    /// Lines whose transitions were deferred (statistics, not saved).
    pub lcd_deferred_lines: u64,
    /// Of those deferrals' LY steps, how many ran late too (`multi_line_deferral`; statistics).
    pub lcd_deferred_ly_steps: u64,
    /// Of those, the lines deferred from their LY step with the OAM step overdue (see
    /// [`Lcd::deferrable_line_end`]; statistics for tests and profiles).
    pub lcd_deferred_overdue_oam: u64,
    /// How often the wait-loop fast paths ran (statistics for tests and profiles).
    pub wait_loop_stats: WaitLoopStats,
    /// What the idle-loop fast-forward decoded of loops in ROM (see `idle_loop`).
    loop_cache: idle_loop::LoopCache,
    /// When set, every look for an idle loop inside a slice (every 16384 cycles of it) counts
    /// the PC and what it found: a sampled PC histogram for profiles (see
    /// `examples/idle_census.rs`). Off (`None`) normally.
    #[doc(hidden)]
    pub loop_census: Option<Box<std::collections::HashMap<(u16, LoopVerdict), u64>>>,
    /// The lowest and highest address of the last loop proved idle, and the shortest slice
    /// worth resuming it in (host state). None yet: an empty range and a slice no clock
    /// reaches (`first_idle_check` tests the length first, so that fails at once).
    last_idle_loop: (u16, u16, u64),
    /// That loop's plan for resuming it without interpreting (host state).
    idle_plan: idle_loop::IdlePlan,
    /// The last busy loop proved (host state; `busy_loop`).
    busy: busy_loop::BusyLoop,
    /// The last look ran out of slice and the next slice's start looks again (host state).
    idle_retry: bool,
    /// The cycle of the next look for an idle loop (host state; slices are often shorter
    /// than the interval between looks).
    next_idle_check: u64,
    /// Within `run_frame`: the APU's scheduling distance never decides a turn (see
    /// `run_frame`), as `run_halted_turns` needs.
    apu_far: bool,
    /// Within `run_slice`'s light turns: the absolute cycle before which neither the timer,
    /// the APU nor the serial port has an event (see [`GameBoy::next_target`]; 0: unknown).
    others_at: u64,
}

/// The PC trace's ring (the loop finders read up to `busy_loop::MAX_BUSY_LEN` back).
pub const PC_TRACE_LEN: usize = 256;
/// How much of it [`GameBoy::pc_trace`] returns: the instructions leading to a divergence in
/// its report (and a repair prompt's disassembly).
pub const PC_TRACE_REPORT_LEN: usize = 32;
const _: () = assert!(PC_TRACE_REPORT_LEN <= PC_TRACE_LEN);
const _: () = assert!(PC_TRACE_LEN.is_power_of_two());
const PC_TRACE_MASK: usize = PC_TRACE_LEN - 1;

/// Cycles before a look for an idle loop from which the plain loop traces the PC even with
/// the trace off: a busy loop's look (`busy_loop`) reads one period of up to `MAX_BUSY_LEN`
/// instructions, which Pokemon Red's menu loop (73 instructions, under 1,000 cycles) and its
/// text boxes' wait (about 150, 1,364 cycles) fit in. (Traced instructions cost a little
/// more: 1,792 cycles made the menu 0.7% slower, callgrind.)
const TRACE_LEAD: u64 = 1536;
const _: () = assert!(SHORT_TRACE_LEAD < TRACE_LEAD);

/// Cycles after a look that found too few instructions traced (one at a slice's start, to
/// resume a loop, or after a halt) to the next: the idle-loop finder reads the last
/// `2 * MAX_LOOP_LEN` (24), which fit in 576 cycles (4-24 each).
const SHORT_TRACE_LEAD: u64 = 576;

impl GameBoy {
    /// Power on with `boot_rom` (256 bytes, mapped at 0000-00FF until FF50 is written), or
    /// in the state the boot ROM leaves when `boot_rom` is `None`. The hardware (DMG or
    /// Game Boy Color) is chosen from the cartridge header as PyBoy 2.8.1 chooses it; PyBoy's
    /// default settings otherwise (see [`GameBoy::with_options`]).
    pub fn new(rom: Arc<[u8]>, boot_rom: Option<Arc<[u8]>>) -> Result<GameBoy, CoreError> {
        Self::with_options(rom, boot_rom, Options::default())
    }

    /// As [`new`](Self::new), with PyBoy's `cgb` argument: `None` chooses from the header (or
    /// from the boot ROM's size), `Some(true)` runs Game Boy Color hardware (a DMG game then
    /// runs in the CGB's DMG mode), `Some(false)` DMG hardware. See [`select_hardware`].
    /// A CGB boot ROM is 256 bytes (like PyBoy's own) or 2304 bytes (mapped at 0000-00FF and
    /// 0200-08FF).
    pub fn with_hardware(
        rom: Arc<[u8]>,
        boot_rom: Option<Arc<[u8]>>,
        cgb: Option<bool>,
    ) -> Result<GameBoy, CoreError> {
        Self::with_options(
            rom,
            boot_rom,
            Options {
                cgb,
                ..Options::default()
            },
        )
    }

    /// As [`GameBoy::new`], behaving as a PyBoy created with the same `options` (hardware
    /// choice `cgb` and sound options).
    pub fn with_options(
        rom: Arc<[u8]>,
        boot_rom: Option<Arc<[u8]>>,
        options: Options,
    ) -> Result<GameBoy, CoreError> {
        options.sound.validate()?;
        let cart = Cartridge::from_rom(rom)?;
        let cgb = select_hardware(
            cart.header().cgb_flag,
            boot_rom.as_ref().map(|b| b.len()),
            options.cgb,
        )?;
        if let Some(b) = &boot_rom {
            let ok = b.len() == 0x100 || (cgb && b.len() == 0x900);
            if !ok {
                return Err(CoreError::BootRom(format!(
                    "a boot ROM is 256 bytes ({}), this one is {}",
                    if cgb {
                        "or 2304 for the Game Boy Color"
                    } else {
                        "DMG"
                    },
                    b.len()
                )));
            }
        }
        let with_boot = boot_rom.is_some();
        let mut gb = GameBoy {
            cpu: Cpu::new(),
            bus: SystemBus::new(cart, boot_rom, cgb, options.sound),
            halted_after_ei: false,
            frames: 0,
            pc_trace: [0; PC_TRACE_LEN],
            pc_trace_from: 0,
            pc_trace_on: false,
            instructions: 0,
            resume_frame: false,
            break_hit: false,
            frame_start: 0,
            halted_fast_path: true,
            apu_turn_deferral: true,
            wait_loop_fast_paths: true,
            light_turns: true,
            idle_loop_fast_forward: true,
            lcd_deferral: true,
            multi_line_deferral: true,
            lcd_deferred_ly_steps: 0,
            lcd_deferred_lines: 0,
            lcd_deferred_overdue_oam: 0,
            wait_loop_stats: WaitLoopStats::default(),
            loop_cache: idle_loop::LoopCache::default(),
            loop_census: None,
            last_idle_loop: (1, 0, MAX_STATE_COUNT),
            idle_plan: idle_loop::IdlePlan::default(),
            busy: busy_loop::BusyLoop::default(),
            next_idle_check: 0,
            idle_retry: false,
            apu_far: false,
            others_at: 0,
        };
        if !with_boot {
            crate::postboot::apply(&mut gb)?;
        }
        Ok(gb)
    }

    /// Game Boy Color hardware (in colour mode or running a DMG game).
    pub fn is_cgb(&self) -> bool {
        self.bus.cgb
    }

    /// Game Boy Color mode: CGB hardware running a CGB cartridge (PyBoy's `cgb_mode`).
    pub fn is_cgb_mode(&self) -> bool {
        self.bus.cgb && self.bus.cgbx.mode
    }

    pub fn registers(&self) -> Registers {
        self.cpu.r
    }

    pub fn options(&self) -> Options {
        Options {
            cgb: Some(self.bus.cgb),
            sound: self.bus.apu.options(),
        }
    }

    /// Run one frame: exactly what one PyBoy `tick()` advances. `render` draws the picture;
    /// `sound` samples audio. PyBoy's `tick(n, render, sound=True)` draws and samples only in
    /// its last frame; sampling changes APU catch-up points, so match it to stay exact.
    pub fn run_frame(&mut self, render: bool, sound: bool) {
        self.bus.refresh_rom_window();
        self.bus.lcd.set_render(render);
        self.bus.apu.set_sampling(sound);
        if self.resume_frame {
            // Finish the frame the boot ROM exited in, keeping what it already produced
            // (PyBoy's frame started before it; unsampled, it has no samples at all).
            self.resume_frame = false;
            if !sound {
                self.bus.apu.clear_samples();
            }
        } else {
            self.frame_start = self.bus.cycles;
            self.bus.apu.clear_samples();
            self.bus.lcd.set_frame_done(false);
        }
        // The APU's scheduling distance is an absolute cycle count (as PyBoy's), beyond any
        // other device's once past power-on; it only grows, so the stale one a lagging APU
        // leaves never decides a turn.
        self.apu_far =
            self.halted_fast_path && self.bus.apu.cycles_to_interrupt() >= 4 * FRAME_CYCLES;
        self.bus.apu_may_lag = self.apu_far && self.apu_turn_deferral;
        while !self.bus.lcd.frame_done() {
            self.run_turns();
            if self.cpu.halted && self.halted_fast_path {
                self.run_halted_turns();
            }
        }
        self.apu_far = false;
        if self.bus.apu_may_lag {
            self.bus.apu_may_lag = false;
            self.bus.apu.catch_up_if_behind(self.bus.cycles);
        }
        self.frames += 1;
    }

    /// Scheduler turns while the CPU stays halted, with exactly the effects of
    /// [`GameBoy::run_slice_and_sync`]'s, at a fraction of the cost: with the CPU halted and
    /// no interrupt pending a turn only advances the clock to the nearest device event and
    /// lets the devices catch up, and the timer, which nothing reads meanwhile, catches up
    /// only when TIMA may overflow. Returns once an interrupt is pending (the next turn wakes
    /// the CPU) or the frame ends, with the timer caught up.
    #[inline(never)]
    fn run_halted_turns(&mut self) {
        // What makes a turn of a halted CPU this simple (see `run_slice`): no interrupt to
        // service, no EI under way, no H-blank DMA turn; and the APU's distance (see
        // `run_frame`) never deciding a turn.
        let bus = &self.bus;
        if self.cpu.ei_delay != 0
            || bus.pending_interrupts() != 0
            || (bus.cgb && bus.cgbx.hdma.active)
            || !self.apu_far
        {
            return;
        }
        // Game Boy Color hardware with sound emulated: the quiet turns hand each turn's end
        // to the APU (see `run_quiet_halted_turns`).
        let cgb_apu = self.bus.apu.cgb && self.bus.apu.emulated();
        while !self.bus.lcd.frame_done() {
            // The APU's part of `run_quiet_halted_turns`' condition (a catch-up in a general
            // turn may start or end a sweep delay).
            let apu = &self.bus.apu;
            let quiet_apu = (self.bus.apu_may_lag && apu.catch_up_can_wait()) || !apu.emulated();
            let quiet = quiet_apu
                && if cgb_apu {
                    self.run_quiet_halted_turns::<true>()
                } else {
                    self.run_quiet_halted_turns::<false>()
                };
            if quiet {
                break;
            }
            // `run_slice` with a halted CPU and nothing pending: the clock jumps by the budget.
            let now = self.bus.cycles + self.turn_budget().max(4) as u64;
            self.bus.cycles = now;
            self.bus.bail = 0;
            self.end_turn(now, true);
            if self.bus.pending_interrupts() != 0 {
                break;
            }
        }
        let now = self.bus.cycles;
        self.bus.timer.sync(now);
    }

    /// The turns of [`GameBoy::run_halted_turns`] in which only the LCD has anything to do, run
    /// with nothing else: no OAM DMA, no serial transfer, an APU whose turn-end catch-ups wait
    /// ([`Apu::catch_up_can_wait`]) or that is not emulated (the caller checks), and a timer that
    /// will skip its syncs ([`Timer::quiet_until`]). Each such turn's end in `end_turn` would only
    /// record its time in the APU (the last one counts; but see `CGB_APU`), move the serial clock
    /// (syncs compose) and tick the LCD, so the loop ticks the LCD and `end_turn` runs once, for
    /// the last turn. The turn lengths are `slice_budget`'s from the LCD's distances alone, which
    /// debug builds check. The APU's and the serial port's cannot be the nearest here (see
    /// `run_frame`; no transfer). The timer's is at least `quiet_until - now` (equal while it
    /// runs): whenever it would be the nearest, the turn reaches `quiet_until` either way, and the
    /// loop stops before such a turn (the general loop runs it). Leaving those distances out saves
    /// 2% (APU, serial) and 1-4% (timer) of host instructions per frame.
    /// `CGB_APU` (Game Boy Color hardware, sound emulated): the APU's catch-up at each turn's end
    /// is deferred, which must see every turn's end ([`Apu::lagging_turn_end`]); the LCD then
    /// skips no quiet lines (`Lcd::skip_quiet_lines`).
    /// Returns true when an interrupt is pending or the frame is over.
    #[inline(never)]
    fn run_quiet_halted_turns<const CGB_APU: bool>(&mut self) -> bool {
        let bus = &self.bus;
        let quiet_until = match bus.timer.quiet_until() {
            Some(t) if !bus.dma.active && bus.serial.idle() => t,
            _ => return false,
        };
        let start = bus.cycles;
        let mut done = false;
        loop {
            let now = self.bus.cycles;
            let after_lines = if CGB_APU {
                now
            } else {
                self.bus.lcd.skip_quiet_lines(now, quiet_until)
            };
            if after_lines != now {
                self.bus.cycles = after_lines;
                continue;
            }
            let bus = &self.bus;
            let budget = bus
                .lcd
                .cycles_to_interrupt()
                .min(bus.lcd.cycles_to_frame())
                .max(4);
            let end = now + budget as u64;
            // The APU's stale distance is no nearer only while the LCD's is below it (see
            // `turn_budget`): not so after an LCD record past the screen's last line.
            if end >= quiet_until || budget >= bus.apu.cycles_to_interrupt() as i64 {
                break;
            }
            debug_assert_eq!(budget, self.slice_budget().max(4));
            let bus = &mut self.bus;
            bus.cycles = end;
            if CGB_APU {
                bus.apu.lagging_turn_end(end);
            }
            bus.lcd.tick(end);
            bus.drain_lcd_irq();
            if bus.pending_interrupts() != 0 || bus.lcd.frame_done() {
                done = true;
                break;
            }
        }
        let now = self.bus.cycles;
        if now != start {
            // The last turn's end in full: the APU records it (CGB_APU: has it) and the serial
            // clock moves; the rest finds nothing to do (no DMA, the timer before
            // `quiet_until`, the LCD there).
            self.end_turn(now, true);
        }
        done
    }

    /// One turn of the scheduler: a CPU slice as long as the nearest device event allows,
    /// then every device catches up.
    fn run_slice_and_sync(&mut self) {
        let budget = self.turn_budget().max(4) as u64;
        self.run_budget_and_sync(budget);
    }

    /// [`GameBoy::run_slice_and_sync`], and the turns after it for as long as their ends can be
    /// light (see [`GameBoy::light_turn_end`]): `run_frame`'s turns of a running CPU.
    fn run_turns(&mut self) {
        let budget = self.turn_budget().max(4) as u64;
        if self.bus.cgb && self.bus.cgbx.hdma.active {
            self.hdma_turn();
        } else if !self.light_turns {
            self.run_slice::<false, false, false>(budget);
        } else if self.lcd_deferral && (!self.bus.cgb || !self.bus.apu.emulated()) {
            // DMG timing (Game Boy Color hardware never defers): the LCD's transitions may run
            // late. The interpreter keeps the previous instruction's start: with it the
            // replays tell whether a deferred LY step's OAM step ran (`Lcd::replay_deferred`),
            // and whether a transition's turn ended within the instruction under way, whose
            // record in the APU an access at that very cycle sees (`lcd_deferral_access`,
            // with DMG sound and the unit on). Keeping it costs about one host instruction
            // per instruction; deferring whole stretches of lines saves more.
            self.run_slice::<true, true, true>(budget);
        } else {
            self.run_slice::<true, false, false>(budget);
        }
        self.end_turn(self.bus.cycles, false);
    }

    /// The end of a turn at `now` = `cycles` and the start of the next slice, run inside the
    /// slice loop (without returning to `run_frame`) when they can be light: no OAM DMA, no
    /// serial transfer, an APU whose turn-end catch-up only records the time, no HDMA, EI
    /// countdown, HALT or breakpoint. The APU, the timer and the LCD do exactly what
    /// [`GameBoy::end_turn`] does (the timer must: the APU's register writes read its counter
    /// as of its last sync); the idle serial port's sync, which only moves its clock and which
    /// every access to it makes first, is left to a later one (syncs compose). Returns true
    /// when the next slice may start at once: no interrupt pending (so the slice start's
    /// interrupt check does nothing) and the frame not over. Returns false otherwise, having
    /// done none or part of `end_turn`, whose rest the caller runs (the parts done find
    /// nothing left to do). The next slice's budget is then `slice_budget`'s.
    #[inline(always)]
    fn light_turn_end(&mut self) -> bool {
        let now = self.bus.cycles;
        let cpu_busy = self.cpu.halted as u8 | self.cpu.ei_delay | self.break_hit as u8;
        let bus = &mut self.bus;
        if cpu_busy != 0 || !bus.light_turn_end_devices(now) {
            return false;
        }
        bus.timer_and_lcd_turn_end(now, false);
        bus.pending_interrupts() == 0 && !bus.lcd.frame_done()
    }

    /// A CPU slice of `budget` cycles (on CGB hardware during an HDMA transfer, PyBoy's HDMA
    /// turn instead), then every device catches up.
    #[inline]
    fn run_budget_and_sync(&mut self, budget: u64) {
        if self.bus.cgb && self.bus.cgbx.hdma.active {
            self.hdma_turn();
        } else {
            self.run_slice::<false, false, false>(budget);
        }
        self.end_turn(self.bus.cycles, false);
    }

    /// The end of a scheduler turn at `now`: a running OAM DMA and every device catch up.
    /// `timer_may_wait`: the timer syncs only when due (`Timer::sync_if_due`; the CPU is halted,
    /// so nothing reads it before the next sync).
    #[inline(always)]
    fn end_turn(&mut self, now: u64, timer_may_wait: bool) {
        let bus = &mut self.bus;
        if bus.dma.active && !bus.dma.reading {
            bus.dma_catch_up(now, 0, 0);
        }
        if bus.apu_may_lag {
            bus.apu.lagging_turn_end(now);
        } else {
            bus.apu.tick(now);
        }
        if bus.serial.sync(now) {
            bus.if_reg |= interrupts::SERIAL;
        }
        bus.timer_and_lcd_turn_end(now, timer_may_wait);
    }

    /// A scheduler turn while an H-blank DMA is on (CGB): in HBlank with the CPU running, one
    /// block instead of a CPU slice; otherwise a slice that also ends at the next HBlank.
    #[inline(never)]
    fn hdma_turn(&mut self) {
        if self.bus.hdma_due(self.cpu.halted) {
            self.bus.hdma_hblank_step();
        } else {
            let to_hblank = self.bus.lcd.cycles_to_mode0();
            let budget = self.slice_budget().min(to_hblank).max(4) as u64;
            self.run_slice::<false, false, false>(budget);
        }
    }

    /// [`GameBoy::slice_budget`], with a lagging APU (`apu_may_lag`) caught up first where
    /// its stale distance is the nearest: that distance only grows with a catch-up, so it
    /// never decides a turn while another device's is nearer (the normal case, the LCD's
    /// within a frame), but it does when every other one is far, as PyBoy's LCD distances
    /// are after it records a line past the screen's last (see `Lcd::hblank_line`): then each
    /// turn lasts up to the APU's distance, an absolute cycle count, as caught up at that
    /// turn's end.
    #[inline]
    fn turn_budget(&mut self) -> i64 {
        let budget = self.slice_budget();
        if self.bus.apu_may_lag && budget == self.bus.apu.cycles_to_interrupt() as i64 {
            return self.turn_budget_apu_caught_up();
        }
        budget
    }

    /// [`GameBoy::turn_budget`] right after a turn's end synced the timer to `cycles` (its
    /// distance is then the one it keeps, no need to work out a lagging timer's).
    #[inline(always)]
    fn turn_budget_timer_synced(&mut self) -> i64 {
        debug_assert_eq!(self.bus.timer.synced_at(), self.bus.cycles);
        let b = &self.bus;
        let budget = (b.timer.cycles_to_interrupt() as i64)
            .min(b.lcd.cycles_to_interrupt())
            .min(b.lcd.cycles_to_frame())
            .min(b.apu.cycles_to_interrupt() as i64)
            .min(b.serial.cycles_to_interrupt() as i64);
        debug_assert_eq!(budget, self.slice_budget());
        if self.bus.apu_may_lag && budget == self.bus.apu.cycles_to_interrupt() as i64 {
            return self.turn_budget_apu_caught_up();
        }
        budget
    }

    #[cold]
    #[inline(never)]
    fn turn_budget_apu_caught_up(&mut self) -> i64 {
        self.bus.apu.catch_up_if_behind(self.bus.cycles);
        self.slice_budget()
    }

    /// The nearest device event (PyBoy's slice length before its minimum of 4). The LCD's
    /// distances go negative when it lags; then the slice is the minimum. The timer's distance
    /// is the one a sync now would give (it may lag in `run_halted_turns`; elsewhere it was
    /// synced at the end of the last turn).
    #[inline]
    fn slice_budget(&self) -> i64 {
        let b = &self.bus;
        (b.timer.cycles_to_interrupt_at(b.cycles) as i64)
            .min(b.lcd.cycles_to_interrupt())
            .min(b.lcd.cycles_to_frame())
            .min(b.apu.cycles_to_interrupt() as i64)
            .min(b.serial.cycles_to_interrupt() as i64)
    }

    /// Run the boot ROM until it unmaps itself, stopping at the end of that scheduler slice
    /// (mid-frame). Returns false if it is still mapped after `max_frames` frames.
    /// Used to derive the post-boot state; the next `run_frame` finishes the frame.
    pub fn run_until_boot_rom_unmapped(&mut self, max_frames: u32) -> bool {
        self.bus.refresh_rom_window();
        for _ in 0..max_frames {
            // As PyBoy's tick(1, render=False) (sound sampling on, its default).
            self.bus.lcd.set_render(false);
            self.bus.apu.set_sampling(true);
            self.frame_start = self.bus.cycles;
            self.bus.apu.clear_samples();
            self.bus.lcd.set_frame_done(false);
            while !self.bus.lcd.frame_done() {
                self.run_slice_and_sync();
                if !self.bus.boot_rom_mapped {
                    self.resume_frame = !self.bus.lcd.frame_done();
                    return true;
                }
            }
            self.frames += 1;
        }
        false
    }

    // ------------------------------------------------------------ breakpoints (PyBoy hooks)
    //
    // PyBoy implements `hook_register` by writing its breakpoint opcode 0xDB over the hooked
    // instruction. Executing it ends the CPU slice at once (no cycles, PC unchanged, EI's
    // countdown runs), the devices catch up, and control returns to Python, which runs the
    // callback, puts the original opcode back, and runs ONE 4-cycle slice (interrupt check
    // included) before patching 0xDB in again and continuing the frame. These entry points
    // let a host reproduce that sequence; `tick`/`run_frame` never stop at breakpoints and
    // cost nothing extra when none is set.

    /// Enable or disable 0xDB as a breakpoint (see [`Cpu::brk`]).
    pub fn set_breakpoints_enabled(&mut self, on: bool) {
        self.cpu.brk = on;
    }

    /// Start a frame as PyBoy's `tick()` does (before [`GameBoy::run_to_break`]).
    pub fn begin_frame(&mut self, render: bool, sound: bool) {
        self.bus.lcd.set_render(render);
        self.bus.apu.set_sampling(sound);
        if self.resume_frame {
            self.resume_frame = false;
        } else {
            self.bus.apu.clear_samples();
            self.bus.lcd.set_frame_done(false);
        }
    }

    /// Run the current frame until it ends (true; the frame counter advances) or a
    /// breakpoint ends a slice (false; PC is at the breakpoint). Call again to continue.
    pub fn run_to_break(&mut self) -> bool {
        self.bus.refresh_rom_window();
        while !self.bus.lcd.frame_done() {
            self.run_slice_and_sync();
            if self.break_hit {
                self.break_hit = false;
                return false;
            }
        }
        self.frames += 1;
        true
    }

    /// PyBoy's single step after a hook: one slice of 4 cycles (after the interrupt check)
    /// and the devices' catch-up, unless the frame is already over. Returns true when that
    /// slice stopped at a breakpoint.
    pub fn single_step(&mut self) -> bool {
        self.bus.refresh_rom_window();
        if !self.bus.lcd.frame_done() {
            self.run_budget_and_sync(4);
        }
        std::mem::take(&mut self.break_hit)
    }

    /// Whether the current frame has ended (after [`GameBoy::run_to_break`] or
    /// [`GameBoy::single_step`]).
    pub fn frame_done(&self) -> bool {
        self.bus.lcd.frame_done()
    }

    /// Count a frame finished through [`GameBoy::single_step`] (PyBoy counts it when its
    /// frame loop exits).
    pub fn count_frame(&mut self) {
        self.frames += 1;
    }

    // ------------------------------------------------------------ host access (PyBoy API)

    /// A read of `addr` as PyBoy's `memory[addr]` performs it: a CPU read at the current
    /// cycle count with no access offset, including its side effects (devices catch up,
    /// OAM DMA progresses, a pending STAT override is consumed).
    pub fn read_cpu(&mut self, addr: u16) -> u8 {
        let bus = &mut self.bus;
        bus.hl_at_start = self.cpu.r.hl();
        let now = bus.cycles;
        bus.read_at(addr, now, 0)
    }

    /// The boot ROM's byte `i` (`None` without a boot ROM or past its end).
    pub fn boot_rom_byte(&self, i: usize) -> Option<u8> {
        self.bus.boot_rom.as_ref().and_then(|b| b.get(i).copied())
    }

    /// Overwrite the boot ROM's byte `i` (PyBoy's `memory[-1, addr] = v`). Returns false
    /// without a boot ROM or past its end.
    pub fn set_boot_rom_byte(&mut self, i: usize, value: u8) -> bool {
        match self.bus.boot_rom.as_mut() {
            Some(b) if i < b.len() => {
                Arc::make_mut(b)[i] = value;
                true
            }
            _ => false,
        }
    }

    /// Whether the boot ROM is mapped at 0000-00FF.
    pub fn boot_rom_mapped(&self) -> bool {
        self.bus.boot_rom_mapped
    }

    /// Set the timer's DIV (the upper byte of its counter) keeping the lower byte, without
    /// catching the timer up (PyBoy's game wrappers do this for `timer_div`).
    pub fn set_div(&mut self, value: u8) {
        self.bus.timer.set_div_keep_low(value);
    }

    /// Run `frames` frames, drawing only the last one if `render` and sampling audio only in
    /// the last one if `sound` — exactly PyBoy's `tick(frames, render, sound)`.
    pub fn tick(&mut self, frames: u32, render: bool, sound: bool) {
        for i in 0..frames {
            let last = i + 1 == frames;
            self.run_frame(render && last, sound && last);
        }
    }

    /// Run the CPU for about `budget` cycles (see the module docs). `TURNS`: then also the next
    /// turns while [`GameBoy::light_turn_end`] allows (`run_frame` only).
    /// `DEFER_LCD` (with `TURNS`): those turns may defer a line's LCD transitions
    /// ([`GameBoy::defer_lcd`]); a separate copy, so that the other runs pay nothing for it.
    /// `TRACK_PREV` (with `DEFER_LCD`; tests also without): the interpreter keeps the previous
    /// instruction's start (`SystemBus::prev_instr_start`).
    fn run_slice<const TURNS: bool, const DEFER_LCD: bool, const TRACK_PREV: bool>(
        &mut self,
        budget: u64,
    ) {
        let mut target = self.bus.cycles + budget;
        if self.service_interrupts() {
            self.cpu.halted = false;
        } else if self.cpu.halted {
            self.bus.cycles += budget;
        }
        debug_assert_eq!(self.bus.rom_window, self.bus.current_rom_window());
        let idle_loops = self.wait_loop_fast_paths && self.idle_loop_fast_forward;
        // `next_idle_check` while the light turns run (stored when the call returns).
        let mut planned_idle_check = self.next_idle_check;
        // Worked out at the first light turn's end (see `GameBoy::next_target`).
        self.others_at = 0;
        loop {
            self.bus.bail = 0;
            // The next look for an idle loop (`idle_loop`): every `GameBoy::look_interval`
            // cycles of running code, and at the start if the slice resumes the last loop
            // skipped.
            let slice_start = self.bus.cycles;
            let mut idle_check = if idle_loops {
                self.first_idle_check(target, planned_idle_check)
            } else {
                u64::MAX
            };
            // Around the slice's loop: an ended LCD deferral's new target (`BAIL_RETARGET`),
            // set out here (a target changed inside costs the interpreter registers).
            loop {
                while self.bus.cycles < target {
                    if self.bus.cycles >= idle_check {
                        if DEFER_LCD && self.bus.lcd_deferred_until != 0 {
                            // The idle-loop paths may skip reads that would end the deferral.
                            self.end_lcd_deferral_between_instructions();
                            break;
                        }
                        idle_check = self.idle_loop_check(target, idle_check != slice_start, TURNS);
                        continue;
                    }
                    if !DEFER_LCD {
                        debug_assert_eq!(self.bus.lcd_deferred_until, 0);
                    }
                    if self.cpu.ei_delay == 0 && !self.cpu.locked && !self.bus.dma.active {
                        // Untraced until shortly before the next look for an idle loop.
                        if self.pc_trace_on || self.bus.cycles + TRACE_LEAD >= idle_check {
                            self.run_plain_traced::<DEFER_LCD, TRACK_PREV>(target.min(idle_check));
                        } else {
                            self.run_plain_untraced::<DEFER_LCD, TRACK_PREV>(
                                target.min(idle_check - TRACE_LEAD),
                            );
                        }
                    } else {
                        self.execute_instruction();
                    }
                    let bail = self.bus.bail;
                    if bail != 0 {
                        // (Without the deferral no retarget is ever set.)
                        if bail & (BAIL_END | BAIL_RETARGET) != 0 {
                            break;
                        }
                        self.bus.bail = 0;
                        if bail & BAIL_DMA_WAIT != 0 {
                            self.run_dma_wait_loop(target);
                        } else if bail & BAIL_POLL != 0 {
                            // (Set by a read of LY or STAT, which ended any deferral first:
                            // this loop's reads tick the LCD directly.)
                            self.run_poll_loop(target);
                        } else if bail & BAIL_SHORT_LOOP != 0 {
                            // Up to the next look for an idle loop too, which then sees the
                            // PC trace it would have seen.
                            self.run_short_loop(
                                target.min(idle_check),
                                idle_check.saturating_sub(TRACE_LEAD),
                            );
                        }
                    }
                }
                if !DEFER_LCD || self.bus.bail & BAIL_RETARGET == 0 {
                    break;
                }
                let bail = self.bus.bail;
                self.bus.bail = bail & BAIL_END;
                target = target.min(self.bus.deferral_retarget);
                if bail & BAIL_END != 0 {
                    break;
                }
                // An LCD poll's read ended the deferral (an LY or STAT read does): its loop
                // runs now, up to the new target. (The other hints are dropped: the interpreter
                // runs such code anyway.)
                if bail & BAIL_POLL != 0 {
                    self.run_poll_loop(target);
                }
            }
            if DEFER_LCD && self.bus.lcd_deferred_until != 0 {
                self.end_lcd_deferral_at_turn_end();
            }
            if !TURNS || !self.light_turn_end() {
                if idle_loops {
                    self.next_idle_check = idle_check;
                }
                return;
            }
            planned_idle_check = idle_check;
            target = self.next_target();
            // The LCD deferred from the slice's first light turn end on. (954e54b deferred only
            // after 40 of them, when that made Runner and Dodge faster in wall clock; the
            // deferral has got cheaper since: deferring at once now saves 2-4% of host
            // instructions on every game measured and runs faster in wall clock too.)
            if DEFER_LCD {
                // Without the previous instruction's start (TRACK_PREV), only a line at a time
                // and only while the APU's records of turn ends change nothing: the unit may
                // have been powered on since the slice began. (A deferral under way when that
                // write came ended at it: an APU access to a powered unit is not inert.) The
                // common refusals inline: a slice ended by a write that may change what the
                // scheduler planned (`BAIL_END`), and where nothing can be deferred.
                let records_matter = self.bus.apu.turn_end_records_matter();
                let lines = TRACK_PREV && self.multi_line_deferral && !records_matter;
                if self.bus.bail & BAIL_END == 0
                    && self.bus.lcd.line_may_defer(lines)
                    && (TRACK_PREV || !records_matter)
                {
                    target = self.defer_lcd(target, lines);
                }
            }
        }
    }

    /// After a light turn's end whose next `target` is the LCD's: the rest of the line's
    /// transitions deferred where they may be ([`Lcd::deferrable_line_end`], nothing else due
    /// before the line's end, `others_at`), and the new target (the line's end, or with
    /// `lines` that of the span [`Lcd::deferrable_span_end`] gives); else `target`.
    /// `lines`: the deferral may go on for further lines: the interpreter keeps the previous
    /// instruction's start (`TRACK_PREV`), which the replays need to tell whether the last
    /// deferred LY step's OAM step ran ([`Lcd::replay_deferred`]), and the APU's records of
    /// turn ends do not matter ([`Lcd::deferrable_span_end`]); the caller has checked that
    /// and `multi_line_deferral`.
    #[inline(never)]
    fn defer_lcd(&mut self, target: u64, lines: bool) -> u64 {
        // In the last loop proved idle, the slice would resume it (`first_idle_check`), which
        // ends a deferral at once: the idle-loop fast-forward skips more. On a line where an
        // LY or STAT read ended a deferral, a polling loop would end the next one too
        // (`SystemBus::lcd_polled_line`).
        let (low, high, _) = self.last_idle_loop;
        if (low..=high).contains(&self.cpu.r.pc) || self.bus.lcd.ly() == self.bus.lcd_polled_line {
            return target;
        }
        // Nor across lines while a sound power-on would read the timer's counter as of the last
        // turn end (`Apu::write`).
        let lines = lines && !self.bus.apu.div_edge_written();
        let now = self.bus.cycles;
        let lcd = &self.bus.lcd;
        let line_end = match lcd.deferrable_line_end(now) {
            Some(end) => end,
            None if lines => match lcd.deferrable_line_end_later(now) {
                Some(end) => end,
                None => return target,
            },
            None => return target,
        };
        // (A slice ended by a write that may change what the scheduler planned is not
        // deferred from: the caller checks `BAIL_END`.)
        if line_end >= self.others_at {
            return target;
        }
        let mut end = line_end;
        if lines {
            end = lcd.deferrable_span_end(line_end, self.others_at);
            if end <= target {
                // Nothing past the next transition (an LY step that may not be deferred):
                // the turn ends there anyway.
                return target;
            }
            let ly_steps = (end - line_end) / 456;
            self.lcd_deferred_lines += ly_steps;
            self.lcd_deferred_ly_steps += ly_steps;
        }
        self.bus.lcd_deferred_until = end;
        self.lcd_deferred_lines += 1;
        self.lcd_deferred_overdue_oam += self.bus.lcd.oam_step_overdue() as u64;
        end
    }

    /// The slice's end while the LCD's transitions are deferred: the turn ends at or after the
    /// last deferred one (its own turn's end ticks the transition that follows, the next
    /// line's first), unless an instruction ended the slice first.
    #[inline(never)]
    fn end_lcd_deferral_at_turn_end(&mut self) {
        let bus = &mut self.bus;
        let until = bus.lcd_deferred_until;
        bus.lcd
            .replay_deferred(bus.cycles.min(until - 1), bus.instr_start);
        // (An LCD access in the turn's last instruction may have ticked past it.)
        debug_assert!(bus.bail & BAIL_END != 0 || bus.lcd.next_transition_at() >= until);
        bus.lcd_deferred_until = 0;
    }

    /// End the LCD's deferral between two instructions (now): the deferred transitions due
    /// by now run (the turns that ended by now ran them), and the slice's new target is the
    /// next one (`BAIL_RETARGET`).
    #[inline(never)]
    fn end_lcd_deferral_between_instructions(&mut self) {
        let bus = &mut self.bus;
        bus.replay_lcd_deferral(bus.cycles, bus.instr_start);
        bus.end_lcd_deferral();
    }

    /// The next slice's target after a light turn's end: [`GameBoy::turn_budget_timer_synced`]
    /// from now. The LCD, just caught up, is usually nearest; the other devices' nearest event
    /// is then at or after `others_at`, the absolute cycle `now + min(timer, APU, serial
    /// distances)` as of the last full budget ([`GameBoy::next_target_and_others`]). Between
    /// two full budgets none of those events comes nearer: the timer's overflow keeps its time
    /// (writes to its registers end the slice, and such a turn's end takes the full budget;
    /// reads only sync it), and the idle serial port's and the APU's distances only grow with
    /// time. So an LCD target before `others_at` is the full budget's (and never ties the
    /// APU's distance: no lagging APU catch-up is due).
    #[inline(always)]
    fn next_target(&mut self) -> u64 {
        let b = &self.bus;
        let lcd = b.lcd.cycles_to_interrupt().min(b.lcd.cycles_to_frame());
        let end = b.cycles + lcd.max(4) as u64;
        if b.bail & BAIL_END == 0 && end < self.others_at {
            debug_assert_eq!(lcd, self.slice_budget());
            debug_assert!(
                !self.bus.apu_may_lag || lcd != self.bus.apu.cycles_to_interrupt() as i64
            );
            return end;
        }
        self.next_target_and_others()
    }

    /// The next slice's target after a light turn's end ([`GameBoy::turn_budget_timer_synced`]),
    /// and `others_at` for [`GameBoy::next_target`]: when the nearest of the timer's, the
    /// APU's and the serial port's events is due, as their distances now say.
    #[inline(never)]
    fn next_target_and_others(&mut self) -> u64 {
        let target = self.bus.cycles + self.turn_budget_timer_synced().max(4) as u64;
        // (The timer was just synced to `cycles`: its distance is the one it keeps.)
        let b = &self.bus;
        self.others_at = b.cycles.saturating_add(b.other_devices_distance());
        target
    }

    /// [`GameBoy::run_plain`] with the PC trace, out of line: it runs seldom (with the trace
    /// off) and a second copy of the interpreter inside `run_slice` costs the first one
    /// registers (inlined: +0.7M host instructions on Pokemon Red's battle, callgrind).
    #[inline(never)]
    fn run_plain_traced<const DEFER_LCD: bool, const TRACK_PREV: bool>(&mut self, target: u64) {
        self.run_plain::<true, DEFER_LCD, TRACK_PREV>(target);
    }

    /// [`GameBoy::run_plain`] without the PC trace, out of line too: inside `run_slice` the
    /// loop shared the registers with the slice's own values, and its fields' addresses were
    /// spilled to the stack and loaded again in every instruction that used them (callgrind,
    /// sound off: Snake -3.7%, Pokemon Red's walk -4.0%, v2's play -2.5% host instructions
    /// out of line, the call once a slice).
    #[inline(never)]
    fn run_plain_untraced<const DEFER_LCD: bool, const TRACK_PREV: bool>(&mut self, target: u64) {
        self.run_plain::<false, DEFER_LCD, TRACK_PREV>(target);
    }

    /// Instructions while the CPU is not locked, no EI countdown is under way and no OAM DMA
    /// runs: what `execute_instruction` does, minus the bookkeeping such a CPU does not need
    /// (the locked test, EI's countdown and its slice-ending check, and the HL snapshot: only
    /// OAM reads during a DMA look at it, and a DMA can only start with a write to FF46, which
    /// ends the slice). Returns when the slice's time is up, when an instruction bails (an EI
    /// among them: the next instruction needs the countdown), or when the CPU locks.
    /// `TRACE`: each instruction's address goes into the PC trace; without it the trace is
    /// complete only from the next instruction on.
    #[inline(always)]
    fn run_plain<const TRACE: bool, const DEFER_LCD: bool, const TRACK_PREV: bool>(
        &mut self,
        target: u64,
    ) {
        // The instruction count stays in a local (a register) while the loop runs.
        let mut count = self.instructions;
        self.run_plain_counted::<TRACE, DEFER_LCD, TRACK_PREV>(target, &mut count);
        self.instructions = count;
        if !TRACE {
            self.pc_trace_from = count;
        }
    }

    /// [`GameBoy::run_plain`]'s loop, counting instructions in `count` instead of
    /// `self.instructions` (the PC trace's position). The bus's clock and instruction
    /// bookkeeping are locals while it runs ([`PlainBus`]), written back when it returns. The
    /// CPU's registers stay in `self.cpu`: as locals too (tried) they cost more, 114 against
    /// 104 host instructions per SM83 instruction (Pokemon Red battle), spilled and reloaded
    /// around the opcode arms.
    #[inline(always)]
    fn run_plain_counted<const TRACE: bool, const DEFER_LCD: bool, const TRACK_PREV: bool>(
        &mut self,
        target: u64,
        count: &mut u64,
    ) {
        debug_assert!(!self.bus.dma.active);
        let cpu = &mut self.cpu;
        let mut bus = PlainBus::<DEFER_LCD, TRACK_PREV>::new(&mut self.bus, target);
        let pc_trace = &mut self.pc_trace;
        // The PC in a local (a register) while the loop runs, stored when it stops: the
        // instructions' bus calls cannot read the CPU.
        let mut pc = cpu.r.pc;
        // One test per instruction: a bail sets `limit` to 0 (see `PlainBus`).
        while bus.cycles < bus.limit {
            if TRACE {
                pc_trace[*count as usize & PC_TRACE_MASK] = pc;
            }
            let start = bus.cycles;
            if TRACK_PREV {
                // Stored, not kept in a local: the loop has a register more for the rest
                // (callgrind, sound off: Snake, Dodge, Pokemon Red's walk, Shock Lobster and
                // v2's play 0.9-1.4% fewer host instructions).
                bus.bus.prev_instr_start = bus.instr_start;
            }
            bus.instr_start = start;
            // Every M-cycle's bus call moves `cycles` on by 4.
            let step = cpu.step_plain(&mut bus, &mut pc);
            // Counted after the step: the compiler then keeps the count in one register
            // (an `inc` per instruction instead of a `lea` and a `mov`; battle -2.0M host
            // instructions, callgrind).
            *count += 1;
            match step {
                Step::Normal => {}
                Step::Locked => break,
                Step::Halt => {
                    // As in `execute_instruction` (no EI was under way).
                    pc = pc.wrapping_sub(1);
                    self.halted_after_ei = false;
                    bus.bail(BAIL_END);
                    bus.cycles = start + 4;
                    break;
                }
                Step::Stop => {
                    cpu.stopped = false;
                    pc = pc.wrapping_add(1);
                    if bus.bus.cgb {
                        bus.store();
                        bus.bus.stop_cgb(start);
                        bus.reload();
                    }
                    bus.cycles = start + 4;
                }
                Step::Break => {
                    // Back onto the one-byte breakpoint opcode.
                    pc = pc.wrapping_sub(1);
                    bus.cycles = start;
                    bus.bail(BAIL_END);
                    self.break_hit = true;
                    break;
                }
            }
        }
        cpu.r.pc = pc;
        let bail = bus.bus.bail;
        if bail & BAIL_EI != 0 {
            // EI armed the enable; its own countdown step (2 -> 1), which `Cpu::step` would
            // have run.
            bus.bus.bail = bail & !BAIL_EI;
            cpu.ei_delay = 1;
        }
        bus.store();
    }

    /// A polling loop on an LCD register, run without the interpreter's per-instruction
    /// overhead but with exactly its effects. Called right after an `LDH A,(n)` read LY or
    /// STAT (just before PC, from ROM); if that instruction heads the loop
    ///
    /// ```text
    /// L: LDH A,(n)        ; n = 0x41 or 0x44
    ///    CP r | CP n | AND n
    ///    JR cc,L
    /// ```
    ///
    /// its iterations run here for as long as the slice lasts (the same `cycles < target`
    /// test before every instruction) and the branch is taken. Each instruction does what
    /// the interpreter would: the same register read at the same stamp (so the LCD catches
    /// up at the same points), the same flags, cycles, PC, instruction count and PC trace.
    /// Anything else (EI pending, OAM DMA running, breakpoints on, code outside the
    /// cartridge ROM) leaves the interpreter to it. The iterations whose read would return
    /// what the last one read are accounted whole, not run ([`GameBoy::skip_unchanged_polls`]).
    #[inline(never)]
    fn run_poll_loop(&mut self, target: u64) {
        let bus = &self.bus;
        let cpu = &self.cpu;
        // The LDH that bailed, a two-byte instruction, has just run.
        let start = cpu.r.pc.wrapping_sub(2);
        if !self.may_run_wait_loop()
            || bus.dma.active
            || bus.fetch_span == 0
            || !(0x100..=0x7FF0).contains(&start)
        {
            return;
        }
        let rom = |k: u16| bus.cart.read_rom(start + k);
        let reg = rom(1);
        if rom(0) != OPCODE_LDH_A_N as u8 || !(reg == 0x41 || reg == 0x44) {
            return;
        }
        // The test: an ALU kind (7 CP, 4 AND), its operand (register code or immediate).
        let test = rom(2);
        let (kind, imm, test_len) = match test {
            0xFE | 0xE6 => ((test >> 3) & 7, Some(rom(3)), 2u16),
            0xB8..=0xBD | 0xBF => (7, None, 1u16),
            _ => return,
        };
        let jr_at = start + 2 + test_len;
        let jr = rom(2 + test_len);
        if !matches!(jr, 0x20 | 0x28 | 0x30 | 0x38)
            || jr_at
                .wrapping_add(2)
                .wrapping_add(rom(3 + test_len) as i8 as u16)
                != start
        {
            return;
        }
        self.wait_loop_stats.poll_loops += 1;
        let test_cycles = 4 * test_len as u64;
        let addr = 0xFF00 | reg as u16;
        let ldh_stamp = DATA_ACCESS[OPCODE_LDH_A_N as usize][0];
        loop {
            // The test.
            if self.bus.cycles >= target {
                return;
            }
            self.trace(start + 2);
            let v = match imm {
                Some(n) => n,
                None => self.cpu.get_r8(&mut self.bus, test),
            };
            self.cpu.alu(kind, v);
            self.bus.cycles += test_cycles;
            self.cpu.r.pc = jr_at;
            // The branch.
            if self.bus.cycles >= target {
                return;
            }
            self.trace(jr_at);
            if !self.cpu.condition(jr >> 3) {
                self.bus.cycles += 8;
                self.cpu.r.pc = jr_at + 2;
                return;
            }
            self.bus.cycles += 12;
            self.cpu.r.pc = start;
            // The read.
            if self.bus.cycles >= target {
                return;
            }
            let pcs = [start, start + 2, jr_at];
            if self.skip_unchanged_polls(addr, ldh_stamp, pcs, test_cycles, target)
                && self.bus.cycles >= target
            {
                return;
            }
            self.trace(start);
            let bus = &mut self.bus;
            let now = bus.cycles;
            bus.instr_start = now;
            bus.hl_at_start = self.cpu.r.hl();
            // What `read_io` does for FF41/FF44 with no OAM DMA running (none can start
            // in this loop: it writes nothing).
            let value =
                bus.lcd
                    .read_register(addr, now + ldh_stamp.cycles as u64, ldh_stamp.offset as u64);
            bus.drain_lcd_irq();
            self.cpu.r.a = value;
            self.bus.cycles = now + 12;
            self.cpu.r.pc = start + 2;
        }
    }

    /// [`GameBoy::run_poll_loop`]'s iterations that read the value the last one read, as
    /// whole iterations: the clock, instruction count and PC trace (`pcs`: the read, the
    /// test, the branch) move as the interpreter would move them, and the registers stay.
    /// Called at the loop's read (PC at `pcs[0]`, the slice not over; `read_stamp`: its data
    /// access's). Those reads would only move the LCD's clock ([`Lcd::read_holds_until`]);
    /// each skipped instruction starts before `target`, as in the interpreter. Returns true
    /// when iterations were skipped; the PC is then at the next read, which the caller runs
    /// if the slice is not over.
    fn skip_unchanged_polls(
        &mut self,
        addr: u16,
        read_stamp: Stamp,
        pcs: [u16; 3],
        test_cycles: u64,
        target: u64,
    ) -> bool {
        let read_delay = read_stamp.cycles as u64 + read_stamp.offset as u64;
        let Some(holds_until) = self.bus.lcd.read_holds_until(addr, self.cpu.r.a) else {
            return false;
        };
        // An iteration: the read (12 cycles), the test, the branch taken (12).
        let period = 24 + test_cycles;
        let now = self.bus.cycles;
        let (first_read, first_branch) = (now + read_delay, now + 12 + test_cycles);
        if first_read >= holds_until || first_branch >= target {
            return false;
        }
        // (The slice's end came first in every skip measured on DMG hardware, our ROMs and
        // Pokemon Red: turns end at the LCD's transitions. The LCD's bound keeps the skip
        // exact wherever they might not.)
        let iterations = ((holds_until - 1 - first_read) / period + 1)
            .min((target - 1 - first_branch) / period + 1);
        self.wait_loop_stats.poll_skipped_instructions +=
            self.skip_iterations(&pcs, 0, iterations, period);
        // What the last skipped read leaves: its start and HL for the data-access stamps,
        // and the LCD's clock at its tick (the ticks compose; this one keeps every field).
        let last = now + (iterations - 1) * period;
        let bus = &mut self.bus;
        bus.instr_start = last;
        bus.hl_at_start = self.cpu.r.hl();
        bus.lcd.tick(last + read_delay);
        true
    }

    /// The wait loop of an OAM DMA routine in HRAM,
    ///
    /// ```text
    /// L: DEC r            ; r = B C D E H L or A
    ///    JR NZ,L
    /// ```
    ///
    /// run without the interpreter while a DMA copies from ROM or work RAM. Called right after
    /// an instruction fetched from HRAM with the DMA running, if PC is at such a loop. Each
    /// iteration does what the interpreter would (the same `cycles < target` test before every
    /// instruction, flags, cycles, PC, instruction count and PC trace), except the DMA
    /// catch-up at each HRAM fetch. The next catch-up comes later but copies the same bytes:
    /// after the loop the CPU fetches from HRAM again (the loop ends at most at FFFE) or the
    /// slice ends (`end_turn`), with no memory access in between; the loop writes nothing and
    /// takes no interrupt, and reads of ROM and work RAM do not depend on the time (unlike
    /// VRAM's, OAM's or a cartridge clock's, whose DMAs take the interpreter).
    #[inline(never)]
    fn run_dma_wait_loop(&mut self, target: u64) {
        let cpu = &self.cpu;
        let bus = &self.bus;
        let at = cpu.r.pc;
        if !self.may_run_wait_loop() || !bus.dma.active || !(0xFF80..=0xFFFB).contains(&at) {
            return;
        }
        let page = bus.dma.page(bus.cgb);
        if !(page < 0x80 || (0xC0..=0xFD).contains(&page)) {
            return;
        }
        let code = |k: u16| bus.hram[(at + k - 0xFF80) as usize];
        let dec = code(0);
        if dec & 0xC7 != 0x05 || dec == 0x35 || code(1) != 0x20 || code(2) != 0xFD {
            return;
        }
        self.wait_loop_stats.dma_wait_loops += 1;
        let start = self.bus.cycles;
        if start >= target {
            return;
        }
        // Worked out whole rather than iterated: the `DEC`s that run are the first `decs`,
        // each 16 cycles after the last (4 for it, 12 for the branch back), up to the one that
        // reaches zero or the last to start before `target`.
        let reg = dec >> 3;
        let v0 = self.cpu.get_r8(&mut self.bus, reg);
        let to_zero = if v0 == 0 { 256 } else { v0 as u64 };
        let decs = to_zero.min((target - start).div_ceil(16));
        let last_dec = start + 16 * (decs - 1);
        // Every instruction before the last `DEC` ran whole: a `DEC` and a taken branch each.
        let mut instructions = 2 * (decs - 1) + 1;
        let before_last = v0.wrapping_sub(decs as u8 - 1);
        let v = self.cpu.dec8(before_last);
        self.cpu.set_r8(&mut self.bus, reg, v);
        let (cycles, pc) = if last_dec + 4 >= target {
            (last_dec + 4, at + 1)
        } else {
            instructions += 1;
            if v == 0 {
                (last_dec + 12, at + 3)
            } else {
                (last_dec + 16, at)
            }
        };
        self.bus.cycles = cycles;
        self.cpu.r.pc = pc;
        // The PC trace as the interpreter leaves it: `at` and `at + 1` in turn, the last
        // `PC_TRACE_LEN` of them written.
        let first = self.instructions;
        for k in instructions.saturating_sub(PC_TRACE_LEN as u64)..instructions {
            self.pc_trace[(first + k) as usize & PC_TRACE_MASK] = at + (k & 1) as u16;
        }
        self.instructions = first + instructions;
    }

    /// What both wait-loop fast paths need: the switch on, and a CPU that runs each
    /// instruction plainly (no EI under way, no breakpoints, not halted).
    #[inline]
    fn may_run_wait_loop(&self) -> bool {
        let cpu = &self.cpu;
        self.wait_loop_fast_paths && cpu.ei_delay == 0 && !cpu.brk && !cpu.halted
    }

    /// Count an instruction at `pc` and put it in the PC trace (as `execute_instruction`).
    #[inline(always)]
    fn trace(&mut self, pc: u16) {
        let k = self.instructions;
        self.pc_trace[k as usize & PC_TRACE_MASK] = pc;
        self.instructions = k + 1;
    }

    /// At a slice start: wake from HALT and dispatch the highest-priority pending interrupt.
    /// Returns true when an interrupt is pending (whether or not IME let it through).
    fn service_interrupts(&mut self) -> bool {
        if self.cpu.ei_delay != 0 {
            return false;
        }
        if self.bus.pending_interrupts() == 0 {
            return false;
        }
        if self.cpu.halted && !self.halted_after_ei {
            self.cpu.r.pc = self.cpu.r.pc.wrapping_add(1);
        }
        self.halted_after_ei = false;
        if self.cpu.ime {
            self.dispatch_interrupt();
        }
        true
    }

    fn dispatch_interrupt(&mut self) {
        let now = self.bus.cycles;
        let pc = self.cpu.r.pc;
        let sp = self.cpu.r.sp;
        self.bus
            .write_at(sp.wrapping_sub(1), (pc >> 8) as u8, now, 0);
        // The high byte may have landed in IE and changed what is pending.
        let pending = self.bus.pending_interrupts();
        self.cpu.ime = false;
        if pending == 0 {
            self.cpu.r.pc = 0;
            return;
        }
        let (bit, vector) = interrupts::VECTORS
            .iter()
            .copied()
            .find(|(bit, _)| pending & bit != 0)
            .unwrap();
        self.bus.if_reg &= !bit;
        self.bus.write_at(sp.wrapping_sub(2), pc as u8, now, 0);
        self.cpu.r.sp = sp.wrapping_sub(2);
        self.cpu.r.pc = vector;
        self.bus.cycles += 20;
    }

    /// Instructions executed since power-on (not part of save states).
    pub fn instructions(&self) -> u64 {
        self.instructions
    }

    /// Trace every instruction's address (see [`GameBoy::pc_trace`]) or not (the default:
    /// the trace costs time).
    pub fn set_pc_trace(&mut self, on: bool) {
        if on && !self.pc_trace_on {
            // What the idle-loop finder traced before stays out of the reports.
            self.pc_trace_from = self.instructions;
        }
        self.pc_trace_on = on;
    }

    /// The address of the instruction `k` (1 = the last) before the next one in the PC
    /// trace's ring (the loop finders' look back; the caller knows the trace is complete there).
    #[inline]
    fn traced_pc_back(&self, k: usize) -> u16 {
        self.pc_trace[(self.instructions as usize).wrapping_sub(k) & PC_TRACE_MASK]
    }

    /// The last instructions' addresses, oldest first: up to [`PC_TRACE_REPORT_LEN`] of them,
    /// while the trace is on ([`GameBoy::set_pc_trace`]) and all traced; `None` while it is off.
    pub fn pc_trace(&self) -> Option<Vec<u16>> {
        if !self.pc_trace_on {
            return None;
        }
        let n = self.instructions;
        let from = self
            .pc_trace_from
            .max(n.saturating_sub(PC_TRACE_REPORT_LEN as u64));
        Some(
            (from..n)
                .map(|k| self.pc_trace[k as usize & PC_TRACE_MASK])
                .collect(),
        )
    }

    #[inline(always)]
    fn execute_instruction(&mut self) {
        let pc = self.cpu.r.pc;
        self.trace(pc);
        let bus = &mut self.bus;
        let start = bus.cycles;
        bus.prev_instr_start = bus.instr_start;
        bus.instr_start = start;
        bus.hl_at_start = u16::from_be_bytes([self.cpu.r.h, self.cpu.r.l]);
        let ei_delay_before = self.cpu.ei_delay;
        // Every M-cycle's bus call moves `cycles` on by 4.
        match self.cpu.step(bus) {
            Step::Normal | Step::Locked => {}
            Step::Halt => {
                // PyBoy keeps PC on the HALT while halted and steps over it on wake-up.
                self.cpu.r.pc = self.cpu.r.pc.wrapping_sub(1);
                self.halted_after_ei = ei_delay_before == 1;
                bus.bail |= BAIL_END;
                bus.cycles = start + 4;
            }
            Step::Stop => {
                // PyBoy treats STOP as a two-byte instruction that does not stop; on CGB
                // hardware it performs the armed speed switch and resets DIV.
                self.cpu.stopped = false;
                self.cpu.r.pc = self.cpu.r.pc.wrapping_add(1);
                if bus.cgb {
                    bus.stop_cgb(start);
                }
                bus.cycles = start + 4;
            }
            Step::Break => {
                // PyBoy's BRK: PC stays on it, no cycles pass, the slice ends; EI's countdown
                // still runs (PyBoy counts it down after every executed opcode).
                self.cpu.r.pc = pc;
                bus.cycles = start;
                if self.cpu.ei_delay > 0 {
                    self.cpu.ei_delay -= 1;
                    if self.cpu.ei_delay == 0 {
                        self.cpu.ime = true;
                    }
                }
                bus.bail |= BAIL_END;
                self.break_hit = true;
                return;
            }
        }
        if ei_delay_before == 1 && bus.opcode != OPCODE_DI && bus.opcode != OPCODE_RETI {
            // EI's enable just took effect: end the slice only if an interrupt is waiting.
            bus.bail &= !BAIL_END;
            if bus.pending_interrupts() != 0 {
                bus.bail |= BAIL_END;
            }
        }
    }

    /// Press or release buttons (bit mask, see [`crate::joypad::button`]).
    pub fn set_buttons(&mut self, pressed: u8) {
        if self.bus.joypad.set_pressed(pressed) {
            self.bus.if_reg |= interrupts::JOYPAD;
        }
    }

    // ---------------------------------------------------------------- save states

    const STATE_MAGIC: &'static [u8; 8] = b"EMURUST\x04";
    /// States of Game Boy Color hardware: the DMG layout followed by the CGB section.
    const STATE_MAGIC_CGB: &'static [u8; 8] = b"EMURUST\x84";

    fn state_magic(&self) -> &'static [u8; 8] {
        if self.bus.cgb {
            Self::STATE_MAGIC_CGB
        } else {
            Self::STATE_MAGIC
        }
    }

    /// Serialise the whole machine. The ROM itself is not included; a fingerprint of it is,
    /// and the options the machine was created with (a state loads only into a machine with
    /// the same options).
    pub fn save_state(&self) -> Vec<u8> {
        let mut w = StateWriter::new();
        w.buf.extend_from_slice(self.state_magic());
        w.u64(self.bus.cart.fingerprint());
        let sound = self.bus.apu.options();
        w.bool(sound.emulated);
        w.u32(sound.sample_rate);
        self.write_machine(&mut w);
        self.bus.cart.save_state(&mut w);
        self.write_pyboy_stored_values(&mut w);
        w.buf
    }

    /// Values a loaded PyBoy state stored beside what they derive from, which PyBoy shows and
    /// saves as stored (see `pyboy_state_versions`): the DIV byte of an older state, the object
    /// priority byte on a DMG. After the cartridge section: the machine part (and the embedded
    /// post-boot snapshots, which are machine parts) keeps its layout.
    fn write_pyboy_stored_values(&self, w: &mut StateWriter) {
        let shown = self.bus.timer.div_shown();
        w.bool(shown.is_some());
        w.u8(shown.unwrap_or(0));
        w.u8(self.bus.lcd.cgb.opri);
    }

    /// Everything but the cartridge.
    fn write_machine(&self, w: &mut StateWriter) {
        let r = &self.cpu.r;
        for v in [r.a, r.f, r.b, r.c, r.d, r.e, r.h, r.l] {
            w.u8(v);
        }
        w.u16(r.sp);
        w.u16(r.pc);
        w.bool(self.cpu.ime);
        w.u8(self.cpu.ei_delay);
        w.bool(self.cpu.halted);
        w.bool(self.cpu.stopped);
        w.bool(self.cpu.locked);
        w.bool(self.halted_after_ei);
        w.bool(self.resume_frame);
        w.u64(self.frames);
        let b = &self.bus;
        w.u64(b.cycles);
        w.u8(b.if_reg);
        w.u8(b.ie_reg);
        w.bool(b.boot_rom_mapped);
        w.bytes(&b.wram);
        w.bytes(&b.hram);
        w.bytes(&b.unusable);
        w.bytes(&b.io_scratch);
        w.bool(b.dma.active);
        w.u8(b.dma.source);
        w.u8(b.dma.index);
        w.u64(b.dma.start);
        b.timer.save_state(w);
        b.serial.save_state(w);
        b.joypad.save_state(w);
        b.lcd.save_state(w);
        b.apu.save_state(w);
        if b.cgb {
            b.save_cgb_state(w);
        }
    }

    /// Restore a state made by [`save_state`](Self::save_state) for the same ROM. On error the
    /// machine is left exactly as it was.
    pub fn load_state(&mut self, data: &[u8]) -> Result<(), CoreError> {
        if data.len() >= 8
            && (&data[..8] == Self::STATE_MAGIC || &data[..8] == Self::STATE_MAGIC_CGB)
            && &data[..8] != self.state_magic()
        {
            return Err(CoreError::State(format!(
                "the state was saved on {} hardware, this emulator runs {}",
                if self.bus.cgb {
                    "DMG"
                } else {
                    "Game Boy Color"
                },
                if self.bus.cgb {
                    "Game Boy Color"
                } else {
                    "DMG"
                },
            )));
        }
        if data.len() < 16 || &data[..8] != self.state_magic() {
            return Err(CoreError::State(
                "not an emurust save state (bad magic or version)".into(),
            ));
        }
        let mut r = StateReader::new(&data[8..]);
        let fp = r.u64()?;
        if fp != self.bus.cart.fingerprint() {
            return Err(CoreError::State(
                "the state was saved with a different ROM".into(),
            ));
        }
        let saved = SoundOptions {
            emulated: r.bool()?,
            sample_rate: r.u32()?,
        };
        let ours = self.bus.apu.options();
        if saved != ours {
            return Err(CoreError::State(format!(
                "the state was saved with {}, this emulator has {}: create it with the same \
                 sound options to load it",
                saved.describe(),
                ours.describe()
            )));
        }
        let mut decoded = self.read_machine(&mut r)?;
        decoded.bus.cart.load_state(&mut r)?;
        let shown = r.bool()?;
        let div = r.u8()?;
        decoded.bus.timer.set_div_shown(shown.then_some(div));
        decoded.bus.lcd.cgb.opri = r.u8()?;
        if r.remaining() != 0 {
            return Err(CoreError::State(format!(
                "{} unexpected bytes at the end",
                r.remaining()
            )));
        }
        self.commit(decoded);
        Ok(())
    }

    /// Restore everything but the cartridge from `data` (the machine part of a state).
    pub fn load_machine_state(&mut self, data: &[u8]) -> Result<(), CoreError> {
        let mut r = StateReader::new(data);
        let decoded = self.read_machine(&mut r)?;
        if r.remaining() != 0 {
            return Err(CoreError::State(format!(
                "{} unexpected bytes at the end",
                r.remaining()
            )));
        }
        self.commit(decoded);
        Ok(())
    }

    /// The machine part of the post-boot state, from running `boot_rom` until it unmaps itself,
    /// with VRAM and the picture blanked (see [`crate::postboot`]).
    /// Also returns the cycle at which the boot ROM's last frame started (see
    /// [`crate::postboot::BOOT_EXIT_FRAME_START`]).
    pub fn postboot_snapshot(boot_rom: Arc<[u8]>) -> Result<(Vec<u8>, u64), CoreError> {
        Self::postboot_snapshot_for(boot_rom, None)
    }

    /// [`postboot_snapshot`](Self::postboot_snapshot) on chosen hardware: `cgb` is
    /// `Some(colour)` for Game Boy Color hardware with a CGB cartridge (`colour`) or a DMG one.
    pub fn postboot_snapshot_for(
        boot_rom: Arc<[u8]>,
        cgb: Option<bool>,
    ) -> Result<(Vec<u8>, u64), CoreError> {
        let mut rom = vec![0u8; 0x8000];
        if cgb == Some(true) {
            rom[0x143] = 0x80;
        }
        rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]);
        rom[0x150..0x152].copy_from_slice(&[0x18, 0xFE]);
        rom[0x14D] = crate::cartridge::header::compute_header_checksum(&rom);
        let mut gb = GameBoy::with_hardware(rom.into(), Some(boot_rom), cgb.map(|_| true))?;
        if !gb.run_until_boot_rom_unmapped(1000) {
            return Err(CoreError::BootRom(
                "the boot ROM did not unmap itself within 1000 frames".into(),
            ));
        }
        gb.bus.lcd.clear_graphics();
        gb.frames = 0;
        let mut w = StateWriter::new();
        gb.write_machine(&mut w);
        Ok((w.buf, gb.frame_start))
    }

    /// Decode the machine part into fresh components (the cartridge is cloned from `self`), so
    /// that a failure leaves `self` untouched.
    fn read_machine(&self, r: &mut StateReader) -> Result<Decoded, CoreError> {
        let mut cpu = Cpu::new();
        let mut regs = [0u8; 8];
        for v in regs.iter_mut() {
            *v = r.u8()?;
        }
        let [a, f, b, c, d, e, h, l] = regs;
        cpu.r = Registers {
            a,
            f: f & 0xF0,
            b,
            c,
            d,
            e,
            h,
            l,
            sp: r.u16()?,
            pc: r.u16()?,
        };
        cpu.ime = r.bool()?;
        cpu.ei_delay = r.u8()?;
        if cpu.ei_delay > 2 {
            return Err(CoreError::State("EI delay out of range".into()));
        }
        cpu.halted = r.bool()?;
        cpu.stopped = r.bool()?;
        cpu.locked = r.bool()?;
        let halted_after_ei = r.bool()?;
        let resume_frame = r.bool()?;
        let frames = r.u64()?;

        let mut bus = SystemBus::new(
            self.bus.cart.clone(),
            self.bus.boot_rom.clone(),
            self.bus.cgb,
            self.bus.apu.options(),
        );
        bus.cycles = r.u64()?;
        bus.if_reg = r.u8()? & 0x1F;
        bus.ie_reg = r.u8()?;
        bus.boot_rom_mapped = r.bool()?;
        bus.refresh_fetch_span();
        if bus.boot_rom_mapped && bus.boot_rom.is_none() {
            return Err(CoreError::State(
                "the state has the boot ROM mapped, but this emulator has none".into(),
            ));
        }
        bus.wram.copy_from_slice(r.bytes_exact(0x2000)?);
        bus.hram.copy_from_slice(r.bytes_exact(0x7F)?);
        bus.unusable.copy_from_slice(r.bytes_exact(0x60)?);
        bus.io_scratch.copy_from_slice(r.bytes_exact(0x4C)?);
        bus.dma.active = r.bool()?;
        bus.dma.source = r.u8()?;
        bus.dma.index = r.u8()?;
        if bus.dma.index > 0xA0 {
            return Err(CoreError::State("OAM DMA index out of range".into()));
        }
        bus.dma.start = r.u64()?;
        bus.timer.load_state(r)?;
        bus.serial.load_state(r)?;
        bus.joypad.load_state(r)?;
        bus.lcd.load_state(r)?;
        bus.apu.load_state(r)?;
        if bus.cgb {
            bus.load_cgb_state(r)?;
        }
        bus.check_state_times(frames)?;
        Ok(Decoded {
            cpu,
            halted_after_ei,
            resume_frame,
            frames,
            bus,
        })
    }

    fn commit(&mut self, mut d: Decoded) {
        // Output logs are not machine state: keep them.
        d.bus.serial.restore_sent(self.bus.serial.take_sent());
        d.bus.lcd.keep_picture_buffers(&mut self.bus.lcd);
        // Nor is the host's breakpoint setting.
        d.cpu.brk = self.cpu.brk;
        self.cpu = d.cpu;
        self.bus = d.bus;
        self.halted_after_ei = d.halted_after_ei;
        self.resume_frame = d.resume_frame;
        self.frames = d.frames;
    }
}

#[cfg(test)]
mod breakpoint_tests {
    use super::*;

    /// A ROM whose program at 0x150 is `INC A ; JR -3` (loops forever).
    fn looping_rom() -> Arc<[u8]> {
        let mut rom = vec![0u8; 0x8000];
        rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]);
        rom[0x150..0x153].copy_from_slice(&[0x3C, 0x18, 0xFD]);
        rom[0x14D] = crate::cartridge::header::compute_header_checksum(&rom);
        rom.into()
    }

    #[test]
    fn breakpoint_opcode_stops_the_frame_and_single_step_runs_one_instruction() {
        let mut gb = GameBoy::new(looping_rom(), None).unwrap();
        gb.tick(1, false, false);
        assert!(gb.bus.cart.override_rom(0, 0x150, 0xDB));
        gb.set_breakpoints_enabled(true);
        gb.begin_frame(false, false);
        assert!(!gb.run_to_break(), "stops at the breakpoint");
        assert_eq!(gb.cpu.r.pc, 0x150);
        let (a, cycles) = (gb.cpu.r.a, gb.bus.cycles);
        // The host puts the instruction back and single-steps it.
        assert!(gb.bus.cart.override_rom(0, 0x150, 0x3C));
        assert!(!gb.single_step());
        assert_eq!(gb.cpu.r.a, a.wrapping_add(1));
        assert_eq!(gb.cpu.r.pc, 0x151);
        assert_eq!(gb.bus.cycles, cycles + 4);
        // Patched in again, the loop comes back to it once per iteration (12 cycles).
        assert!(gb.bus.cart.override_rom(0, 0x150, 0xDB));
        assert!(!gb.run_to_break());
        assert_eq!(gb.cpu.r.pc, 0x150);
        assert_eq!(gb.bus.cycles, cycles + 16);
        assert!(!gb.cpu.locked);
    }

    #[test]
    fn without_breakpoints_enabled_0xdb_still_locks_the_cpu() {
        let mut gb = GameBoy::new(looping_rom(), None).unwrap();
        gb.tick(1, false, false);
        assert!(gb.bus.cart.override_rom(0, 0x150, 0xDB));
        gb.tick(2, false, false);
        assert!(gb.cpu.locked);
    }

    #[test]
    fn set_div_keeps_the_low_counter_byte() {
        let mut gb = GameBoy::new(looping_rom(), None).unwrap();
        gb.tick(1, false, false);
        let low = gb.bus.timer.counter() & 0xFF;
        gb.set_div(0xAB);
        assert_eq!(gb.bus.timer.counter(), 0xAB00 | low);
    }
}
