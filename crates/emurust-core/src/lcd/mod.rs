//! The DMG picture processing unit (LCD controller), behaving exactly like PyBoy 2.8.1.
//!
//! Spec: Pan Docs, "Rendering", "LCD Control", "LCD Status", "OAM", "VRAM".
//! Oracle: PyBoy 2.8.1's LCD, whose timing we must reproduce to the T-cycle, including
//! its simplifications:
//!
//! * The controller is a small state machine stepped by [`Lcd::tick`]. Each call moves
//!   the internal dot clock forward and performs **at most one** state transition, even
//!   when the clock has run past several deadlines. The scheduler then sees a negative
//!   [`Lcd::cycles_to_interrupt`] and comes back after 4 cycles to perform the next one.
//! * A whole scanline is drawn at once, when mode 0 (HBlank) begins, from the registers
//!   and memory as they are at that moment.
//! * Line timing: mode 2 is 80 dots, mode 3 is 172 dots plus a penalty for objects and
//!   fine scroll, mode 0 fills the rest. LY advances 4 dots before the next mode 2.
//! * The first frame after the LCD is switched on starts in mode 0, skips the first
//!   mode 2, runs every line 4 dots shorter and is shown blank (Pan Docs, LCDC.7).
//!
//! Pixel drawing lives in `render.rs`.

pub mod cgb_palette;
mod cgb_render;
mod pyboy_state;
mod render;

pub use cgb_render::luma;

pub use pyboy_state::{PYBOY_LCD_CGB_EXTRA_LEN, PYBOY_LCD_SECTION_LEN, PYBOY_RENDERER_SECTION_LEN};

use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// T-cycles per frame with the LCD on (154 lines of 456 dots).
pub const FRAME_CYCLES: u64 = 70224;
pub const SCREEN_W: usize = 160;
pub const SCREEN_H: usize = 144;

const IRQ_VBLANK: u8 = 1 << 0;
const IRQ_STAT: u8 = 1 << 1;

/// What the deadline `clock_target` stands for, besides entering `next_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Step {
    /// Enter `next_mode`.
    Mode = 0,
    /// End of HBlank: LY moves to the next line (4 dots before its mode 2).
    NextLine = 1,
    /// The delayed start of mode 2 on a new line.
    Oam = 2,
    /// CGB hardware: the VBlank STAT interrupt was raised 4 dots before VBlank starts.
    VblankPretriggered = 3,
}

impl Step {
    fn from_u8(v: u8) -> Result<Step, CoreError> {
        match v {
            0 => Ok(Step::Mode),
            1 => Ok(Step::NextLine),
            2 => Ok(Step::Oam),
            3 => Ok(Step::VblankPretriggered),
            _ => Err(CoreError::State(format!("bad LCD step {v}"))),
        }
    }
}

#[derive(Clone)]
pub struct Lcd {
    pub vram: [u8; 0x2000],
    /// Private: every write goes through [`Lcd::oam_mut`], which keeps the per-line object
    /// lists honest.
    oam: [u8; 0xA0],
    /// Interrupt requests raised since the last [`Lcd::take_irq`] (bit0 VBlank, bit1 STAT).
    pub irq: u8,

    // ---- registers ----
    lcdc: u8,
    /// STAT as read back, without the override: bit 7 set, bits 3-6 enables,
    /// bit 2 coincidence, bits 0-1 mode.
    stat: u8,
    /// Current mode (kept separately from `stat` as the state machine's own copy).
    mode: u8,
    /// Level of the internal STAT interrupt line; interrupts fire on rising edges.
    stat_line: bool,
    scy: u8,
    scx: u8,
    ly: u8,
    lyc: u8,
    wy: u8,
    wx: u8,
    bgp: u8,
    obp0: u8,
    obp1: u8,

    // ---- timing ----
    /// Absolute cycle of the previous [`Lcd::tick`].
    last_now: u64,
    /// Dots since the start of the frame (wrapping arithmetic, as in the oracle).
    clock: u64,
    /// Dot at which the next transition is due.
    clock_target: u64,
    next_mode: u8,
    step: Step,
    /// Mode 3 length adjustment computed when mode 3 began (signed).
    mode3_extra: i16,
    frame_done: bool,
    /// The frame after the LCD was switched on (shorter lines, shown blank).
    first_frame: bool,
    /// LCD switched on; restart the state machine at the next tick.
    restart_pending: bool,
    /// The next STAT read reports mode 0 (LYC written while the LCD was off).
    stat_mode_override: bool,
    lyc_written_while_off: bool,
    to_interrupt: i64,
    to_frame: i64,

    // ---- renderer ----
    render: bool,
    /// WY matched LY at some point of this frame (Pan Docs, "Window").
    window_armed: bool,
    /// The window's internal line counter (incremented before use).
    window_line: i32,
    /// Per line: SCX, SCY, WX, WY, LCDC & 0x10 as they were when the line was drawn.
    line_params: [[u8; 5]; SCREEN_H],
    rgba: Vec<u8>,
    shades: Vec<u8>,
    /// Per pixel: 1 where the background/window colour index was 0.
    bg_zero: Vec<u8>,
    /// Derived from OAM (not saved): the objects on each line.
    line_objects: render::LineObjects,

    // ---- Game Boy Color (see `cgb_render.rs`) ----
    /// CGB hardware (PyBoy's `_is_cgb_hardware`): CGB line timing.
    cgb_hw: bool,
    /// Colour rendering (PyBoy's `lcd.cgb`): CGB hardware not switched to DMG mode.
    cgb_colour: bool,
    /// VRAM bank the CPU sees (VBK bit 0).
    pub vbk: u8,
    /// 1 in double speed: the LCD sees half the CPU's cycles.
    pub speed_shift: u8,
    pub cgb: Box<CgbVideo>,
    /// Times a deferral's replay ran whole lines at once ([`Lcd::replay_deferred`]): a statistic
    /// for tests and profiles, not machine state.
    pub replayed_quiet_runs: u64,
}

/// The Game Boy Color's extra video state.
#[derive(Clone)]
pub struct CgbVideo {
    pub vram1: [u8; 0x2000],
    pub bg: cgb_palette::PaletteMemory,
    pub obj: cgb_palette::PaletteMemory,
    /// FF6C (object priority mode) as PyBoy stores it (0xFF until written).
    pub opri: u8,
    /// Grey picture (CGB hardware only), see [`luma`].
    pub grey: Vec<u8>,
}

impl CgbVideo {
    fn new() -> CgbVideo {
        CgbVideo {
            vram1: [0; 0x2000],
            bg: cgb_palette::PaletteMemory::new(),
            obj: cgb_palette::PaletteMemory::new(),
            opri: 0xFF,
            grey: Vec::new(),
        }
    }
}

impl Default for Lcd {
    fn default() -> Self {
        Self::new()
    }
}

impl Lcd {
    /// Power-on state: LCD off, BGP=FC, OBP0=OBP1=FF, STAT=80, screen all zero bytes.
    pub fn new() -> Lcd {
        Lcd {
            vram: [0; 0x2000],
            oam: [0; 0xA0],
            irq: 0,
            lcdc: 0,
            stat: 0x80,
            mode: 0,
            stat_line: false,
            scy: 0,
            scx: 0,
            ly: 0,
            lyc: 0,
            wy: 0,
            wx: 0,
            bgp: 0xFC,
            obp0: 0xFF,
            obp1: 0xFF,
            last_now: 0,
            clock: 0,
            clock_target: FRAME_CYCLES,
            next_mode: 2,
            step: Step::Mode,
            mode3_extra: 0,
            frame_done: false,
            first_frame: false,
            restart_pending: false,
            stat_mode_override: false,
            lyc_written_while_off: false,
            to_interrupt: 0,
            to_frame: FRAME_CYCLES as i64,
            render: true,
            window_armed: false,
            window_line: 0,
            line_params: [[0; 5]; SCREEN_H],
            rgba: vec![0; SCREEN_W * SCREEN_H * 4],
            shades: vec![0; SCREEN_W * SCREEN_H],
            bg_zero: vec![0; SCREEN_W * SCREEN_H],
            line_objects: render::LineObjects::new(),
            cgb_hw: false,
            cgb_colour: false,
            vbk: 0,
            speed_shift: 0,
            cgb: Box::new(CgbVideo::new()),
            replayed_quiet_runs: 0,
        }
    }

    /// Make this the LCD of Game Boy Color hardware, in colour mode or not (a DMG game).
    pub fn set_cgb(&mut self, colour: bool) {
        self.cgb_hw = true;
        self.cgb_colour = colour;
        self.cgb.grey = vec![0; SCREEN_W * SCREEN_H];
    }

