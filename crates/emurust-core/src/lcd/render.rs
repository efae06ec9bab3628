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
//!
//! Speed: a line is built tile row by tile row. The two bytes of a tile row (Pan Docs,
//! "Tile Data": bit 7 is the leftmost pixel, the first byte holds the low colour bits)
//! are turned into 8 colour indices at once, one per byte of a `u64` (byte 0 = leftmost
//! pixel), through [`SPREAD`]. The line's colour indices land in a small buffer, which one
//! pass then maps through the palette into the shade, RGBA and colour-0 rows.

use super::{Lcd, SCREEN_H, SCREEN_W};

/// PyBoy's default DMG palette ("Grey"), one grey level per shade.
const GREY: [u8; 4] = [0xFF, 0x99, 0x55, 0x00];

/// Each shade as the 4 RGBA bytes PyBoy shows for it, as one native-endian word.
const GREY_RGBA: [u32; 4] = {
    let mut t = [0u32; 4];
    let mut s = 0;
    while s < 4 {
        let g = GREY[s];
        t[s] = u32::from_ne_bytes([g, g, g, 0xFF]);
        s += 1;
    }
    t
};

/// `SPREAD[b]` has, in byte `j` (little-endian), bit `7 - j` of `b`: one bit-plane of a
/// tile row spread out to one byte per pixel, leftmost pixel in byte 0.
static SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut v = 0u64;
        let mut j = 0;
        while j < 8 {
            v |= (((b >> (7 - j)) & 1) as u64) << (8 * j);
            j += 1;
        }
        t[b] = v;
        b += 1;
    }
    t
};

/// `values[c]` for a colour index or shade `c` (0-3), without a table look-up: compares
/// and masks only, which vectorise over a whole line.
#[inline(always)]
pub(super) fn select4(c: u8, values: [u8; 4]) -> u8 {
    let mask = |k: u8| ((c == k) as u8).wrapping_neg();
    (values[0] & mask(0)) | (values[1] & mask(1)) | (values[2] & mask(2)) | (values[3] & mask(3))
}

/// RGBA of 16 pixels from their shades (0-3): grey level, then [g, g, g, 0xFF].
/// SSE2 (part of every x86-64): the compiler does not find this byte interleave itself,
/// and the scalar look-up costs about 3 times as many instructions.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
fn shades16_to_rgba(src: &[u8; 16], dst: &mut [u8; 64]) {
    use std::arch::x86_64::*;
    let half = |k: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&src[8 * k..8 * k + 8]);
        i64::from_le_bytes(b)
    };
    let s = _mm_set_epi64x(half(1), half(0));
    let level = |shade: i8, grey: u8| {
        _mm_and_si128(
            _mm_cmpeq_epi8(s, _mm_set1_epi8(shade)),
            _mm_set1_epi8(grey as i8),
        )
    };
    // Shade 3 is black (0x00): nothing to add for it.
    let g = _mm_or_si128(
        _mm_or_si128(level(0, GREY[0]), level(1, GREY[1])),
        level(2, GREY[2]),
    );
    let opaque = _mm_set1_epi8(-1);
    let gg_lo = _mm_unpacklo_epi8(g, g);
    let ga_lo = _mm_unpacklo_epi8(g, opaque);
    let gg_hi = _mm_unpackhi_epi8(g, g);
    let ga_hi = _mm_unpackhi_epi8(g, opaque);
    let quads = [
        _mm_unpacklo_epi16(gg_lo, ga_lo),
        _mm_unpackhi_epi16(gg_lo, ga_lo),
        _mm_unpacklo_epi16(gg_hi, ga_hi),
        _mm_unpackhi_epi16(gg_hi, ga_hi),
    ];
    for (q, out) in quads.iter().zip(dst.as_chunks_mut::<16>().0) {
        let lo = _mm_cvtsi128_si64(*q);
        let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(*q, *q));
        out[..8].copy_from_slice(&lo.to_le_bytes());
        out[8..].copy_from_slice(&hi.to_le_bytes());
    }
}

