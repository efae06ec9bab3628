//! PyBoy 2.8.1 save-state sections of the LCD (format version 29, DMG), so that states
//! can be exchanged with PyBoy. PyBoy writes two sections: the LCD's (after the CPU and
//! OAM DMA fields) and, after the sound's, the renderer's (screen and window flag).
//!
//! Loading reproduces what PyBoy does when it loads a state into a running instance:
//! LCDC goes through the normal register write (with its on/off side effects, the
//! interrupt discarded), the STAT line is recomputed from the stored STAT, the cached
//! distances are recomputed from the clocks, and state PyBoy does not store (the mode 3
//! adjustment unless in mode 3, the window line counter, the STAT-read override, the
//! "LYC written while off" flag, render on/off) keeps the value it had before loading.

use super::cgb_palette::COMPAT_RGBA;
use super::{Lcd, Step, FRAME_CYCLES, SCREEN_H, SCREEN_W};
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// Byte length of PyBoy's LCD section for a DMG.
pub const PYBOY_LCD_SECTION_LEN: usize =
    0x2000 + 0xA0 + 4 + 1 + 2 + 5 + SCREEN_H * 5 + 3 + 3 + 24 + 2;
/// Extra bytes of PyBoy's LCD section in colour mode: VRAM bank 1, VBK, and each palette
/// memory's index register (value, auto-increment, index, high byte) and 32 colours.
pub const PYBOY_LCD_CGB_EXTRA_LEN: usize = 0x2000 + 1 + 2 * (4 + 64);

/// Byte length of PyBoy's renderer section.
pub const PYBOY_RENDERER_SECTION_LEN: usize = SCREEN_W * SCREEN_H * 5 + 1;

fn flag(r: &mut StateReader) -> Result<bool, CoreError> {
    // PyBoy reads its booleans as bytes: any non-zero value is true.
    Ok(r.u8()? != 0)
}

impl Lcd {
    pub fn save_pyboy_lcd(&self, w: &mut StateWriter) {
        w.buf.extend_from_slice(&self.vram);
        w.buf.extend_from_slice(&self.oam);
        for v in [
            self.lcdc, self.bgp, self.obp0, self.obp1, self.stat, self.ly, self.lyc,
        ] {
            w.u8(v);
        }
        // PyBoy keeps the byte on the DMG too (0xFF unless an older state's FF6C byte set it).
        for v in [self.scy, self.scx, self.wy, self.wx, self.cgb.opri] {
            w.u8(v);
        }
        for p in &self.line_params {
            w.buf.extend_from_slice(p);
        }
        w.bool(self.cgb_colour); // CGB (colour mode)
        w.bool(self.cgb_hw && !self.cgb_colour); // downgraded from CGB to DMG mode
        w.u8(self.speed_shift);
        w.bool(self.frame_done);
        w.bool(self.first_frame);
        w.bool(self.restart_pending);
        w.u64(self.last_now);
        w.u64(self.clock);
        w.u64(self.clock_target);
        w.u8(self.next_mode);
        w.u8(self.step as u8);
        if self.cgb_colour {
            w.buf.extend_from_slice(&self.cgb.vram1);
            w.u8(self.vbk);
            for pal in [&self.cgb.bg, &self.cgb.obj] {
                let (value, auto, index, high) = pal.pyboy_index_fields();
                for v in [value, auto, index, high] {
                    w.u8(v);
                }
                for c in pal.colours() {
                    w.u16(*c);
                }
            }
        }
    }

    pub fn save_pyboy_renderer(&self, w: &mut StateWriter) {
        for i in 0..SCREEN_W * SCREEN_H {
            w.buf.extend_from_slice(&self.rgba[i * 4..i * 4 + 4]);
            w.u8(self.bg_zero[i]);
        }
        w.bool(self.window_armed);
    }

    /// Load PyBoy's LCD section into this (running) LCD, as PyBoy would.
    pub fn load_pyboy_lcd(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.load_pyboy_lcd_version(r, 29)
    }