    /// CGB hardware switched to DMG mode (the boot ROM wrote KEY0 bit 2).
    pub fn downgrade_to_dmg(&mut self) {
        self.cgb_colour = false;
    }

    pub fn is_cgb_hardware(&self) -> bool {
        self.cgb_hw
    }

    pub fn is_colour(&self) -> bool {
        self.cgb_colour
    }

    /// PyBoy's `cycles_to_mode0`: dots (not CPU cycles, even in double speed) until the next
    /// HBlank, for scheduling H-blank DMA.
    pub fn cycles_to_mode0(&mut self) -> i64 {
        let remainder = self.clock_target.wrapping_sub(self.clock) as i64;
        match self.mode {
            0 => 0,
            3 => remainder,
            m => {
                let line = if m == 1 { 0 } else { self.ly };
                let adj = self.mode3_adjustment(line) as i64;
                let normal = if self.cgb_hw { 170 } else { 172 } + adj;
                if m == 2 {
                    remainder + if self.first_frame { 172 + adj } else { normal }
                } else {
                    remainder + 456 * (153 - self.ly as i64) + 80 + normal
                }
            }
        }
    }

    /// LCDC bit 7.
    #[inline]
    pub fn is_enabled(&self) -> bool {
        self.enabled()
    }

    /// The CGB part of the LCD state (after [`save_state`](Self::save_state)).
    pub fn save_cgb_state(&self, w: &mut StateWriter) {
        w.bool(self.cgb_colour);
        w.u8(self.vbk);
        w.u8(self.speed_shift);
        w.bytes(&self.cgb.vram1);
        self.cgb.bg.save_state(w);
        self.cgb.obj.save_state(w);
        w.u8(self.cgb.opri);
        w.bytes(&self.cgb.grey);
    }