/// RGBA of 16 pixels from their shades (portable version).
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn shades16_to_rgba(src: &[u8; 16], dst: &mut [u8; 64]) {
    for (px, &s) in dst.as_chunks_mut::<4>().0.iter_mut().zip(src) {
        *px = GREY_RGBA[(s & 3) as usize].to_ne_bytes();
    }
}

/// One byte per pixel, the low bit of each byte.
pub(super) const LANE_LSB: u64 = 0x0101_0101_0101_0101;

/// Draw 8 object pixels over 8 shades (one per byte): `colours` are the object's colour
/// indices, `palette` its OBP; colour 0 is transparent, and with `behind_bg` (the
/// background's colour-0 flags, one 0/1 byte per pixel) only those pixels are drawn.
#[inline(always)]
fn blend_object_row(shades: u64, colours: u64, palette: u8, behind_bg: Option<u64>) -> u64 {
    let b0 = colours & LANE_LSB;
    let b1 = (colours >> 1) & LANE_LSB;
    // 0/1 per byte for colours 1, 2, 3; multiplying by a value below 256 cannot carry
    // into the next byte.
    let (is1, is2, is3) = (b0 & !b1, b1 & !b0, b0 & b1);
    let shade = |c: u8| ((palette >> (2 * c)) & 3) as u64;
    let drawn = is1 * shade(1) + is2 * shade(2) + is3 * shade(3);
    let mut mask = (b0 | b1) * 0xFF;
    if let Some(zero) = behind_bg {
        mask &= (zero & LANE_LSB) * 0xFF;
    }
    (shades & !mask) | (drawn & mask)
}

/// Left margin of the line buffer: background tiles start up to 7 pixels left of the
/// screen (fine scroll) and window tiles up to 7 (WX < 7), always on whole tiles.
const PAD: usize = 8;
/// Line buffer length: margin + screen + one tile that may run past the right edge.
const LINE_BUF: usize = PAD + SCREEN_W + 8;

/// The 8 colour indices (one per byte, leftmost pixel in byte 0) of the tile row whose
/// first byte is at VRAM offset `addr` (even).
#[inline(always)]
pub(super) fn tile_row(vram: &[u8; 0x2000], addr: usize) -> u64 {
    let addr = addr & 0x1FFE;
    let lo = vram[addr];
    let hi = vram[addr | 1];
    SPREAD[lo as usize] | (SPREAD[hi as usize] << 1)
}

/// Where tile `index`'s data starts, as (base, xor) with offset = base + (index ^ xor) * 16:
/// LCDC.4 set selects 0x8000 with unsigned indices; clear, 0x9000 with signed ones, which
/// is 0x8800 + (index ^ 0x80) * 16 (Pan Docs, "VRAM Tile Data").
#[inline(always)]
fn tile_data_mode(lcdc: u8) -> (usize, u8) {
    if lcdc & 0x10 != 0 {
        (0, 0)
    } else {
        (0x0800, 0x80)
    }
}

/// Draw the tiles of one map row into `buf`, tile `k` (map column `col0 + k`) at
/// `buf[first + 8k ..]`, for as long as tiles start before buffer position `end`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn draw_tiles(
    buf: &mut [u8; LINE_BUF],
    vram: &[u8; 0x2000],
    lcdc: u8,
    map_row: usize,
    col0: usize,
    row_in_tile: usize,
    first: usize,
    end: usize,
) {
    let (base, xor) = tile_data_mode(lcdc);
    let mut pos = first;
    let mut col = col0;
    while pos < end {
        let index = vram[(map_row + (col & 31)) & 0x1FFF];
        let colours = tile_row(vram, base + ((index ^ xor) as usize) * 16 + row_in_tile * 2);
        // `end` <= PAD + SCREEN_W, so `pos + 8` <= LINE_BUF: never out of range.
        if let Some(dst) = buf.get_mut(pos..pos + 8) {
            dst.copy_from_slice(&colours.to_le_bytes());
        }
        pos += 8;
        col += 1;
    }
}