    /// [`Lcd::load_pyboy_lcd`] for a state of PyBoy format `version` rewritten in version 29's
    /// layout (see `gameboy/pyboy_state_versions.rs`). Fields the version lacks are not
    /// assigned: as in PyBoy, they keep the values this LCD has after the LCDC write (which
    /// may switch the LCD on or off): STAT, LY, LYC before version 5; the clocks, next mode,
    /// transition, speed shift, colour mode and the cached distances before 8; the "last
    /// cycles" before 12; the frame-done, first-frame and restart flags before 13.
    pub fn load_pyboy_lcd_version(
        &mut self,
        r: &mut StateReader,
        version: u8,
    ) -> Result<(), CoreError> {
        if r.remaining() < PYBOY_LCD_SECTION_LEN {
            return Err(CoreError::State("truncated PyBoy LCD section".into()));
        }
        let mut vram = [0u8; 0x2000];
        for b in vram.iter_mut() {
            *b = r.u8()?;
        }
        let mut oam = [0u8; 0xA0];
        for b in oam.iter_mut() {
            *b = r.u8()?;
        }
        let lcdc = r.u8()?;
        let (bgp, obp0, obp1) = (r.u8()?, r.u8()?, r.u8()?);
        let stat = r.u8()?;
        let (ly, lyc) = (r.u8()?, r.u8()?);
        let (scy, scx, wy, wx) = (r.u8()?, r.u8()?, r.u8()?, r.u8()?);
        let object_priority_mode = r.u8()?;
        let mut params = [[0u8; 5]; SCREEN_H];
        for p in params.iter_mut() {
            for b in p.iter_mut() {
                *b = r.u8()?;
            }
        }
        let (cgb, downgraded, speed_shift) = (r.u8()? != 0, r.u8()? != 0, r.u8()?);
        if !self.cgb_hw && (cgb || downgraded || speed_shift != 0) {
            return Err(CoreError::State(
                "PyBoy state of Game Boy Color hardware; this emulator runs a DMG".into(),
            ));
        }
        if self.cgb_hw && cgb == downgraded {
            return Err(CoreError::State(
                "PyBoy state of DMG hardware; this emulator runs a Game Boy Color".into(),
            ));
        }
        if speed_shift > 1 {
            return Err(CoreError::State(format!(
                "PyBoy LCD speed shift {speed_shift}"
            )));
        }
        let (frame_done, first_frame, restart) = (flag(r)?, flag(r)?, flag(r)?);
        let (last_now, clock, clock_target) = (r.u64()?, r.u64()?, r.u64()?);
        let next_mode = r.u8()?;
        let step = match r.u8()? {
            0 => Step::Mode,
            1 => Step::NextLine,
            2 => Step::Oam,
            3 if self.cgb_hw => Step::VblankPretriggered,
            v => {
                return Err(CoreError::State(format!(
                    "PyBoy LCD transition {v} out of range"
                )))
            }
        };
        // Colour mode: VRAM bank 1 and the palettes.
        let mut colour_part = None;
        if cgb {
            let mut vram1 = [0u8; 0x2000];
            for b in vram1.iter_mut() {
                *b = r.u8()?;
            }
            let vbk = r.u8()?;
            let mut pals = Vec::new();
            for _ in 0..2 {
                let value = r.u8()?;
                for _ in 0..3 {
                    r.u8()?; // auto-increment, index, high byte: derived from the value
                }
                let mut colours = [0u16; 32];
                for c in colours.iter_mut() {
                    *c = r.u16()?;
                }
                pals.push((value, colours));
            }
            colour_part = Some((vram1, vbk, pals));
        }
        if next_mode > 3 {
            return Err(CoreError::State(format!("PyBoy LCD next mode {next_mode}")));
        }
        Lcd::check_timing(clock, clock_target, [0, 0])?;

        // All validated: apply in PyBoy's order.
        self.vram = vram;
        *self.oam_mut() = oam;
        let irq = self.irq;
        self.write_lcdc(lcdc);
        self.bgp = bgp;
        self.obp0 = obp0;
        self.obp1 = obp1;
        if version >= 5 {
            self.stat = stat;
            self.mode = stat & 3;
            self.stat_line = false;
            self.refresh_stat_line();
            self.ly = ly;
            self.lyc = lyc;
        }
        self.irq = irq;
        self.scy = scy;
        self.scx = scx;
        self.wy = wy;
        self.wx = wx;
        self.line_params = params;
        self.cgb.opri = object_priority_mode; // the DMG keeps it too, unused (as PyBoy)
        if version >= 13 {
            self.frame_done = frame_done;
            self.first_frame = first_frame;
            self.restart_pending = restart;
        }
        if version >= 12 {
            self.last_now = last_now;
        }
        if version < 8 {
            return Ok(());
        }
        self.clock = clock;
        self.clock_target = clock_target;
        self.to_interrupt = clock_target.wrapping_sub(clock) as i64;
        self.to_frame = FRAME_CYCLES.wrapping_sub(clock) as i64;
        self.next_mode = next_mode;
        self.step = step;
        if self.cgb_hw {
            self.cgb_colour = cgb;
            self.speed_shift = speed_shift;
            self.to_interrupt <<= speed_shift;
            self.to_frame <<= speed_shift;
            if let Some((vram1, vbk, pals)) = colour_part {
                self.cgb.vram1 = vram1;
                self.vbk = vbk & 1;
                self.cgb.bg.set_raw(pals[0].0, &pals[0].1);
                self.cgb.obj.set_raw(pals[1].0, &pals[1].1);
            }
        }
        if self.mode == 3 {
            self.mode3_extra = self.mode3_adjustment(self.ly);
        }
        if self.vblank_stat_pretrigger() && clock <= clock_target && clock_target - clock >= 4 {
            self.to_interrupt -= 4 << self.speed_shift;
        }
        Ok(())
    }