    pub fn load_cgb_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.cgb_hw = true;
        self.cgb_colour = r.bool()?;
        self.vbk = r.u8()? & 1;
        self.speed_shift = r.u8()?;
        if self.speed_shift > 1 {
            return Err(CoreError::State("bad LCD speed shift".into()));
        }
        self.cgb.vram1.copy_from_slice(r.bytes_exact(0x2000)?);
        self.cgb.bg = cgb_palette::PaletteMemory::load_state(r)?;
        self.cgb.obj = cgb_palette::PaletteMemory::load_state(r)?;
        self.cgb.opri = r.u8()?;
        self.cgb.grey = r.bytes_exact(SCREEN_W * SCREEN_H)?.to_vec();
        Ok(())
    }

    /// Grey picture (CGB hardware only; empty on the DMG, whose RGBA is grey already).
    pub fn screen_grey(&self) -> &[u8] {
        &self.cgb.grey
    }

    #[inline]
    pub fn take_irq(&mut self) -> u8 {
        std::mem::take(&mut self.irq)
    }

    #[inline]
    fn enabled(&self) -> bool {
        self.lcdc & 0x80 != 0
    }

    // ------------------------------------------------------------------ STAT line

    /// Recompute the STAT interrupt line; request the interrupt on a rising edge.
    #[inline(always)]
    fn refresh_stat_line(&mut self) {
        if self.stat & 0x78 == 0 {
            // No source enabled (the common case): the line is low.
            self.stat_line = false;
            return;
        }
        // Mode sources: bit 3 HBlank, bit 4 VBlank, bit 5 OAM; mode 3 has none.
        let mode_src = self.mode != 3 && self.stat & (1 << (self.mode + 3)) != 0;
        let lyc_src = self.stat & 0x44 == 0x44;
        let line = mode_src || lyc_src;
        if line && !self.stat_line {
            self.irq |= IRQ_STAT;
        }
        self.stat_line = line;
    }

    /// Enter `mode`; nothing at all happens if it is already the current mode.
    #[inline(always)]
    fn enter_mode(&mut self, mode: u8) {
        if self.mode != mode {
            self.mode = mode;
            self.stat = (self.stat & 0xFC) | mode;
            self.refresh_stat_line();
        }
    }

    /// Update the LY=LYC coincidence flag (only meaningful with the LCD on). Inlined: a line's
    /// transitions run it as part of their few instructions.
    #[inline(always)]
    fn compare_lyc(&mut self) {
        if self.ly == self.lyc {
            self.stat |= 0x04;
        } else {
            self.stat &= !0x04;
        }
        self.refresh_stat_line();
    }

    // ------------------------------------------------------------------ timing

    /// Catch up to absolute cycle `now`. Inlined: most calls (register reads, scheduler
    /// slices) find no transition due; the transition itself is out of line.
    #[inline]
    pub fn tick(&mut self, now: u64) {
        self.catch_up::<false>(now);
    }

    /// [`tick`](Self::tick) at a scheduler turn's end, where a transition is due in most
    /// calls: the DMG's transition inlined (saves its call, 1% of a busy game's host
    /// instructions).
    #[inline(always)]
    pub fn tick_turn_end(&mut self, now: u64) {
        self.catch_up::<true>(now);
    }

    /// The catch-up of [`tick`](Self::tick) and [`tick_turn_end`](Self::tick_turn_end);
    /// `INLINE_TRANSITION`: the DMG's transition inlined rather than called.
    #[inline(always)]
    fn catch_up<const INLINE_TRANSITION: bool>(&mut self, now: u64) {
        let elapsed = now.wrapping_sub(self.last_now);
        if elapsed == 0 {
            // Nothing happens, not even a refresh of the cached distances.
            return;
        }
        self.last_now = now;
        if self.cgb_hw {
            return self.tick_cgb(elapsed);
        }
        self.clock = self.clock.wrapping_add(elapsed);
        if self.clock >= self.clock_target {
            if INLINE_TRANSITION {
                self.transition::<false>();
            } else {
                self.transition_dmg();
            }
        }
        self.to_interrupt = self.clock_target.wrapping_sub(self.clock) as i64;
        self.to_frame = FRAME_CYCLES.wrapping_sub(self.clock) as i64;
    }

    /// The DMG's [`transition`](Self::transition), out of line (see [`tick`](Self::tick)).
    #[inline(never)]
    fn transition_dmg(&mut self) {
        self.transition::<false>();
    }

    /// PyBoy's condition for raising the VBlank STAT interrupt 4 dots early (CGB hardware).
    #[inline]
    fn vblank_stat_pretrigger(&self) -> bool {
        self.cgb_hw
            && self.enabled()
            && self.ly == 143
            && self.mode == 0
            && self.next_mode == 1
            && self.stat & 0x20 != 0
            && !self.stat_line
    }

    /// [`tick`](Self::tick) on CGB hardware: cycles halved in double speed, and the early
    /// VBlank STAT interrupt. Out of line, to keep the DMG's `tick` as small as it was.
    /// The pretrigger condition is checked for LY 143 alone (its first test here, the others
    /// only there), and the three transitions of a visible line take
    /// [`transition_cgb_visible`](Self::transition_cgb_visible): most ticks end a mode.
    #[inline(never)]
    fn tick_cgb(&mut self, elapsed: u64) {
        self.clock = self.clock.wrapping_add(elapsed >> self.speed_shift);
        if self.ly == 143
            && self.vblank_stat_pretrigger()
            && self.clock as i64 >= self.clock_target as i64 - 4
        {
            self.step = Step::VblankPretriggered;
            self.irq |= IRQ_STAT;
        }
        if self.clock >= self.clock_target && !self.transition_cgb_visible() {
            self.transition_cgb();
        }
        let mut to_interrupt = self.clock_target.wrapping_sub(self.clock) as i64;
        if self.ly == 143 && self.vblank_stat_pretrigger() {
            to_interrupt -= 4;
        }
        self.to_interrupt = to_interrupt << self.speed_shift;
        self.to_frame = (FRAME_CYCLES.wrapping_sub(self.clock) as i64) << self.speed_shift;
    }

    /// The CGB's general [`transition`](Self::transition), out of line.
    #[inline(never)]
    fn transition_cgb(&mut self) {
        self.transition::<true>();
    }

    /// [`transition::<true>`](Self::transition) for the transitions into modes 2, 3 and 0 of a
    /// line before VBlank, past the first frame, with the mode known at compile time: exactly
    /// what `transition` does in their case. Returns false, having done nothing, in every
    /// other case (the caller runs `transition`).
    #[inline(always)]
    fn transition_cgb_visible(&mut self) -> bool {
        if !self.enabled()
            || self.restart_pending
            || self.first_frame
            || self.ly == 153
            || self.step != Step::Mode
        {
            return false;
        }
        match self.next_mode {
            2 => {
                self.enter_mode(2);
                self.ly = self.ly.wrapping_add(1);
                self.clock_target = self.clock_target.wrapping_add(80);
                self.next_mode = 3;
                self.compare_lyc_cgb();
                self.window_armed |= self.wy == self.ly;
            }
            3 => {
                self.enter_mode(3);
                // Objects off: no penalty (`object_penalty`'s first test, without its call).
                self.mode3_extra = if self.lcdc & 0x02 == 0 {
                    0
                } else {
                    self.mode3_adjustment_for::<true>(self.ly)
                };
                let len = (170 + self.mode3_extra as i64) as u64;
                self.clock_target = self.clock_target.wrapping_add(len);
                self.next_mode = 0;
            }
            0 => {
                self.enter_mode(0);
                let len = (206 - self.mode3_extra as i64) as u64;
                self.clock_target = self.clock_target.wrapping_add(len);
                self.next_mode = if self.ly < 143 { 2 } else { 1 };
                self.hblank_line::<true>();
            }
            _ => return false,
        }
        true
    }

    /// [`compare_lyc`](Self::compare_lyc), inlined into the CGB's transitions.
    #[inline(always)]
    fn compare_lyc_cgb(&mut self) {
        if self.ly == self.lyc {
            self.stat |= 0x04;
        } else {
            self.stat &= !0x04;
        }
        self.refresh_stat_line();
    }

    /// Perform the one transition whose deadline has passed. `CGB`: on Game Boy Color hardware
    /// (a separate instance, so that the DMG's is exactly what it was without CGB support).
    #[inline(always)]
    fn transition<const CGB: bool>(&mut self) {
        if !self.enabled() {
            // LCD off: a "frame" still ends every 70224 cycles, showing a blank screen.
            self.frame_done = true;
            self.clock %= FRAME_CYCLES;
            self.clock_target = FRAME_CYCLES;
            self.blank::<CGB>();
            return;
        }
        if self.restart_pending {
            // First tick after switching on: line 0 starts in mode 0, without mode 2.
            self.restart_pending = false;
            self.frame_done = true;
            self.ly = 0;
            self.clock = 0;
            self.clock_target = 76;
            self.next_mode = 3;
            self.step = Step::Mode;
            self.enter_mode(0);
            self.window_armed = self.wy == 0;
            self.compare_lyc();
            return;
        }
        if self.ly == 153 {
            if self.first_frame && self.clock_target < FRAME_CYCLES {
                // The start-up frame is 8 dots short; pad its last line.
                self.clock_target = FRAME_CYCLES;
            } else {
                self.frame_done = true;
                self.ly = 0;
                self.clock %= FRAME_CYCLES;
                self.first_frame = false;
                self.clock_target = self.clock_target % FRAME_CYCLES + 80;
                self.next_mode = 3;
                self.step = Step::Mode;
                self.enter_mode(2);
                self.window_armed = self.wy == 0;
                self.compare_lyc();
            }
            return;
        }
        match self.step {
            Step::NextLine => self.ly_step_before_oam(),
            Step::Oam => self.oam_step(),
            Step::Mode | Step::VblankPretriggered => {
                let pretriggered = CGB && self.step == Step::VblankPretriggered;
                if pretriggered {
                    self.step = Step::Mode;
                }
                self.enter_mode(self.next_mode);
                match self.mode {
                    2 => {
                        // Only reachable from a restored state with next_mode 2: the
                        // oracle then also advances LY here.
                        self.ly = self.ly.wrapping_add(1);
                        self.clock_target = self.clock_target.wrapping_add(80);
                        self.next_mode = 3;
                        self.step = Step::Mode;
                        self.compare_lyc();
                        self.window_armed |= self.wy == self.ly;
                    }
                    3 => self.mode3_started::<CGB>(),
                    0 if CGB && !self.first_frame => {
                        let len = (206 - self.mode3_extra as i64) as u64;
                        self.clock_target = self.clock_target.wrapping_add(len);
                        self.next_mode = if self.ly < 143 { 2 } else { 1 };
                        self.step = Step::Mode;
                        self.hblank_line::<CGB>();
                    }
                    0 => self.hblank_started_dmg_timing::<CGB>(),
                    _ => self.vblank_line_step::<CGB>(pretriggered),
                }
            }
        }
    }

    /// A line's LY step (at HBlank's end): LY moves on, the OAM step 4 dots later.
    #[inline(always)]
    fn ly_step_before_oam(&mut self) {
        self.ly = self.ly.wrapping_add(1);
        if self.first_frame {
            // Coincidence drops now; it is compared again when mode 2 starts.
            self.stat &= !0x04;
            self.refresh_stat_line();
        } else {
            self.compare_lyc();
        }
        self.clock_target = self.clock_target.wrapping_add(4);
        self.step = Step::Oam;
    }

    /// Mode 1 entered or going on: one VBlank line (its start at LY 144 raises VBlank's
    /// interrupts).
    #[inline(always)]
    fn vblank_line_step<const CGB: bool>(&mut self, pretriggered: bool) {
        self.clock_target = self.clock_target.wrapping_add(456);
        self.next_mode = 1;
        self.step = Step::Mode;
        self.ly = self.ly.wrapping_add(1);
        self.compare_lyc();
        if self.ly == 144 {
            // The OAM (mode 2) STAT source also fires at VBlank start.
            if self.stat & 0x20 != 0 && !self.stat_line && !pretriggered {
                self.irq |= IRQ_STAT;
            }
            self.irq |= IRQ_VBLANK;
            self.window_armed = false;
            if self.first_frame {
                self.blank::<CGB>();
            }
        }
    }

    /// A DMG line's OAM step (4 dots after its LY step): mode 2 for 80 dots.
    #[inline(always)]
    fn oam_step(&mut self) {
        self.enter_mode(2);
        if self.first_frame {
            self.compare_lyc();
        }
        self.clock_target = self.clock_target.wrapping_add(80);
        self.next_mode = 3;
        self.step = Step::Mode;
        self.window_armed |= self.wy == self.ly;
    }

    /// Mode 3 has just been entered: its length, from the line's objects and fine scroll.
    #[inline(always)]
    fn mode3_started<const CGB: bool>(&mut self) {
        self.mode3_extra = self.mode3_adjustment_for::<CGB>(self.ly);
        let base = if CGB && !self.first_frame { 170 } else { 172 };
        let len = (base + self.mode3_extra as i64) as u64;
        self.clock_target = self.clock_target.wrapping_add(len);
        self.next_mode = 0;
        self.step = Step::Mode;
    }

    /// HBlank (mode 0) has just been entered on DMG timing (also a CGB's first frame): the
    /// rest of the line, then the next line's LY step (or VBlank after line 143); the line's
    /// record (and drawing).
    #[inline(always)]
    fn hblank_started_dmg_timing<const CGB: bool>(&mut self) {
        let rest = if self.ly < 143 || self.first_frame {
            200
        } else {
            204
        };
        let len = (rest - self.mode3_extra as i64) as u64;
        self.clock_target = self.clock_target.wrapping_add(len);
        if self.ly < 143 {
            self.next_mode = 2;
            self.step = Step::NextLine;
        } else {
            self.next_mode = 1;
            self.step = Step::Mode;
        }
        self.hblank_line::<CGB>();
    }

    /// Whole lines of a halted stretch at once, with exactly the effects of their
    /// transitions one by one (DMG, LCD on and past its first frame). Called at `now` (the last
    /// tick) with the next transition moving LY on (`Step::NextLine`, mode 0); runs lines
    /// LY+1.. while each one's four transitions and the next line's start all come before
    /// `limit`, none of them can raise an interrupt, and the line is not the last before
    /// VBlank: no mode source in STAT, and the LY=LYC source off or LYC not among the lines.
    /// Then the STAT line stays low, and a line's object penalty only splits it between
    /// modes 3 and 0, so it is computed for the last line alone. Leaves the LCD as the
    /// transitions would, at the start of the last line's mode 0. Returns the new time (`now`
    /// when no line qualifies). On CGB hardware see
    /// `skip_quiet_lines_cgb`.
    #[inline]
    pub fn skip_quiet_lines(&mut self, now: u64, limit: u64) -> u64 {
        if self.cgb_hw {
            return self.skip_quiet_lines_cgb(now, limit);
        }
        if self.step != Step::NextLine {
            return now;
        }
        self.skip_quiet_lines_dmg(now, limit)
    }

    /// [`skip_quiet_lines`](Self::skip_quiet_lines) on CGB hardware in normal speed, whose
    /// lines have three transitions (into modes 2, 3 and 0, see
    /// [`transition_cgb_visible`](Self::transition_cgb_visible)), each at least 80 dots after
    /// the one before. Called at the start of a line's mode 0 (next: mode 2 of the next
    /// line); the same conditions, and the same end: the start of the last line's mode 0.
    /// Only for turns whose ends the APU need not see (the caller's business: not with the
    /// CGB's deferred catch-ups). Double speed is left to the turns: no halted stretch in
    /// double speed with quiet lines among the checked runs (A/B digests, tests).
    #[inline(always)]
    fn skip_quiet_lines_cgb(&mut self, now: u64, limit: u64) -> u64 {
        if self.mode != 0 || self.next_mode != 2 || self.step != Step::Mode {
            return now;
        }
        self.skip_quiet_lines_cgb_lines(now, limit)
    }

    #[inline(never)]
    fn skip_quiet_lines_cgb_lines(&mut self, now: u64, limit: u64) -> u64 {
        if !self.enabled()
            || self.restart_pending
            || self.first_frame
            || self.stat & 0x38 != 0
            || self.speed_shift != 0
        {
            return now;
        }
        debug_assert_eq!(now, self.last_now, "called at the last tick");
        // Not overdue, and a first turn not lengthened to the scheduler's minimum of 4 cycles.
        let to_next = self.clock_target.wrapping_sub(self.clock);
        if !(4..FRAME_CYCLES).contains(&to_next) {
            return now;
        }
        let lines = self.quiet_line_count(now, to_next, limit);
        if lines == 0 {
            return now;
        }
        self.record_quiet_lines::<true>(lines);
        // The last line's LY=LYC compare; the STAT line ends low (no source can hold it high).
        self.compare_lyc_cgb();
        self.mode3_extra = if self.lcdc & 0x02 == 0 {
            0
        } else {
            self.mode3_adjustment_for::<true>(self.ly)
        };
        // The last line's mode 0 at 80 + 170 + extra dots.
        self.end_quiet_lines(now, lines, 250)
    }

    #[inline(never)]
    fn skip_quiet_lines_dmg(&mut self, now: u64, limit: u64) -> u64 {
        if !self.enabled()
            || self.restart_pending
            || self.first_frame
            || self.mode != 0
            || self.stat & 0x38 != 0
        {
            return now;
        }
        debug_assert_eq!(now, self.last_now, "called at the last tick");
        // Not overdue (then it would wrap). A distance under 4 makes the scheduler's turn
        // overshoot the transition, but the next turns end at the transitions again, which
        // are counted from the targets, not from the ticks: the lines end where computed below.
        let to_next = self.clock_target.wrapping_sub(self.clock);
        if to_next >= FRAME_CYCLES {
            return now;
        }
        let lines = self.quiet_line_count(now, to_next, limit);
        if lines == 0 {
            return now;
        }
        self.record_quiet_lines::<false>(lines);
        // The last line's LY=LYC compare; the STAT line ends low (no source can hold it high).
        self.compare_lyc();
        self.mode3_extra = self.mode3_adjustment_for::<false>(self.ly);
        // The last line's mode 0 at 4 + 80 + 172 + extra dots.
        self.next_mode = 2;
        self.end_quiet_lines(now, lines, 256)
    }

    /// What every deferral needs of the LCD's state: DMG timing past the first frame, the LCD
    /// on and not switching on, no mode 0 or mode 2 STAT source (their transitions could raise
    /// an interrupt).
    #[inline(always)]
    fn timing_may_defer(&self) -> bool {
        !(self.cgb_hw
            || !self.enabled()
            || self.restart_pending
            || self.first_frame
            || self.stat & 0x28 != 0)
    }

    /// The end of a line's deferrable transitions for a running CPU, or `None`: called at a
    /// scheduler turn's end (the LCD ticked to `now`) just after the line's LY step (its OAM
    /// step still to come) or its OAM step. The transitions left in the line (OAM, mode 3,
    /// HBlank) can then run late, at the next observation (see
    /// [`replay_deferred`](Self::replay_deferred)), instead of each ending a turn: none can
    /// raise an interrupt (no mode 2 or mode 0 STAT source; LY=LYC is compared at the LY
    /// step, which stays a turn's end), each takes effect as it would at its own turn's end
    /// (a transition's work does not depend on when it is ticked, only on registers, VRAM
    /// and OAM, whose accesses replay it first, and the next one's time is counted from its
    /// own dot), and mode 3 and HBlank are further apart than an instruction, so the turn
    /// at whose end each one runs is the first to end at or after it. The LY step and the
    /// OAM step are 4 dots apart, and the instruction whose end ran the LY step often passed
    /// the OAM step too (it is then overdue, `to_interrupt <= 0`): PyBoy runs it at the end
    /// of the next turn, one instruction later (the slice of at least 4 cycles that
    /// `turn_budget` gives), and so does the replay (the first instruction boundary after
    /// `now`). Returns the cycle of the line's last transition: the next line's LY step, or
    /// VBlank after line 143. DMG timing only, past the first frame.
    #[inline]
    pub fn deferrable_line_end(&self, now: u64) -> Option<u64> {
        if !self.timing_may_defer() || self.ly > 143 {
            return None;
        }
        debug_assert_eq!(now, self.last_now, "called at the last tick");
        // The next transition at most one OAM step ahead (no more in any state the transitions
        // make; a restored state's odd timing is left to the turns), or an OAM step overdue
        // by up to 20 cycles (an instruction of at most 24 that began before the LY step).
        let to_next = self.to_interrupt;
        let mode3_at = match self.step {
            Step::Oam if (-20..=80).contains(&to_next) => (to_next + 80) as u64,
            Step::Mode if self.mode == 2 && self.next_mode == 3 && (1..=80).contains(&to_next) => {
                to_next as u64
            }
            _ => return None,
        };
        // Mode 3 lasts 172 dots plus its extra, HBlank the rest of 372 (376 on line 143).
        let rest = if self.ly < 143 { 200 } else { 204 };
        now.checked_add(mode3_at + 172 + rest)
    }

    /// Where [`deferrable_line_end`](Self::deferrable_line_end) finds nothing, for a caller
    /// that can follow LY steps ([`deferrable_span_end`](Self::deferrable_span_end)): in mode
    /// 3, the line's end (HBlank still to come); in HBlank, the next LY step (returned as the
    /// line's end: the span must then go on past it); on VBlank's lines 144-152, the next
    /// one's LY step. Called at a turn's end as that one is.
    #[inline(never)]
    pub fn deferrable_line_end_later(&self, now: u64) -> Option<u64> {
        if !self.timing_may_defer() || self.step == Step::Oam {
            return None;
        }
        debug_assert_eq!(now, self.last_now, "called at the last tick");
        let to_next = self.to_interrupt;
        let line_end = match (self.mode, self.step, self.next_mode) {
            // Mode 3 (at most 172 + 117 dots) and HBlank (at most 204) left: the line's end
            // from mode 3's extra, as `hblank_started_dmg_timing` counts it.
            (3, Step::Mode, 0) if self.ly <= 143 && (1..=300).contains(&to_next) => {
                let rest = if self.ly < 143 { 200 } else { 204 };
                to_next as u64 + (rest - self.mode3_extra as i64) as u64
            }
            (0, Step::NextLine, _) if self.ly < 143 && (1..=204).contains(&to_next) => {
                to_next as u64
            }
            // A VBlank line's LY step (the one after line 153 ends the frame).
            (1, Step::Mode, 1) if (144..153).contains(&self.ly) && (1..=456).contains(&to_next) => {
                to_next as u64
            }
            _ => return None,
        };
        now.checked_add(line_end)
    }

    /// [`deferrable_line_end`](Self::deferrable_line_end)'s end `line_end`, moved on by whole
    /// lines (456 dots each) while it stays before `limit`: the LY steps in between can be
    /// deferred too when they raise no interrupt (no LY=LYC source, or LY never meets LYC on
    /// them; no VBlank: the span ends at line 143's end at the latest, and in VBlank at line
    /// 153's). A deferred LY step runs at the end of the turn in which its dot falls, the
    /// first instruction boundary at or after it, and a visible line's OAM step at the next
    /// boundary (see [`replay_deferred`](Self::replay_deferred)): only the boundaries around
    /// the last LY step can matter, and the caller's replays know the last two. (Not for a
    /// caller whose turn ends' times matter beyond that: with the APU recording them, the OAM
    /// step's, the boundary after the LY step's, could not be placed.)
    #[inline]
    pub fn deferrable_span_end(&self, line_end: u64, limit: u64) -> u64 {
        // The LY step at `line_end` makes LY `self.ly + 1`, the next ones LY + 2, ...: those up
        // to line 143 may be passed (the next starts VBlank), and in VBlank those up to line
        // 153 (the next ends the frame), but not one that meets LYC with its interrupt source
        // on.
        let after_last = if self.ly > 143 { 154 } else { 144 };
        let lines = self.lines_short_of_lyc(after_last);
        let room = limit.saturating_sub(line_end).saturating_sub(1) / 456;
        line_end + 456 * lines.min(room)
    }

    /// The line's OAM step is due but has not run: the instruction whose end ran the LY step
    /// passed it too (see [`deferrable_line_end`](Self::deferrable_line_end)).
    #[inline]
    pub fn oam_step_overdue(&self) -> bool {
        self.step == Step::Oam && self.to_interrupt <= 0
    }

    /// A quick part of [`deferrable_line_end`](Self::deferrable_line_end)'s test: just after
    /// a line's OAM step, or after its LY step with the OAM step still to run.
    /// `later_steps`: the caller can also defer from elsewhere
    /// ([`deferrable_line_end_later`](Self::deferrable_line_end_later)).
    #[inline(always)]
    pub fn line_may_defer(&self, later_steps: bool) -> bool {
        self.mode == 2 || self.step == Step::Oam || later_steps
    }

    /// Run the deferred transitions (see [`deferrable_line_end`](Self::deferrable_line_end))
    /// due at or before `upto`, each at its own cycle: the LCD is then as the turns' ends
    /// would have left it. An overdue OAM step is due just after the last tick (`last_now`,
    /// the LY step's turn end), so that it runs at the next instruction boundary, as the
    /// turn that ends there runs it. Returns the cycle at which the last transition run was
    /// due (0 if none). Only those transitions are pending, and what `deferrable_line_end`
    /// checked still holds (the accesses that could change it replay first), so each runs
    /// as `transition` would (same steps) without its other cases' tests, and the tick's
    /// bookkeeping (clock, distances) is done once, for the last.
    ///
    /// `upto` is an instruction boundary (or lies before the last deferred LY step's dot, see
    /// [`deferrable_span_end`](Self::deferrable_span_end)) and `prev` the start of the
    /// instruction that ended there. A deferred LY step whose dot falls within that
    /// instruction (after `prev`) ran at `upto`, the end of its turn; the OAM step 4 dots
    /// later then runs at the next boundary, as after a real LY step's turn end. Earlier LY
    /// steps ran at or before `prev`, so their OAM steps by `upto`, each at its own dot here.
    #[inline(never)]
    pub fn replay_deferred(&mut self, upto: u64, prev: u64) -> u64 {
        debug_assert!(!self.cgb_hw && self.enabled() && !self.restart_pending);
        debug_assert!(!self.first_frame && self.ly <= 153);
        debug_assert!(self.to_interrupt > 0 || self.step == Step::Oam);
        // The transition's own dot, as a cycle: a tick there finds the clock at its target
        // (a later one, by as much past it: the same LCD).
        let mut at_dot = self.last_now.saturating_add_signed(self.to_interrupt);
        let mut due = at_dot.max(self.last_now.saturating_add(1));
        if due > upto {
            return 0;
        }
        let mut ran;
        loop {
            if self.step == Step::NextLine {
                // Whole lines at once from HBlank where they qualify (as in a halted
                // stretch): their LY steps all come at least a line before `upto`, so before
                // `prev` too, and the next line's LY step, by `upto`, runs below.
                let now = self.last_now;
                let after = self.skip_quiet_lines_dmg(now, upto);
                if after != now {
                    self.replayed_quiet_runs += 1;
                    ran = after;
                    at_dot = after.saturating_add_signed(self.to_interrupt);
                    due = at_dot;
                    debug_assert!(due <= upto);
                    if due > upto {
                        return ran;
                    }
                }
            }
            let dot_target = self.clock_target;
            self.clock = dot_target;
            self.last_now = at_dot;
            match self.step {
                Step::Oam => self.oam_step(),
                Step::NextLine => {
                    debug_assert!(self.ly < 143 && self.stat & 0x28 == 0);
                    self.ly_step_before_oam();
                    if prev < at_dot {
                        // Ticked at the end of the instruction under way (see above): the
                        // OAM step, 4 dots on, is due after `upto`.
                        self.clock = dot_target.wrapping_add(upto - at_dot);
                        self.last_now = upto;
                        self.to_interrupt = self.clock_target.wrapping_sub(self.clock) as i64;
                        self.to_frame = FRAME_CYCLES.wrapping_sub(self.clock) as i64;
                        return due;
                    }
                }
                _ => {
                    debug_assert!(self.step == Step::Mode);
                    match self.next_mode {
                        3 => {
                            self.enter_mode(3);
                            self.mode3_started::<false>();
                        }
                        0 => {
                            self.enter_mode(0);
                            self.hblank_started_dmg_timing::<false>();
                        }
                        _ => {
                            // A VBlank line's LY step (lines 145-153).
                            debug_assert!(self.mode == 1 && (144..153).contains(&self.ly));
                            self.vblank_line_step::<false>(false);
                        }
                    }
                }
            }
            debug_assert_eq!(self.irq, 0, "a deferred transition raised an interrupt");
            ran = due;
            at_dot = at_dot.saturating_add(self.clock_target.wrapping_sub(dot_target));
            due = at_dot;
            if due > upto {
                self.to_interrupt = self.clock_target.wrapping_sub(self.clock) as i64;
                self.to_frame = FRAME_CYCLES.wrapping_sub(self.clock) as i64;
                return ran;
            }
        }
    }

    /// The absolute cycle of the next transition, as of the last tick.
    #[inline]
    pub fn next_transition_at(&self) -> u64 {
        self.last_now.wrapping_add(self.to_interrupt as u64)
    }

    /// For a busy-loop skip (`gameboy::busy_loop`): an absolute cycle up to which (not
    /// included) the transitions raise no interrupt enabled in `ie` and the frame does not
    /// end, or `None` when the LCD is in a state left to the turns (off, switching on, the
    /// first frame, CGB hardware, a transition overdue). With the STAT interrupt enabled and
    /// any STAT source on, only up to the next transition; otherwise up to VBlank's start
    /// (when its interrupt is enabled) or the frame's end.
    pub fn busy_skip_bound(&self, ie: u8) -> Option<u64> {
        if self.cgb_hw
            || !self.enabled()
            || self.restart_pending
            || self.first_frame
            || self.to_interrupt <= 0
            || self.to_frame <= 0
        {
            return None;
        }
        if ie & IRQ_STAT != 0 && self.stat & 0x78 != 0 {
            return Some(self.next_transition_at());
        }
        if ie & IRQ_VBLANK != 0 && self.ly <= 143 {
            return self.vblank_start_at();
        }
        Some(self.last_now + self.to_frame as u64)
    }

    /// The absolute cycle of the next VBlank start (line 143's HBlank ending), while on a
    /// visible line in a state the transitions make (DMG timing): each line's OAM step comes
    /// 456 dots after the one before, and line 143's HBlank ends 456 dots after its own.
    fn vblank_start_at(&self) -> Option<u64> {
        let next = self.next_transition_at();
        let oam_step_at = match (self.step, self.mode, self.next_mode) {
            (Step::Oam, _, _) => next,
            (Step::Mode, 2, 3) => next.checked_sub(80)?,
            (Step::Mode, 3, 0) => next.checked_sub((252 + self.mode3_extra as i64) as u64)?,
            (Step::NextLine, 0, 2) if self.ly < 143 => next.checked_sub(452)?,
            (Step::Mode, 0, 1) if self.ly == 143 => return Some(next),
            _ => return None,
        };
        Some(oam_step_at + (143 - self.ly as u64) * 456 + 456)
    }

    /// Tick the LCD at each transition due at or before `upto`, at the transition's own dot:
    /// the LCD is then as the turns ending at the first instruction boundaries after those
    /// dots would have left it (see [`replay_deferred`](Self::replay_deferred)). Returns the
    /// interrupts raised (for IF).
    pub fn tick_transitions_upto(&mut self, upto: u64) -> u8 {
        let mut irq = 0;
        loop {
            // Whole quiet lines at once where they qualify (from a line's HBlank).
            let now = self.last_now;
            if self.skip_quiet_lines(now, upto) != now {
                continue;
            }
            let at = self.next_transition_at();
            if self.to_interrupt <= 0 || at > upto {
                return irq;
            }
            self.catch_up::<false>(at);
            irq |= self.take_irq();
        }
    }

    /// The lines from LY+1 on, before line `after_last` and before the first that meets LYC
    /// while its STAT source is on (whose LY step could raise an interrupt).
    #[inline(always)]
    fn lines_short_of_lyc(&self, after_last: u64) -> u64 {
        let first = self.ly as u64 + 1;
        let lyc = self.lyc as u64;
        if self.stat & 0x40 != 0 && (first..after_last).contains(&lyc) {
            lyc - first
        } else {
            after_last - first.min(after_last)
        }
    }

    /// How many whole lines after this one the quiet-line skips may run at once, ending
    /// before `limit`: visible lines (up to 142) short of LYC when its STAT source is on. The
    /// next transition is `to_next` cycles away; each line lasts 456.
    #[inline(always)]
    fn quiet_line_count(&self, now: u64, to_next: u64, limit: u64) -> u64 {
        // Lines LY+1..=142, each ending by `limit` (worked out at once: a replay's span runs
        // to 140 lines).
        let room = limit.saturating_sub(now.saturating_add(to_next)) / 456;
        let lines = self.lines_short_of_lyc(143).min(room);
        #[cfg(debug_assertions)]
        assert_eq!(lines, self.quiet_line_count_by_line(now, to_next, limit));
        lines
    }

    /// [`quiet_line_count`](Self::quiet_line_count) a line at a time (its definition).
    #[cfg(debug_assertions)]
    fn quiet_line_count_by_line(&self, now: u64, to_next: u64, limit: u64) -> u64 {
        let lyc_source = self.stat & 0x40 != 0;
        let mut lines = 0u64;
        loop {
            let line = self.ly as u64 + lines + 1;
            if line > 142
                || (lyc_source && line == self.lyc as u64)
                || now + to_next + 456 * (lines + 1) > limit
            {
                return lines;
            }
            lines += 1;
        }
    }

    /// The skipped lines' records, each as its transitions would have made it.
    #[inline(always)]
    fn record_quiet_lines<const CGB: bool>(&mut self, lines: u64) {
        let first = self.ly as usize + 1;
        if !self.render && lines < SCREEN_H as u64 && first + lines as usize <= SCREEN_H {
            // Nothing drawn: every line's record is the same, and the window is armed if WY
            // is one of the lines (as the loop below would leave them, in one pass).
            let last = first + lines as usize - 1;
            let record = [self.scx, self.scy, self.wx, self.wy, self.lcdc & 0x10];
            self.line_params[first..=last].fill(record);
            self.window_armed |= (first..=last).contains(&(self.wy as usize));
            self.ly = last as u8;
            return;
        }
        for _ in 0..lines {
            self.ly += 1;
            self.window_armed |= self.wy == self.ly;
            self.hblank_line::<CGB>();
        }
    }

    /// The clock, target and distances at the start of the last skipped line's mode 0,
    /// `mode0_dots` + its mode 3 extra after the line's start; returns the new tick time.
    #[inline(always)]
    fn end_quiet_lines(&mut self, now: u64, lines: u64, mode0_dots: i64) -> u64 {
        let line_start = self.clock_target.wrapping_add(456 * (lines - 1));
        let mode0 = line_start.wrapping_add((mode0_dots + self.mode3_extra as i64) as u64);
        let advanced = mode0.wrapping_sub(self.clock);
        self.clock = mode0;
        self.clock_target = line_start.wrapping_add(456);
        self.last_now = now + advanced;
        self.to_interrupt = self.clock_target.wrapping_sub(self.clock) as i64;
        self.to_frame = FRAME_CYCLES.wrapping_sub(self.clock) as i64;
        self.last_now
    }

    /// Extra mode 3 dots for line `ly` (objects on the line, and SCX fine scroll).
    fn mode3_adjustment(&mut self, ly: u8) -> i16 {
        if self.cgb_hw {
            self.mode3_adjustment_for::<true>(ly)
        } else {
            self.mode3_adjustment_for::<false>(ly)
        }
    }

    #[inline(always)]
    fn mode3_adjustment_for<const CGB: bool>(&mut self, ly: u8) -> i16 {
        // Most lines have no objects: that case without the call.
        let height = if self.lcdc & 0x04 != 0 { 16 } else { 8 };
        let mut extra = if self.lcdc & 0x02 == 0 || self.line_objects.known_empty(ly, height) {
            0
        } else {
            self.object_penalty(ly)
        };
        if CGB {
            // CGB hardware: object dots in whole M-cycles, no fine-scroll penalty.
            if extra > 0 {
                extra = (extra + 3) / 4 * 4;
            }
            return extra as i16;
        }
        if !self.first_frame {
            extra += ((self.scx as i32 & 7) + 3) / 4 * 4;
        }
        extra as i16
    }

    /// Mode 3 dots added by the objects of line `ly` (PyBoy's approximation).
    fn object_penalty(&mut self, ly: u8) -> i32 {
        if self.lcdc & 0x02 == 0 {
            return 0;
        }
        let (offsets, found) = self.objects_on_line(ly);
        if found == 0 {
            return 0;
        }
        let mut groups = 0;
        let mut dots = 0;
        // One bit per possible X (0..=255) already seen on this line.
        let mut seen = [0u64; 4];
        for &n in &offsets[..found] {
            let x = self.oam[n as usize + 1] as i32;
            if x < 168 {
                dots += 6;
                let (word, bit) = ((x >> 6) as usize, 1u64 << (x & 63));
                if seen[word] & bit == 0 {
                    seen[word] |= bit;
                    groups += 1;
                    let align = 5 - ((x + self.scx as i32 - 8) & 7);
                    if align > 0 {
                        dots += align;
                    }
                }
            }
        }
        if groups == 0 {
            // Only off-screen objects: mode 3 gets one M-cycle shorter.
            return -4;
        }
        (dots - 7).max(0)
    }

    /// Mode 0 just began on line LY: record the line's parameters and draw it. Inlined (the
    /// record is a few stores); the drawing is out of line.
    #[inline(always)]
    fn hblank_line<const CGB: bool>(&mut self) {
        let ly = self.ly as usize;
        let record = [self.scx, self.scy, self.wx, self.wy, self.lcdc & 0x10];
        if ly < SCREEN_H {
            self.line_params[ly] = record;
        } else {
            self.record_line_past_table(ly, record);
        }
        if self.render {
            self.draw_hblank_line::<CGB>();
        }
    }

    #[inline(never)]
    fn draw_hblank_line<const CGB: bool>(&mut self) {
        if !CGB {
            self.draw_line(self.ly);
        } else if self.cgb_colour {
            self.draw_line_cgb(self.ly);
        } else {
            self.draw_line_compat(self.ly);
        }
    }

    /// Mode 0 on a line past the screen (LY 144-255): only from a loaded state whose LY
    /// disagrees with the LCD's sequencing, as an old PyBoy state (versions 5-7) gives
    /// over a running machine: STAT and LY are the state's, the clocks and the next mode
    /// the machine's (see `gameboy/pyboy_state_versions.rs`). PyBoy records the line in
    /// its 144-line table unchecked, so the record lands on what follows the table in its
    /// LCD: the last-tick cycle (our `last_now`), the two distances, the colour flags and
    /// the speed shift, then VRAM bank 1. The next tick then counts its elapsed time from
    /// the altered last-tick cycle, which typically makes a halted CPU's turns jump by
    /// 2^31 cycles until the frame ends. Followed here: the three 64-bit fields (lines
    /// 144-147 and the first 4 bytes of 148) and VRAM bank 1 (lines 150-255). Not
    /// followed: the colour flags and speed shift (bytes 24-32, lines 148-150), which put
    /// PyBoy's DMG LCD on colour paths whose registers it does not have.
    #[cold]
    #[inline(never)]
    fn record_line_past_table(&mut self, ly: usize, record: [u8; 5]) {
        const COLOUR_FLAGS_AT: usize = 24;
        const VRAM1_AT: usize = 33;
        let mut fields = [0u8; COLOUR_FLAGS_AT];
        fields[..8].copy_from_slice(&self.last_now.to_le_bytes());
        fields[8..16].copy_from_slice(&self.to_interrupt.to_le_bytes());
        fields[16..].copy_from_slice(&self.to_frame.to_le_bytes());
        for (i, b) in record.into_iter().enumerate() {
            let at = (ly - SCREEN_H) * 5 + i;
            if at < COLOUR_FLAGS_AT {
                fields[at] = b;
            } else if at >= VRAM1_AT {
                self.cgb.vram1[at - VRAM1_AT] = b;
            }
        }
        let word = |i: usize| <[u8; 8]>::try_from(&fields[i..i + 8]).unwrap();
        self.last_now = u64::from_le_bytes(word(0));
        self.to_interrupt = i64::from_le_bytes(word(8));
        self.to_frame = i64::from_le_bytes(word(16));
    }

    /// Fill the picture with BGP colour 0 (LCD off, start-up frame).
    fn blank<const CGB: bool>(&mut self) {
        if CGB {
            self.blank_screen_cgb();
        } else {
            self.blank_screen();
        }
    }

    /// PyBoy's `lcd._cycles_to_interrupt`: dots to the next transition as of the last
    /// tick (stale between ticks; negative when a transition is overdue).
    #[inline]
    pub fn cycles_to_interrupt(&self) -> i64 {
        self.to_interrupt
    }

    /// PyBoy's `lcd._cycles_to_frame`: cycles to the end of the frame as of the last tick
    /// (set to 0 when the LCD is switched off).
    #[inline]
    pub fn cycles_to_frame(&self) -> i64 {
        self.to_frame
    }

    #[inline]
    pub fn frame_done(&self) -> bool {
        self.frame_done
    }

    #[inline]
    pub fn set_frame_done(&mut self, v: bool) {
        self.frame_done = v;
    }

    /// PyBoy: `lcd.disable_renderer = not render`. Skipped lines leave the screen as it was.
    #[inline]
    pub fn set_render(&mut self, render: bool) {
        self.render = render;
    }

    // ------------------------------------------------------------------ registers

    fn write_lcdc(&mut self, value: u8) {
        let was_on = self.enabled();
        if self.cgb_colour && self.lcdc & 0x20 != 0 && value & 0x20 == 0 {
            // CGB: clearing the window enable forgets that WY matched this frame.
            self.window_armed = false;
        }
        self.lcdc = value;
        let on = self.enabled();
        if was_on && !on {
            // Switching off: LY to 0 (no LYC check), clock to 0, mode 0. The STAT line
            // follows the mode change but no interrupt is delivered.
            self.clock = 0;
            self.clock_target = 0;
            self.to_frame = 0;
            let saved = self.irq;
            self.enter_mode(0);
            self.irq = saved;
            self.ly = 0;
        } else if !was_on && on {
            // Switching on: the state machine restarts at the next tick.
            self.clock_target = 0;
            self.first_frame = true;
            self.restart_pending = true;
            if self.lyc_written_while_off {
                if !self.cgb_colour {
                    self.stat_mode_override = true;
                }
                self.lyc_written_while_off = false;
            }
            if self.stat & 0x40 != 0 {
                self.compare_lyc();
            }
        }
    }

    /// Read FF40-FF4B. `now` is PyBoy's `cpu.cycles`, `offset` its `memory_access_offset`.
    /// FF46 (DMA) belongs to the system: this catches the LCD up and returns 0xFF.
    pub fn read_register(&mut self, addr: u16, now: u64, offset: u64) -> u8 {
        self.tick(now.wrapping_add(offset));
        if addr == 0xFF41 && self.stat_mode_override {
            self.stat_mode_override = false;
            return self.stat & 0xFC;
        }
        self.peek_register(addr)
    }

    /// Until when (PyBoy's `cpu.cycles` plus the read's offset, exclusive) a read of `addr`
    /// keeps returning `value`: until the next transition, reads only move the clock (a
    /// transition runs in the first tick at or past its dot, one per tick, so the reads that
    /// would cross one must still run). In CGB double speed a tick moves the clock by half
    /// its cycles, rounded down: the caller's reads must be an even number of cycles apart
    /// for their ticks to add up. `None` when the next read could return something else or
    /// change state: a transition overdue or a restart pending, STAT's one-read override,
    /// a register not holding `value`, or line 143 on CGB hardware (the early VBlank STAT
    /// interrupt fires at a tick there).
    pub fn read_holds_until(&self, addr: u16, value: u8) -> Option<u64> {
        if self.stat_mode_override
            || self.peek_register(addr) != value
            || (self.cgb_hw && self.ly == 143)
        {
            return None;
        }
        let to_next = self.clock_target.wrapping_sub(self.clock) as i64;
        (to_next > 0).then(|| {
            self.last_now
                .wrapping_add((to_next as u64) << self.speed_shift)
        })
    }

    /// Register value without side effects (STAT as the next read would see it).
    pub fn peek_register(&self, addr: u16) -> u8 {
        match addr {
            0xFF40 => self.lcdc,
            0xFF41 => {
                if self.stat_mode_override {
                    self.stat & 0xFC
                } else {
                    self.stat
                }
            }
            0xFF42 => self.scy,
            0xFF43 => self.scx,
            0xFF44 => self.ly,
            0xFF45 => self.lyc,
            0xFF47 => self.bgp,
            0xFF48 => self.obp0,
            0xFF49 => self.obp1,
            0xFF4A => self.wy,
            0xFF4B => self.wx,
            _ => 0xFF,
        }
    }

    /// Whether writing `value` to `addr` (FF40-FF4B) changes only what is drawn and the length
    /// of the mode 3s still to start (SCX, the objects' enable and size), and no transition's
    /// time, interrupt or STAT source: scroll, palettes, the window's position, and LCDC
    /// with the LCD's power bit kept.
    #[inline]
    pub fn write_shapes_only_pictures(&self, addr: u16, value: u8) -> bool {
        Self::is_drawing_register(addr) || (addr == 0xFF40 && (value ^ self.lcdc) & 0x80 == 0)
    }

    /// SCY, SCX, BGP, OBP0, OBP1, WY and WX: registers that shape the pictures (SCX also the
    /// length of the mode 3s still to start) and nothing else.
    #[inline]
    pub fn is_drawing_register(addr: u16) -> bool {
        matches!(addr, 0xFF42 | 0xFF43 | 0xFF47..=0xFF4B)
    }

    /// Write FF40-FF4B (`now` = PyBoy's `cpu.cycles`; register writes see no offset).
    /// FF46 only catches the LCD up: the DMA transfer itself is the system's.
    pub fn write_register(&mut self, addr: u16, value: u8, now: u64) {
        self.tick(now);
        match addr {
            0xFF40 => self.write_lcdc(value),
            0xFF41 => {
                // Bits 3-6 are writable; bit 7 and the read-only bits 0-2 are kept.
                self.stat = (self.stat & 0x87) | (value & 0x78);
                self.refresh_stat_line();
            }
            0xFF42 => self.scy = value,
            0xFF43 => self.scx = value,
            0xFF45 => {
                self.lyc = value;
                if self.enabled() {
                    self.compare_lyc();
                } else {
                    self.lyc_written_while_off = true;
                }
            }
            0xFF47 => self.bgp = value,
            0xFF48 => self.obp0 = value,
            0xFF49 => self.obp1 = value,
            0xFF4A => self.wy = value,
            0xFF4B => self.wx = value,
            _ => {}
        }
    }

    // ------------------------------------------------------------------ VRAM / OAM

    /// Dots left until the current deadline is at most 4 (and not overdue).
    #[inline]
    fn within_4_of_target(&self) -> bool {
        self.clock <= self.clock_target && self.clock_target - self.clock <= 4
    }

    /// CPU read of 8000-9FFF. Accesses with a zero offset are not timed (no lock).
    pub fn read_vram(&mut self, addr: u16, now: u64, offset: u64) -> u8 {
        if offset != 0 {
            self.tick(now.wrapping_add(offset));
            if self.enabled() && (self.mode == 3 || (self.mode == 2 && self.within_4_of_target())) {
                return 0xFF;
            }
        }
        if self.vbk != 0 {
            return self.cgb.vram1[(addr & 0x1FFF) as usize];
        }
        self.vram[(addr & 0x1FFF) as usize]
    }

    /// VRAM as the CPU sees it now (VBK), without side effects.
    pub fn peek_vram(&self, addr: u16) -> u8 {
        if self.vbk != 0 {
            self.cgb.vram1[(addr & 0x1FFF) as usize]
        } else {
            self.vram[(addr & 0x1FFF) as usize]
        }
    }

    /// [`write_vram`](Self::write_vram) where its catch-up would run no transition (DMG
    /// hardware, bank 0): the write is done, or dropped in mode 3, without ticking, and true
    /// is returned; false if the full write must run. A tick that runs no transition only
    /// moves the clock and the cached distances, and the next tick moves them as far from
    /// where they were (ticks compose), so leaving it out changes nothing any later access,
    /// turn end or state sees. (Pokemon Red's tile map transfers: ~80 writes a frame.)
    #[inline(always)]
    pub fn write_vram_between_transitions(
        &mut self,
        addr: u16,
        value: u8,
        now: u64,
        offset: u64,
    ) -> bool {
        let at = now.wrapping_add(offset);
        let elapsed = at.wrapping_sub(self.last_now);
        if self.cgb_hw || self.vbk != 0 || self.clock.wrapping_add(elapsed) >= self.clock_target {
            return false;
        }
        if offset == 0 || !(self.enabled() && self.mode == 3) {
            self.vram[(addr & 0x1FFF) as usize] = value;
        }
        true
    }

    /// CPU write of 8000-9FFF (dropped during mode 3 when timed).
    pub fn write_vram(&mut self, addr: u16, value: u8, now: u64, offset: u64) {
        if offset != 0 {
            self.tick(now.wrapping_add(offset));
            if self.enabled() && self.mode == 3 {
                return;
            }
        }
        if self.vbk != 0 {
            self.cgb.vram1[(addr & 0x1FFF) as usize] = value;
            return;
        }
        self.vram[(addr & 0x1FFF) as usize] = value;
    }

    /// The LCD's part of an OAM read: whether the PPU blocks it (read gives 0xFF).
    /// The system must not call this for reads made by the OAM DMA itself.
    pub fn oam_read_locked(&mut self, now: u64, offset: u64) -> bool {
        if offset == 0 {
            return false;
        }
        self.tick(now.wrapping_add(offset));
        self.enabled()
            && (self.mode == 2 || self.mode == 3 || (self.first_frame && self.step == Step::Oam))
    }

    /// The LCD's part of an OAM write: whether the PPU blocks it (write dropped).
    pub fn oam_write_locked(&mut self, now: u64, offset: u64) -> bool {
        if offset == 0 {
            return false;
        }
        self.tick(now.wrapping_add(offset));
        self.enabled()
            && (self.mode == 3
                || (self.mode == 2 && !(self.first_frame && self.within_4_of_target())))
    }

    // ------------------------------------------------------------------ debugging

    /// The cycle of the last catch-up (checked against the machine's clock when a state loads).
    pub(crate) fn last_now(&self) -> u64 {
        self.last_now
    }

    /// Object attribute memory (FE00-FE9F).
    #[inline]
    pub fn oam(&self) -> &[u8; 0xA0] {
        &self.oam
    }

    /// OAM for writing: the per-line object lists are rebuilt before their next use.
    #[inline]
    pub fn oam_mut(&mut self) -> &mut [u8; 0xA0] {
        self.line_objects.stale = true;
        &mut self.oam
    }

    /// Current LY (no side effects).
    pub fn ly(&self) -> u8 {
        self.ly
    }

    /// Current STAT mode (0-3).
    pub fn mode(&self) -> u8 {
        self.mode
    }

    /// Per line: SCX, SCY, WX, WY and LCDC & 0x10 (0 or 16, as PyBoy stores it) as they were when the line was drawn
    /// (PyBoy's `_scanlineparameters`, used by `screen.tilemap_position_list`).
    pub fn line_parameters(&self) -> &[[u8; 5]; SCREEN_H] {
        &self.line_params
    }

    // ------------------------------------------------------------------ save state

    /// The timing of a restored state must be that of a running LCD: the dot clock, its
    /// deadline and the cached distances within a few frames of the frame start. (The clock may
    /// sit a little below zero: wrapping arithmetic leaves it there when a catch-up comes from
    /// slightly behind, as in the oracle.) Far-off values come only from a corrupt state; with
    /// them a frame could never end.
    fn check_timing(clock: u64, clock_target: u64, distances: [i64; 2]) -> Result<(), CoreError> {
        const LIMIT: i64 = 1 << 20;
        let near = |v: i64| (-LIMIT..=LIMIT).contains(&v);
        if near(clock as i64) && clock_target <= LIMIT as u64 && distances.into_iter().all(near) {
            Ok(())
        } else {
            Err(CoreError::State(format!(
                "LCD timing out of range (clock {clock}, deadline {clock_target}, distances {distances:?})"
            )))
        }
    }

    /// Take over `other`'s picture while keeping this LCD's buffer allocations, so views of
    /// the screen handed out earlier (zero-copy NumPy arrays) stay valid across state loads.
    pub fn keep_picture_buffers(&mut self, other: &mut Lcd) {
        std::mem::swap(&mut self.rgba, &mut other.rgba);
        std::mem::swap(&mut self.shades, &mut other.shades);
        self.rgba.copy_from_slice(&other.rgba);
        self.shades.copy_from_slice(&other.shades);
        if self.cgb.grey.len() == other.cgb.grey.len() {
            std::mem::swap(&mut self.cgb.grey, &mut other.cgb.grey);
            self.cgb.grey.copy_from_slice(&other.cgb.grey);
        }
    }

    /// Blank VRAM and the picture buffers (used for the post-boot state, which must not carry
    /// the boot ROM's graphics).
    pub fn clear_graphics(&mut self) {
        self.vram.fill(0);
        self.cgb.vram1.fill(0);
        self.rgba.fill(0);
        self.shades.fill(0);
        self.bg_zero.fill(0);
        self.cgb.grey.fill(0);
    }

    pub fn save_state(&self, w: &mut StateWriter) {
        w.bytes(&self.vram);
        w.bytes(&self.oam);
        w.u8(self.irq);
        for v in [
            self.lcdc,
            self.stat,
            self.mode,
            self.scy,
            self.scx,
            self.ly,
            self.lyc,
            self.wy,
            self.wx,
            self.bgp,
            self.obp0,
            self.obp1,
            self.next_mode,
            self.step as u8,
        ] {
            w.u8(v);
        }
        w.bool(self.stat_line);
        w.u64(self.last_now);
        w.u64(self.clock);
        w.u64(self.clock_target);
        w.i64(self.mode3_extra as i64);
        for b in [
            self.frame_done,
            self.first_frame,
            self.restart_pending,
            self.stat_mode_override,
            self.lyc_written_while_off,
            self.render,
            self.window_armed,
        ] {
            w.bool(b);
        }
        w.i64(self.to_interrupt);
        w.i64(self.to_frame);
        w.i64(self.window_line as i64);
        for p in &self.line_params {
            w.buf.extend_from_slice(p);
        }
        w.bytes(&self.rgba);
        w.bytes(&self.shades);
        w.bytes(&self.bg_zero);
    }

    pub fn load_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        let mut n = Lcd::new();
        n.vram.copy_from_slice(r.bytes_exact(0x2000)?);
        n.oam_mut().copy_from_slice(r.bytes_exact(0xA0)?);
        n.irq = r.u8()?;
        n.lcdc = r.u8()?;
        n.stat = r.u8()?;
        n.mode = r.u8()?;
        n.scy = r.u8()?;
        n.scx = r.u8()?;
        n.ly = r.u8()?;
        n.lyc = r.u8()?;
        n.wy = r.u8()?;
        n.wx = r.u8()?;
        n.bgp = r.u8()?;
        n.obp0 = r.u8()?;
        n.obp1 = r.u8()?;
        n.next_mode = r.u8()?;
        n.step = Step::from_u8(r.u8()?)?;
        if n.mode > 3 || n.next_mode > 3 {
            return Err(CoreError::State("bad LCD mode".into()));
        }
        n.stat_line = r.bool()?;
        n.last_now = r.u64()?;
        n.clock = r.u64()?;
        n.clock_target = r.u64()?;
        let extra = r.i64()?;
        n.mode3_extra = i16::try_from(extra)
            .map_err(|_| CoreError::State(format!("bad mode 3 adjustment {extra}")))?;
        n.frame_done = r.bool()?;
        n.first_frame = r.bool()?;
        n.restart_pending = r.bool()?;
        n.stat_mode_override = r.bool()?;
        n.lyc_written_while_off = r.bool()?;
        n.render = r.bool()?;
        n.window_armed = r.bool()?;
        n.to_interrupt = r.i64()?;
        n.to_frame = r.i64()?;
        Lcd::check_timing(n.clock, n.clock_target, [n.to_interrupt, n.to_frame])?;
        let wl = r.i64()?;
        n.window_line =
            i32::try_from(wl).map_err(|_| CoreError::State(format!("bad window line {wl}")))?;
        for p in n.line_params.iter_mut() {
            for b in p.iter_mut() {
                *b = r.u8()?;
            }
        }
        n.rgba
            .copy_from_slice(r.bytes_exact(SCREEN_W * SCREEN_H * 4)?);
        n.shades
            .copy_from_slice(r.bytes_exact(SCREEN_W * SCREEN_H)?);
        n.bg_zero
            .copy_from_slice(r.bytes_exact(SCREEN_W * SCREEN_H)?);
        *self = n;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
