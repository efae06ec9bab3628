//! Game Boy Color scanline rendering, as PyBoy 2.8.1 draws it (one whole line when its
//! HBlank begins, like the DMG renderer in `render.rs`).
//!
//! Colour mode (a CGB game on CGB hardware), Pan Docs "BG Map Attributes", "OAM":
//! * Background and window read their tile numbers from VRAM bank 0 and the attributes of the
//!   same map entry from bank 1: palette (bits 0-2), tile data bank (bit 3), horizontal flip
//!   (bit 5), vertical flip (bit 6), BG-over-OBJ priority (bit 7).
//! * LCDC bit 0 does not blank the background: it is the master priority. With it clear,
//!   objects are always drawn on top; with it set, an object pixel is drawn over a background
//!   pixel of colour 0, or over any background pixel when neither the map attribute's
//!   priority bit nor the object's "behind" bit is set.
//! * Objects: the first 10 on the line in OAM order (as on the DMG), drawn from the highest
//!   OAM index to the lowest, each overwriting the previous (no X priority); palette from
//!   attribute bits 0-2, tile data bank from bit 3.
//! * The window is drawn as on the DMG (internal line counter, WX < 7 handling).
//!
//! DMG compatibility mode (a DMG game on CGB hardware, after the boot ROM wrote KEY0):
//! PyBoy draws it with its DMG renderer but shows the shades through its three "CGB colour
//! palettes" (background, OBP0, OBP1), not through the colours the CGB boot ROM would set.
//!
//! Besides RGBA, every drawn line also fills a grey copy of the picture (see [`luma`]) and
//! the shade buffer (in colour mode: the colour index 0-3 of the pixel shown).

use super::cgb_palette::COMPAT_RGBA;
use super::render::tile_row;
use super::{Lcd, SCREEN_H, SCREEN_W};

/// Grey level of an RGBA pixel as PIL's `Image.convert("L")` computes it (ITU-R 601-2 luma,
/// L = (19595 R + 38470 G + 7471 B + 0x8000) >> 16), i.e. `pyboy.screen.image.convert("L")`.
/// On the DMG palette's greys it returns the grey itself.
#[inline]
pub fn luma(rgba: u32) -> u8 {
    let [r, g, b, _] = rgba.to_ne_bytes();
    ((19595 * r as u32 + 38470 * g as u32 + 7471 * b as u32 + 0x8000) >> 16) as u8
}

/// Colour index of pixel `col` (0 = leftmost) of the tile row starting at `addr`.
#[inline(always)]
fn pixel(vram: &[u8; 0x2000], addr: usize, col: usize) -> u8 {
    let lo = vram[addr & 0x1FFF];
    let hi = vram[(addr + 1) & 0x1FFF];
    let bit = 7 - col;
    ((lo >> bit) & 1) | (((hi >> bit) & 1) << 1)
}

/// One line of colour mode being drawn: background colour index, RGBA and grey shown, and
/// the map priority flag, per pixel.
struct ColourLine {
    colour: [u8; SCREEN_W],
    rgba: [u32; SCREEN_W],
    grey: [u8; SCREEN_W],
    priority: [bool; SCREEN_W],
}

impl Lcd {
    /// Offset in a VRAM bank of tile `index`'s data (LCDC.4 addressing mode).
    #[inline(always)]
    fn tile_base(&self, index: u8) -> usize {
        if self.lcdc & 0x10 != 0 {
            index as usize * 16
        } else {
            0x0800 + (index ^ 0x80) as usize * 16
        }
    }