/// The objects on each screen line: the first 10 in OAM order whose rows cover it (Pan
/// Docs, "OAM Scan"). Both mode 3's length and the drawing need them on every line, so
/// they are worked out for all lines at once and reused until OAM is written or the object
/// height changes (OAM typically changes once a frame, by DMA in VBlank).
#[derive(Clone)]
pub(super) struct LineObjects {
    /// OAM was written since the lists were made (set by `Lcd::oam_mut`).
    pub(super) stale: bool,
    /// The object height the lists were made for.
    height: u8,
    count: [u8; SCREEN_H],
    /// OAM offsets (4 * object number), in OAM order.
    offsets: [[u8; 10]; SCREEN_H],
}

impl LineObjects {
    pub(super) fn new() -> LineObjects {
        LineObjects {
            stale: true,
            height: 0,
            count: [0; SCREEN_H],
            offsets: [[0; 10]; SCREEN_H],
        }
    }

    /// Whether the lists are current for objects `height` dots tall and line `ly` has none
    /// (then [`Lcd::objects_on_line`] would find none).
    #[inline(always)]
    pub(super) fn known_empty(&self, ly: u8, height: u8) -> bool {
        !self.stale && self.height == height && self.count.get(ly as usize) == Some(&0)
    }

    #[cold]
    fn rebuild(&mut self, oam: &[u8; 0xA0], height: u8) {
        self.stale = false;
        self.height = height;
        self.count = [0; SCREEN_H];
        for (n, entry) in oam.as_chunks::<4>().0.iter().enumerate() {
            // OAM Y is the object's top line + 16.
            let top = entry[0] as usize;
            let first = top.saturating_sub(16);
            let end = (top + height as usize).saturating_sub(16).min(SCREEN_H);
            for ly in first..end {
                let count = &mut self.count[ly];
                if (*count as usize) < 10 {
                    self.offsets[ly][*count as usize] = (n * 4) as u8;
                    *count += 1;
                }
            }
        }
    }
}

impl Lcd {
    /// OAM offsets of the first 10 objects on line `ly` in OAM order, and their number.
    #[inline]
    pub(super) fn objects_on_line(&mut self, ly: u8) -> ([u8; 10], usize) {
        let height: u8 = if self.lcdc & 0x04 != 0 { 16 } else { 8 };
        let cache = &mut self.line_objects;
        if let (Some(&count), Some(offsets)) =
            (cache.count.get(ly as usize), cache.offsets.get(ly as usize))
        {
            if cache.stale || cache.height != height {
                cache.rebuild(&self.oam, height);
                return (
                    cache.offsets[ly as usize],
                    cache.count[ly as usize] as usize,
                );
            }
            return (*offsets, count as usize);
        }
        // Off-screen lines (only from odd restored states): scan OAM directly.
        let mut offsets = [0u8; 10];
        let mut count = 0;
        for (n, entry) in self.oam.as_chunks::<4>().0.iter().enumerate() {
            // Without wrapping: LY + 16 may exceed 255 here.
            let dy = ly as i32 + 16 - entry[0] as i32;
            if (0..height as i32).contains(&dy) {
                offsets[count] = (n * 4) as u8;
                count += 1;
                if count == offsets.len() {
                    break;
                }
            }
        }
        (offsets, count)
    }

    /// 144*160*4 bytes, row-major RGBA, identical to PyBoy's `screen.ndarray`.
    pub fn screen_rgba(&self) -> &[u8] {
        &self.rgba
    }

    /// 144*160 shade indices (0 white .. 3 black) after palette mapping.
    pub fn screen_shades(&self) -> &[u8] {
        &self.shades
    }

    /// Fill the screen with BGP colour 0 (LCD off, or the start-up frame).
    pub(super) fn blank_screen(&mut self) {
        let shade = self.bgp & 3;
        self.shades.fill(shade);
        let word = GREY_RGBA[shade as usize].to_ne_bytes();
        for px in self.rgba.as_chunks_mut::<4>().0 {
            *px = word;
        }
        self.bg_zero.fill(0);
    }

    pub(super) fn draw_line(&mut self, ly: u8) {
        if self.draw_line_shades(ly) {
            self.shades_to_rgba(ly as usize * SCREEN_W);
        }
    }

