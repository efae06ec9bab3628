//! Scanline renderer: background, window and objects of one line, drawn in one go when
//! the line's HBlank begins (PyBoy's model), with PyBoy's own simplifications:
//!
//! * With the window active on a line, the background left of it is drawn even when
//!   LCDC.0 (background enable) is off; without the window, LCDC.0=0 gives colour 0 of BGP.
//! * The window's line counter counts lines on which it was drawn; it is reset after
//!   line 143 is drawn, and it starts at 0 (not -1) at power-on, so the very first
//!   window line drawn after power-on uses window row 1.
//! * Objects: the first 10 OAM entries overlapping the line, drawn from the lowest
//!   priority (largest X, then largest OAM index) to the highest, each overwriting the
//!   previous. An object with the "behind BG" flag shows only over pixels whose
//!   background colour index is 0 (never when the background was blanked by LCDC.0=0).
//! * Nothing is drawn while rendering is disabled; the screen keeps its old pixels.

use super::{Lcd, SCREEN_H, SCREEN_W};

/// PyBoy's default DMG palette ("Grey"), one grey level per shade.
const GREY: [u8; 4] = [0xFF, 0x99, 0x55, 0x00];

impl Lcd {
    /// 144*160*4 bytes, row-major RGBA, identical to PyBoy's `screen.ndarray`.
    pub fn screen_rgba(&self) -> &[u8] {
        &self.rgba
    }

    /// 144*160 shade indices (0 white .. 3 black) after palette mapping.
    pub fn screen_shades(&self) -> &[u8] {
        &self.shades
    }

    #[inline(always)]
    fn put(&mut self, i: usize, shade: u8) {
        self.shades[i] = shade;
        let g = GREY[shade as usize];
        self.rgba[i * 4..i * 4 + 4].copy_from_slice(&[g, g, g, 0xFF]);
    }

    /// Fill the screen with BGP colour 0 (LCD off, or the start-up frame).
    pub(super) fn blank_screen(&mut self) {
        let shade = self.bgp & 3;
        let g = GREY[shade as usize];
        self.shades.fill(shade);
        for px in self.rgba.chunks_exact_mut(4) {
            px.copy_from_slice(&[g, g, g, 0xFF]);
        }
        self.bg_zero.fill(0);
    }

    /// Colour index (0-3) of pixel `col` (0 = leftmost) of row `row` of tile data at
    /// VRAM offset `tile_addr`.
    #[inline(always)]
    fn tile_pixel(&self, tile_addr: usize, row: usize, col: usize) -> u8 {
        let lo = self.vram[tile_addr + row * 2];
        let hi = self.vram[tile_addr + row * 2 + 1];
        let bit = 7 - col;
        ((lo >> bit) & 1) | (((hi >> bit) & 1) << 1)
    }

    /// VRAM offset of the tile data for the map entry at map coordinates (`my`, `mx`)
    /// (both in pixels, already reduced to 0-255) of the map at `map_base`.
    #[inline(always)]
    fn map_tile_addr(&self, map_base: usize, my: u8, mx: u8) -> usize {
        let index = self.vram[map_base + (my as usize / 8) * 32 + mx as usize / 8];
        if self.lcdc & 0x10 != 0 {
            index as usize * 16
        } else {
            // Signed indices relative to 0x9000.
            (0x1000i32 + (index as i8 as i32) * 16) as usize
        }
    }

    pub(super) fn draw_line(&mut self, ly: u8) {
        let y = ly as usize;
        if y >= SCREEN_H {
            return;
        }
        let row = y * SCREEN_W;
        let wx = self.wx as i32 - 7;
        if self.lcdc & 0x20 != 0 && self.window_armed && wx < SCREEN_W as i32 {
            self.window_line += 1;
            let split = wx.max(0) as usize;
            self.draw_background(ly, 0, split);
            self.draw_window(row, split, wx);
        } else if self.lcdc & 0x01 != 0 {
            self.draw_background(ly, 0, SCREEN_W);
        } else {
            let shade = self.bgp & 3;
            for x in 0..SCREEN_W {
                self.put(row + x, shade);
                self.bg_zero[row + x] = 0;
            }
        }
        if ly == 143 {
            // Incremented before use: the next frame's first window line is row 0.
            self.window_line = -1;
        }
        if self.lcdc & 0x02 != 0 {
            self.draw_objects(ly);
        }
    }

    fn draw_background(&mut self, ly: u8, from: usize, to: usize) {
        let row = ly as usize * SCREEN_W;
        let map = if self.lcdc & 0x08 != 0 {
            0x1C00
        } else {
            0x1800
        };
        let my = ly.wrapping_add(self.scy);
        let line = (my & 7) as usize;
        for x in from..to {
            let mx = (x as u8).wrapping_add(self.scx);
            let tile = self.map_tile_addr(map, my, mx);
            let c = self.tile_pixel(tile, line, (mx & 7) as usize);
            self.put(row + x, (self.bgp >> (c * 2)) & 3);
            self.bg_zero[row + x] = (c == 0) as u8;
        }
    }

    fn draw_window(&mut self, row: usize, from: usize, wx: i32) {
        let map = if self.lcdc & 0x40 != 0 {
            0x1C00
        } else {
            0x1800
        };
        let wy = self.window_line as u8;
        let line = (wy & 7) as usize;
        for x in from..SCREEN_W {
            let wxp = (x as i32 - wx) as u8;
            let tile = self.map_tile_addr(map, wy, wxp);
            let c = self.tile_pixel(tile, line, (wxp & 7) as usize);
            self.put(row + x, (self.bgp >> (c * 2)) & 3);
            self.bg_zero[row + x] = (c == 0) as u8;
        }
    }

    fn draw_objects(&mut self, ly: u8) {
        let ly = ly as i32;
        let tall = self.lcdc & 0x04 != 0;
        let height = if tall { 16 } else { 8 };
        // (x, OAM offset) of the first 10 objects on this line, in OAM order.
        let mut picked = [(0i32, 0usize); 10];
        let mut count = 0;
        for n in (0..0xA0).step_by(4) {
            let top = self.oam[n] as i32 - 16;
            if top <= ly && ly < top + height {
                picked[count] = (self.oam[n + 1] as i32 - 8, n);
                count += 1;
                if count == 10 {
                    break;
                }
            }
        }
        let picked = &mut picked[..count];
        // Lowest priority first: larger X, then larger OAM index, drawn earlier.
        picked.sort_unstable_by(|a, b| b.cmp(a));
        let row = ly as usize * SCREEN_W;
        for &(x0, n) in picked.iter() {
            let top = self.oam[n] as i32 - 16;
            let mut tile = self.oam[n + 2] as usize;
            if tall {
                tile &= 0xFE;
            }
            let attr = self.oam[n + 3];
            let dy = ly - top;
            let line = if attr & 0x40 != 0 {
                height - 1 - dy
            } else {
                dy
            } as usize;
            let palette = if attr & 0x10 != 0 {
                self.obp1
            } else {
                self.obp0
            };
            let behind = attr & 0x80 != 0;
            // A 16-line object's second half is simply the next tile's data.
            let data = tile * 16;
            for dx in 0..8 {
                let x = x0 + dx;
                if !(0..SCREEN_W as i32).contains(&x) {
                    continue;
                }
                let col = if attr & 0x20 != 0 { 7 - dx } else { dx } as usize;
                let c = self.tile_pixel(data, line, col);
                if c == 0 {
                    continue;
                }
                let i = row + x as usize;
                if !behind || self.bg_zero[i] != 0 {
                    self.put(i, (palette >> (c * 2)) & 3);
                }
            }
        }
    }
}