    /// Background or window pixels `x0..x1` of one line: the map row at VRAM offset
    /// `row_base`, fine row `fine_y` of its tiles, pixel `x` showing map column
    /// `(m0 + (x - x0)) as u8` (in pixels). One map entry decoded per tile, not per pixel.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn cgb_map_span(
        &self,
        row_base: usize,
        fine_y: usize,
        m0: u8,
        x0: usize,
        x1: usize,
        line: &mut ColourLine,
    ) {
        let mut x = x0;
        let mut m = m0;
        while x < x1 {
            let map_addr = row_base + (m as usize >> 3);
            let index = self.vram[map_addr];
            let attr = self.cgb.vram1[map_addr];
            let row = if attr & 0x40 != 0 { 7 - fine_y } else { fine_y };
            let bank = if attr & 0x08 != 0 {
                &self.cgb.vram1
            } else {
                &self.vram
            };
            let mut row_colours = tile_row(bank, self.tile_base(index) + row * 2);
            if attr & 0x20 != 0 {
                // Horizontal flip: the leftmost pixel is the tile row's last.
                row_colours = row_colours.swap_bytes();
            }
            let row_colours = row_colours.to_le_bytes();
            let pal = (attr & 7) as usize * 4;
            let priority = attr & 0x80 != 0;
            let first = (m & 7) as usize;
            let n = (8 - first).min(x1 - x);
            let cs = &row_colours[first..first + n];
            let colour = &mut line.colour[x..x + n];
            let rgba = &mut line.rgba[x..x + n];
            let grey = &mut line.grey[x..x + n];
            let prio = &mut line.priority[x..x + n];
            for k in 0..n {
                let c = cs[k];
                let i = pal + c as usize;
                colour[k] = c;
                rgba[k] = self.cgb.bg.rgba[i];
                grey[k] = self.cgb.bg.grey[i];
                prio[k] = priority;
            }
            x += n;
            m = m.wrapping_add(n as u8);
        }
    }

    /// Draw line `ly` in colour mode.
    pub(super) fn draw_line_cgb(&mut self, ly: u8) {
        let y = ly as usize;
        if y >= SCREEN_H {
            return;
        }
        let lcdc = self.lcdc;
        let mut px = ColourLine {
            colour: [0; SCREEN_W],
            rgba: [0; SCREEN_W],
            grey: [0; SCREEN_W],
            priority: [false; SCREEN_W],
        };
        let wx = self.wx as i32 - 7;
        let window = lcdc & 0x20 != 0 && self.window_armed && wx < SCREEN_W as i32;
        let split = if window { wx.max(0) as usize } else { SCREEN_W };

        let bg_map = if lcdc & 0x08 != 0 { 0x1C00 } else { 0x1800 };
        let my = ly.wrapping_add(self.scy);
        let bg_row = bg_map + (my as usize >> 3) * 32;
        self.cgb_map_span(bg_row, (my & 7) as usize, self.scx, 0, split, &mut px);
        if window {
            self.window_line += 1;
            let wl = self.window_line as u8;
            let win_map = if lcdc & 0x40 != 0 { 0x1C00 } else { 0x1800 };
            let win_row = win_map + (wl as usize >> 3) * 32;
            let m0 = (split as i32 - wx) as u8;
            self.cgb_map_span(win_row, (wl & 7) as usize, m0, split, SCREEN_W, &mut px);
        }
        if ly == 143 {
            self.window_line = -1;
        }

        let mut shown = px.colour;
        if lcdc & 0x02 != 0 {
            let tall = lcdc & 0x04 != 0;
            let height: u8 = if tall { 16 } else { 8 };
            let master = lcdc & 0x01 != 0;
            let (offsets, count) = self.objects_on_line(ly);
            // Lowest priority (highest OAM index) first.
            for &n in offsets[..count].iter().rev() {
                let n = n as usize;
                let entry = [
                    self.oam[n],
                    self.oam[n + 1],
                    self.oam[n + 2],
                    self.oam[n + 3],
                ];
                let attr = entry[3];
                let mut tile = entry[2] as usize;
                if tall {
                    tile &= 0xFE;
                }
                let dy = ly.wrapping_add(16).wrapping_sub(entry[0]);
                let line = if attr & 0x40 != 0 {
                    height - 1 - dy
                } else {
                    dy
                } as usize;
                let bank = if attr & 0x08 != 0 {
                    &self.cgb.vram1
                } else {
                    &self.vram
                };
                let behind = attr & 0x80 != 0;
                let pal = (attr & 7) as usize;
                let x0 = entry[1] as i32 - 8;
                for dx in 0..8usize {
                    let x = x0 + dx as i32;
                    if !(0..SCREEN_W as i32).contains(&x) {
                        continue;
                    }
                    let col = if attr & 0x20 != 0 { 7 - dx } else { dx };
                    let c = pixel(bank, tile * 16 + line * 2, col);
                    if c == 0 {
                        continue;
                    }
                    let x = x as usize;
                    if master && (px.priority[x] || behind) && px.colour[x] != 0 {
                        continue;
                    }
                    px.rgba[x] = self.cgb.obj.rgba[pal * 4 + c as usize];
                    px.grey[x] = self.cgb.obj.grey[pal * 4 + c as usize];
                    shown[x] = c;
                }
            }
        }
        self.store_colour_line(y, &px, &shown);
    }

    /// Write one finished line: RGBA, grey, shade (colour index shown) and the background
    /// attribute rows (bit 0: colour 0, bit 1: map priority; PyBoy's attribute byte).
    fn store_colour_line(&mut self, y: usize, line: &ColourLine, shown: &[u8; SCREEN_W]) {
        let row = y * SCREEN_W;
        let rgba = &mut self.rgba[row * 4..(row + SCREEN_W) * 4];
        for (px, word) in rgba.as_chunks_mut::<4>().0.iter_mut().zip(&line.rgba) {
            *px = word.to_ne_bytes();
        }
        self.cgb.grey[row..row + SCREEN_W].copy_from_slice(&line.grey);
        self.shades[row..row + SCREEN_W].copy_from_slice(shown);
        let bg_zero = &mut self.bg_zero[row..row + SCREEN_W];
        for ((z, &c), &p) in bg_zero.iter_mut().zip(&line.colour).zip(&line.priority) {
            *z = (c == 0) as u8 | (p as u8) << 1;
        }
    }

    /// Draw line `ly` of a DMG game on CGB hardware: the DMG renderer's shades, shown through
    /// PyBoy's compatibility colours.
    pub(super) fn draw_line_compat(&mut self, ly: u8) {
        let y = ly as usize;
        if y >= SCREEN_H {
            return;
        }
        // Background and window exactly as the DMG renderer draws them.
        let lcdc = self.lcdc;
        self.lcdc &= !0x02;
        self.draw_line(ly);
        self.lcdc = lcdc;
        let row = y * SCREEN_W;
        let mut rgba = [0u32; SCREEN_W];
        let mut shades = [0u8; SCREEN_W];
        shades.copy_from_slice(&self.shades[row..row + SCREEN_W]);
        for x in 0..SCREEN_W {
            rgba[x] = COMPAT_RGBA[0][(shades[x] & 3) as usize];
        }
        if lcdc & 0x02 != 0 {
            let tall = lcdc & 0x04 != 0;
            let height: u8 = if tall { 16 } else { 8 };
            let (offsets, count) = self.objects_on_line(ly);
            let mut picked = [0u16; 10];
            for (key, &n) in picked.iter_mut().zip(&offsets[..count]) {
                *key = (self.oam[n as usize + 1] as u16) << 8 | n as u16;
            }
            let picked = &mut picked[..count];
            picked.sort_unstable_by(|a, b| b.cmp(a));
            for &key in picked.iter() {
                let n = (key & 0xFF) as usize;
                let entry = [
                    self.oam[n],
                    self.oam[n + 1],
                    self.oam[n + 2],
                    self.oam[n + 3],
                ];
                let attr = entry[3];
                let mut tile = entry[2] as usize;
                if tall {
                    tile &= 0xFE;
                }
                let dy = ly.wrapping_add(16).wrapping_sub(entry[0]);
                let line = if attr & 0x40 != 0 {
                    height - 1 - dy
                } else {
                    dy
                } as usize;
                let (reg, colours) = if attr & 0x10 != 0 {
                    (self.obp1, &COMPAT_RGBA[2])
                } else {
                    (self.obp0, &COMPAT_RGBA[1])
                };
                let behind = attr & 0x80 != 0;
                let x0 = entry[1] as i32 - 8;
                for dx in 0..8usize {
                    let x = x0 + dx as i32;
                    if !(0..SCREEN_W as i32).contains(&x) {
                        continue;
                    }
                    let col = if attr & 0x20 != 0 { 7 - dx } else { dx };
                    let c = pixel(&self.vram, tile * 16 + line * 2, col);
                    if c == 0 {
                        continue;
                    }
                    let x = x as usize;
                    if behind && self.bg_zero[row + x] == 0 {
                        continue;
                    }
                    let s = (reg >> (2 * c)) & 3;
                    shades[x] = s;
                    rgba[x] = colours[s as usize];
                }
            }
        }
        for x in 0..SCREEN_W {
            let word = rgba[x];
            self.rgba[(row + x) * 4..(row + x) * 4 + 4].copy_from_slice(&word.to_ne_bytes());
            self.cgb.grey[row + x] = luma(word);
            self.shades[row + x] = shades[x];
        }
    }

    /// Blank picture on CGB hardware: PyBoy fills it with BGP colour 0 shown through its
    /// background compatibility palette (in colour mode too).
    pub(super) fn blank_screen_cgb(&mut self) {
        let shade = self.bgp & 3;
        let word = COMPAT_RGBA[0][shade as usize];
        self.shades.fill(shade);
        for px in self.rgba.as_chunks_mut::<4>().0 {
            *px = word.to_ne_bytes();
        }
        self.cgb.grey.fill(luma(word));
        self.bg_zero.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luma_keeps_greys() {
        for g in [0u8, 0x55, 0x99, 0xFF, 0x12] {
            assert_eq!(luma(u32::from_ne_bytes([g, g, g, 0xFF])), g);
        }
        assert_eq!(luma(u32::from_ne_bytes([0xFF, 0, 0, 0xFF])), 76);
    }
}