    /// The shades (and background colour-0 flags) of line `ly`, objects included when LCDC.1
    /// is set; false when there is no such line.
    pub(super) fn draw_line_shades(&mut self, ly: u8) -> bool {
        let y = ly as usize;
        if y >= SCREEN_H {
            return false;
        }
        let lcdc = self.lcdc;
        // Colour indices of the line; screen pixel x is at `buf[PAD + x]`.
        let mut buf = [0u8; LINE_BUF];
        let wx = self.wx as i32 - 7;
        let window = lcdc & 0x20 != 0 && self.window_armed && wx < SCREEN_W as i32;
        // Background up to `split`, the window from there on.
        let split = if window { wx.max(0) as usize } else { SCREEN_W };
        let blank = !window && lcdc & 0x01 == 0;
        if !blank && split > 0 {
            let my = ly.wrapping_add(self.scy);
            let map = if lcdc & 0x08 != 0 { 0x1C00 } else { 0x1800 };
            let fine = (self.scx & 7) as usize;
            draw_tiles(
                &mut buf,
                &self.vram,
                lcdc,
                map + (my as usize >> 3) * 32,
                (self.scx >> 3) as usize,
                (my & 7) as usize,
                PAD - fine,
                PAD + split,
            );
        }
        if window {
            // PyBoy keeps this counter in a C int; it only grows past 143 while lines go
            // undrawn (the reset is part of drawing line 143), and a restored state may
            // hold any i32. Wrap as a C int does, in debug builds too.
            self.window_line = self.window_line.wrapping_add(1);
            // Window row modulo 256 (32 map rows of 8 lines), as PyBoy's
            // `y // 8 * 32 % 0x400` and `y % 8` give it, negative values included.
            let wy = self.window_line as u8;
            let map = if lcdc & 0x40 != 0 { 0x1C00 } else { 0x1800 };
            // The window's first pixel is at screen x = wx (>= -7); its earlier
            // tiles do not overwrite the background left of `split`.
            draw_tiles(
                &mut buf,
                &self.vram,
                lcdc,
                map + (wy as usize >> 3) * 32,
                0,
                (wy & 7) as usize,
                (PAD as i32 + wx) as usize,
                PAD + SCREEN_W,
            );
        }
        if ly == 143 {
            // Incremented before use: the next frame's first window line is row 0.
            self.window_line = -1;
        }

        let row = y * SCREEN_W;
        let (Some(shades), Some(bg_zero)) = (
            self.shades.get_mut(row..row + SCREEN_W),
            self.bg_zero.get_mut(row..row + SCREEN_W),
        ) else {
            return false;
        };
        if blank {
            shades.fill(self.bgp & 3);
            bg_zero.fill(0);
        } else {
            let bgp = self.bgp;
            let line = &buf[PAD..PAD + SCREEN_W];
            // Branch-free per byte, so that the compiler turns it into vector code.
            for ((&c, s), z) in line.iter().zip(shades.iter_mut()).zip(bg_zero.iter_mut()) {
                *s = select4(c, [bgp & 3, (bgp >> 2) & 3, (bgp >> 4) & 3, bgp >> 6]);
                *z = (c == 0) as u8;
            }
        }
        if lcdc & 0x02 != 0 {
            self.draw_objects(ly);
        }
        true
    }

    /// Write the RGBA pixels of the screen row starting at pixel `row` from its shades.
    #[inline(always)]
    fn shades_to_rgba(&mut self, row: usize) {
        let (Some(shades), Some(rgba)) = (
            self.shades.get(row..row + SCREEN_W),
            self.rgba.get_mut(row * 4..(row + SCREEN_W) * 4),
        ) else {
            return;
        };
        let srcs = shades.as_chunks::<16>().0;
        let dsts = rgba.as_chunks_mut::<64>().0;
        for (src, dst) in srcs.iter().zip(dsts) {
            // SAFETY: the only requirement of this call is the SSE2 feature, which this
            // build targets (the function exists only under cfg(target_feature = "sse2")).
            #[allow(unused_unsafe)]
            unsafe {
                shades16_to_rgba(src, dst)
            };
        }
    }