    /// Load PyBoy's renderer section (screen, per-pixel colour-0 flags, window flag).
    pub fn load_pyboy_renderer(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.load_pyboy_renderer_version(r, 29)
    }

    /// [`Lcd::load_pyboy_renderer`] for a state of PyBoy format `version` in version 29's
    /// layout: before version 18 the window flag is not assigned (it keeps its value after
    /// the LCDC write, which on the CGB may clear it).
    pub fn load_pyboy_renderer_version(
        &mut self,
        r: &mut StateReader,
        version: u8,
    ) -> Result<(), CoreError> {
        if r.remaining() < PYBOY_RENDERER_SECTION_LEN {
            return Err(CoreError::State("truncated PyBoy renderer section".into()));
        }
        for i in 0..SCREEN_W * SCREEN_H {
            for k in 0..4 {
                self.rgba[i * 4 + k] = r.u8()?;
            }
            let attributes = r.u8()?;
            self.bg_zero[i] = attributes & if self.cgb_colour { 3 } else { 1 };
            let px = [
                self.rgba[i * 4],
                self.rgba[i * 4 + 1],
                self.rgba[i * 4 + 2],
                self.rgba[i * 4 + 3],
            ];
            self.shades[i] = if self.cgb_hw {
                // The shade behind a compatibility colour (0 for colours of colour mode).
                let word = u32::from_ne_bytes(px);
                self.cgb.grey[i] = super::luma(word);
                (0..4)
                    .find(|&s| COMPAT_RGBA[0][s] == word || COMPAT_RGBA[1][s] == word)
                    .unwrap_or(0) as u8
            } else {
                match px {
                    [0x99, 0x99, 0x99, 0xFF] => 1,
                    [0x55, 0x55, 0x55, 0xFF] => 2,
                    [0x00, 0x00, 0x00, 0xFF] => 3,
                    _ => 0,
                }
            };
        }
        let window_armed = flag(r)?;
        if version >= 18 {
            self.window_armed = window_armed;
        }
        Ok(())
    }
}