    fn draw_objects(&mut self, ly: u8) {
        let tall = self.lcdc & 0x04 != 0;
        let height: u8 = if tall { 16 } else { 8 };
        // Sort keys (X << 8 | OAM offset) of the first 10 objects on this line.
        let (offsets, count) = self.objects_on_line(ly);
        let mut picked = [0u16; 10];
        for (key, &n) in picked.iter_mut().zip(&offsets[..count]) {
            *key = (self.oam[n as usize + 1] as u16) << 8 | n as u16;
        }
        let picked = &mut picked[..count];
        // Lowest priority first: larger X, then larger OAM index, drawn earlier.
        picked.sort_unstable_by(|a, b| b.cmp(a));
        let row = ly as usize * SCREEN_W;
        let (Some(shades), Some(bg_zero)) = (
            self.shades.get_mut(row..row + SCREEN_W),
            self.bg_zero.get(row..row + SCREEN_W),
        ) else {
            return;
        };
        for &key in picked.iter() {
            let n = (key & 0xFF) as usize;
            let entry = &self.oam[n..n + 4];
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
            let palette = if attr & 0x10 != 0 {
                self.obp1
            } else {
                self.obp0
            };
            let behind = attr & 0x80 != 0;
            // A 16-line object's second half is simply the next tile's data.
            let mut colours = tile_row(&self.vram, tile * 16 + line * 2);
            if attr & 0x20 != 0 {
                // Horizontal flip: the leftmost pixel is the tile's rightmost.
                colours = colours.swap_bytes();
            }
            if colours == 0 {
                continue;
            }
            // Fully on screen (OAM X 8..=160): all 8 pixels at once, one per byte. An
            // object with X < 8 starts left of the screen (no `left`); X > 160 runs past its
            // right edge (no slice): both take the clipping path below.
            let fast = entry[1].checked_sub(8).map(usize::from).and_then(|left| {
                Some((
                    shades.get_mut(left..left + 8)?,
                    bg_zero.get(left..left + 8)?,
                ))
            });
            if let Some((dst, under)) = fast {
                let mut old = [0u8; 8];
                old.copy_from_slice(dst);
                let mut zero = [0u8; 8];
                zero.copy_from_slice(under);
                let blended = blend_object_row(
                    u64::from_le_bytes(old),
                    colours,
                    palette,
                    behind.then(|| u64::from_le_bytes(zero)),
                );
                dst.copy_from_slice(&blended.to_le_bytes());
                continue;
            }
            let x0 = entry[1] as i32 - 8;
            for dx in 0..8 {
                let c = ((colours >> (8 * dx)) & 3) as u8;
                let x = x0 + dx;
                if c == 0 || !(0..SCREEN_W as i32).contains(&x) {
                    continue;
                }
                let x = x as usize;
                if !behind || bg_zero[x] != 0 {
                    shades[x] = (palette >> (c * 2)) & 3;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The straightforward per-pixel renderer this file replaced, kept as a reference:
    /// (shades, bg_zero) of line `ly` drawn from the same state (window line counter
    /// given as it is before the line).
    fn reference_line(l: &Lcd, ly: u8, window_line: i32) -> ([u8; 160], [u8; 160]) {
        let mut shades = [0u8; 160];
        let mut bgz = [0u8; 160];
        let pixel = |addr: usize, row: usize, col: usize| {
            let lo = l.vram[addr + row * 2];
            let hi = l.vram[addr + row * 2 + 1];
            let bit = 7 - col;
            ((lo >> bit) & 1) | (((hi >> bit) & 1) << 1)
        };
        let tile_addr = |map: usize, my: u8, mx: u8| {
            let index = l.vram[map + (my as usize / 8) * 32 + mx as usize / 8];
            if l.lcdc & 0x10 != 0 {
                index as usize * 16
            } else {
                (0x1000i32 + (index as i8 as i32) * 16) as usize
            }
        };
        let wx = l.wx as i32 - 7;
        let bg = |shades: &mut [u8; 160], bgz: &mut [u8; 160], from: usize, to: usize| {
            let map = if l.lcdc & 0x08 != 0 { 0x1C00 } else { 0x1800 };
            let my = ly.wrapping_add(l.scy);
            for x in from..to {
                let mx = (x as u8).wrapping_add(l.scx);
                let c = pixel(tile_addr(map, my, mx), (my & 7) as usize, (mx & 7) as usize);
                shades[x] = (l.bgp >> (c * 2)) & 3;
                bgz[x] = (c == 0) as u8;
            }
        };
        if l.lcdc & 0x20 != 0 && l.window_armed && wx < 160 {
            let split = wx.max(0) as usize;
            bg(&mut shades, &mut bgz, 0, split);
            let map = if l.lcdc & 0x40 != 0 { 0x1C00 } else { 0x1800 };
            let wy = (window_line + 1) as u8;
            for x in split..160 {
                let wxp = (x as i32 - wx) as u8;
                let c = pixel(
                    tile_addr(map, wy, wxp),
                    (wy & 7) as usize,
                    (wxp & 7) as usize,
                );
                shades[x] = (l.bgp >> (c * 2)) & 3;
                bgz[x] = (c == 0) as u8;
            }
        } else if l.lcdc & 0x01 != 0 {
            bg(&mut shades, &mut bgz, 0, 160);
        } else {
            shades.fill(l.bgp & 3);
        }
        if l.lcdc & 0x02 != 0 {
            let ly = ly as i32;
            let tall = l.lcdc & 0x04 != 0;
            let height = if tall { 16 } else { 8 };
            let mut picked = Vec::new();
            for n in (0..0xA0).step_by(4) {
                let top = l.oam[n] as i32 - 16;
                if top <= ly && ly < top + height && picked.len() < 10 {
                    picked.push((l.oam[n + 1] as i32 - 8, n));
                }
            }
            picked.sort_by(|a, b| b.cmp(a));
            for (x0, n) in picked {
                let top = l.oam[n] as i32 - 16;
                let mut tile = l.oam[n + 2] as usize;
                if tall {
                    tile &= 0xFE;
                }
                let attr = l.oam[n + 3];
                let dy = ly - top;
                let line = if attr & 0x40 != 0 {
                    height - 1 - dy
                } else {
                    dy
                } as usize;
                let pal = if attr & 0x10 != 0 { l.obp1 } else { l.obp0 };
                for dx in 0..8 {
                    let x = x0 + dx;
                    if !(0..160).contains(&x) {
                        continue;
                    }
                    let col = if attr & 0x20 != 0 { 7 - dx } else { dx } as usize;
                    let c = pixel(tile * 16, line, col);
                    if c != 0 && (attr & 0x80 == 0 || bgz[x as usize] != 0) {
                        shades[x as usize] = (pal >> (c * 2)) & 3;
                    }
                }
            }
        }
        (shades, bgz)
    }

    /// The per-line OAM scan object_penalty did before the per-line lists.
    fn reference_object_penalty(l: &Lcd, ly: i32) -> i32 {
        if l.lcdc & 0x02 == 0 {
            return 0;
        }
        let height = if l.lcdc & 0x04 != 0 { 16 } else { 8 };
        let (mut found, mut groups, mut dots) = (0, 0, 0);
        let mut seen = [false; 256];
        for entry in l.oam.chunks_exact(4) {
            let top = entry[0] as i32 - 16;
            if top <= ly && ly < top + height {
                let x = entry[1] as i32;
                if x < 168 {
                    dots += 6;
                    if !seen[x as usize] {
                        seen[x as usize] = true;
                        groups += 1;
                        dots += (5 - ((x + l.scx as i32 - 8) & 7)).max(0);
                    }
                }
                found += 1;
                if found == 10 {
                    break;
                }
            }
        }
        match (found, groups) {
            (0, _) => 0,
            (_, 0) => -4,
            _ => (dots - 7).max(0),
        }
    }

    /// Objects partly off the left (OAM X 1..=7) or right (X 161..=167) edge show only
    /// their on-screen columns, and nothing wraps to the other side of the line.
    #[test]
    fn objects_clipped_at_both_screen_edges() {
        let mut l = Lcd::new();
        // LCD and objects on, background off (colour 0); OBP0 shows colour c as shade c.
        l.lcdc = 0x80 | 0x02;
        l.bgp = 0xE4;
        l.obp0 = 0xE4;
        // Tile 1: every row has colours 1,2,3,1,2,3,1,2 from left to right.
        for row in 0..8 {
            l.vram[16 + row * 2] = 0b1011_0110;
            l.vram[16 + row * 2 + 1] = 0b0110_1101;
        }
        let colours = [1u8, 2, 3, 1, 2, 3, 1, 2];
        for x in (0u8..=8).chain(160..=168) {
            *l.oam_mut() = [0; 0xA0];
            l.oam_mut()[..4].copy_from_slice(&[16, x, 1, 0]); // top line on LY 0
            l.draw_line(0);
            let mut want = [0u8; 160];
            for (dx, &c) in colours.iter().enumerate() {
                let sx = x as i32 - 8 + dx as i32;
                if (0..160).contains(&sx) {
                    want[sx as usize] = c;
                }
            }
            assert_eq!(&l.shades[..160], &want[..], "OAM X {x}");
        }
    }

    #[test]
    fn tile_row_decodes_bit_planes() {
        let mut vram = [0u8; 0x2000];
        vram[0x10] = 0b1010_0001;
        vram[0x11] = 0b1100_0011;
        let c = tile_row(&vram, 0x10).to_le_bytes();
        assert_eq!(c, [3, 2, 1, 0, 0, 0, 2, 3]);
    }

    /// The tile-row renderer draws exactly what the per-pixel reference draws, over
    /// random VRAM, OAM and registers (all scroll, window and object cases).
    #[test]
    fn matches_per_pixel_reference() {
        let mut next = crate::test_rng::xorshift(0x9E37_79B9_7F4A_7C15);
        let mut l = Lcd::new();
        for round in 0..3000u32 {
            for b in l.vram.iter_mut() {
                *b = next() as u8;
            }
            for b in l.oam_mut().iter_mut() {
                *b = next() as u8;
            }
            // Objects clustered near the line so that many overlap it.
            let ly = (next() % 144) as u8;
            for n in 0..40 {
                if next().is_multiple_of(2) {
                    l.oam_mut()[n * 4] = ly.wrapping_add(16).wrapping_sub((next() % 18) as u8);
                }
                if next().is_multiple_of(2) {
                    l.oam_mut()[n * 4 + 1] = (next() % 176) as u8;
                }
            }
            l.lcdc = (next() as u8) | 0x80;
            l.scx = next() as u8;
            l.scy = next() as u8;
            l.wx = if round.is_multiple_of(3) {
                (next() % 12) as u8
            } else {
                next() as u8
            };
            l.bgp = next() as u8;
            l.obp0 = next() as u8;
            l.obp1 = next() as u8;
            l.window_armed = !next().is_multiple_of(4);
            let window_line = (next() % 200) as i32 - 1;
            for pass in 0..2 {
                if pass == 1 && next().is_multiple_of(2) {
                    // Same LCD again, OAM changed or not: the per-line lists must follow.
                    let i = (next() % 0xA0) as usize;
                    l.oam_mut()[i] = next() as u8;
                }
                l.window_line = window_line;
                let (want_shades, want_bgz) = reference_line(&l, ly, window_line);
                let want_penalty = reference_object_penalty(&l, ly as i32);
                assert_eq!(l.object_penalty(ly), want_penalty, "round {round}");
                let off_screen = 144 + (next() % 112) as u8;
                let want = reference_object_penalty(&l, off_screen as i32);
                assert_eq!(l.object_penalty(off_screen), want, "round {round}");
                l.draw_line(ly);
                let row = ly as usize * 160;
                assert_eq!(&l.shades[row..row + 160], &want_shades[..], "round {round}");
                assert_eq!(&l.bg_zero[row..row + 160], &want_bgz[..], "round {round}");
                for x in 0..160 {
                    let g = GREY[want_shades[x] as usize];
                    assert_eq!(&l.rgba[(row + x) * 4..(row + x) * 4 + 4], &[g, g, g, 0xFF]);
                }
            }
        }
    }
}
