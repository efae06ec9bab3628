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

use super::cgb_palette::{PaletteMemory, COMPAT_RGBA};
use super::render::{select4, tile_row, LANE_LSB};
use super::{Lcd, SCREEN_H, SCREEN_W};

/// Grey level of an RGBA pixel as PIL's `Image.convert("L")` computes it (ITU-R 601-2 luma,
/// L = (19595 R + 38470 G + 7471 B + 0x8000) >> 16), i.e. `pyboy.screen.image.convert("L")`.
/// On the DMG palette's greys it returns the grey itself.
#[inline]
pub const fn luma(rgba: u32) -> u8 {
    let [r, g, b, _] = rgba.to_ne_bytes();
    ((19595 * r as u32 + 38470 * g as u32 + 7471 * b as u32 + 0x8000) >> 16) as u8
}

/// [`luma`] of each of [`COMPAT_RGBA`]'s colours, so that a compatibility-mode line looks its
/// greys up instead of computing them per pixel.
const COMPAT_GREY: [[u8; 4]; 3] = {
    let mut t = [[0u8; 4]; 3];
    let mut p = 0;
    while p < 3 {
        let mut s = 0;
        while s < 4 {
            t[p][s] = luma(COMPAT_RGBA[p][s]);
            s += 1;
        }
        p += 1;
    }
    t
};

/// Colour index of pixel `col` (0 = leftmost) of the tile row starting at `addr`.
#[inline(always)]
fn pixel(vram: &[u8; 0x2000], addr: usize, col: usize) -> u8 {
    let lo = vram[addr & 0x1FFF];
    let hi = vram[(addr + 1) & 0x1FFF];
    let bit = 7 - col;
    ((lo >> bit) & 1) | (((hi >> bit) & 1) << 1)
}

/// RGBA of 16 pixels from their shades (0-3) through four colours. SSE2 (part of every
/// x86-64): per channel, each shade's byte is masked in; then the channels are interleaved.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn shades16_to_colours(src: &[u8; 16], colours: &[u32; 4], dst: &mut [u8; 64]) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of this build's target (the cfg above); no memory is touched
    // through raw pointers (loads and stores go through arrays).
    unsafe {
        let half = |k: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&src[8 * k..8 * k + 8]);
            i64::from_le_bytes(b)
        };
        let s = _mm_set_epi64x(half(1), half(0));
        let masks = [0i8, 1, 2, 3].map(|shade| _mm_cmpeq_epi8(s, _mm_set1_epi8(shade)));
        let channel = |k: usize| {
            let mut v = _mm_setzero_si128();
            for (m, c) in masks.iter().zip(colours) {
                v = _mm_or_si128(
                    v,
                    _mm_and_si128(*m, _mm_set1_epi8(c.to_ne_bytes()[k] as i8)),
                );
            }
            v
        };
        let (r, g, b, a) = (channel(0), channel(1), channel(2), channel(3));
        let rg_lo = _mm_unpacklo_epi8(r, g);
        let ba_lo = _mm_unpacklo_epi8(b, a);
        let rg_hi = _mm_unpackhi_epi8(r, g);
        let ba_hi = _mm_unpackhi_epi8(b, a);
        let quads = [
            _mm_unpacklo_epi16(rg_lo, ba_lo),
            _mm_unpackhi_epi16(rg_lo, ba_lo),
            _mm_unpacklo_epi16(rg_hi, ba_hi),
            _mm_unpackhi_epi16(rg_hi, ba_hi),
        ];
        for (q, out) in quads.iter().zip(dst.as_chunks_mut::<16>().0) {
            let lo = _mm_cvtsi128_si64(*q);
            let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(*q, *q));
            out[..8].copy_from_slice(&lo.to_le_bytes());
            out[8..].copy_from_slice(&hi.to_le_bytes());
        }
    }
}

/// RGBA of 16 pixels from their shades (0-3) through four colours (portable version).
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn shades16_to_colours(src: &[u8; 16], colours: &[u32; 4], dst: &mut [u8; 64]) {
    for (px, &s) in dst.as_chunks_mut::<4>().0.iter_mut().zip(src) {
        *px = colours[(s & 3) as usize].to_ne_bytes();
    }
}

/// RGBA and grey of a colour-mode line from its slots (0-31: background palette colour,
/// 32-63: object palette colour), by table look-up (portable version).
fn slots_to_pixels_scalar(
    shown: &[u8; SCREEN_W],
    bg: &PaletteMemory,
    obj: &PaletteMemory,
    rgba: &mut [u8],
    grey: &mut [u8],
) {
    // The line's 64 colours: background palettes' 32, then the objects' 32.
    let mut rgba_of = [0u32; 64];
    rgba_of[..32].copy_from_slice(bg.rgba());
    rgba_of[32..].copy_from_slice(obj.rgba());
    let mut grey_of = [0u8; 64];
    grey_of[..32].copy_from_slice(bg.grey());
    grey_of[32..].copy_from_slice(obj.grey());
    // `& 63`: slots are below 64, which lets the compiler drop the bounds checks.
    for (px, &s) in rgba.as_chunks_mut::<4>().0.iter_mut().zip(shown) {
        *px = rgba_of[(s & 63) as usize].to_ne_bytes();
    }
    for (g, &s) in grey.iter_mut().zip(shown) {
        *g = grey_of[(s & 63) as usize];
    }
}

/// [`slots_to_pixels_scalar`] with SSSE3, 16 pixels at a time. The 64 colours of each plane
/// (red, green, blue, grey: `PaletteMemory::planes`, background then objects) are four
/// 16-byte tables; `pshufb` looks 16 pixels up in one of them. For table `q`, the index
/// bytes are `(slot ^ 16q) + 0x70` (saturating): below 0x80, with the slot's low 4 bits, when
/// the slot is in table `q`, else 0x80 or more, which `pshufb` turns into 0. OR-ing the four
/// look-ups gives the plane's bytes; the planes are then interleaved into RGBA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
fn slots_to_pixels_ssse3(
    shown: &[u8; SCREEN_W],
    bg: &PaletteMemory,
    obj: &PaletteMemory,
    rgba: &mut [u8],
    grey: &mut [u8],
) {
    use std::arch::x86_64::*;
    #[inline(always)]
    fn load(src: &[u8; 16]) -> __m128i {
        // SAFETY: `src` is 16 readable bytes; `loadu` has no alignment requirement.
        unsafe { _mm_loadu_si128(src.as_ptr().cast()) }
    }
    #[inline(always)]
    fn store(dst: &mut [u8; 16], v: __m128i) {
        // SAFETY: `dst` is 16 writable bytes; `storeu` has no alignment requirement.
        unsafe { _mm_storeu_si128(dst.as_mut_ptr().cast(), v) }
    }
    // tables[c][q]: colours 16q..16q+16 of plane c.
    let tables: [[__m128i; 4]; 4] = core::array::from_fn(|c| {
        let (b, _) = bg.planes()[c].as_chunks::<16>();
        let (o, _) = obj.planes()[c].as_chunks::<16>();
        [load(&b[0]), load(&b[1]), load(&o[0]), load(&o[1])]
    });
    let alpha = _mm_set1_epi8(-1);
    let bias = _mm_set1_epi8(0x70);
    let (slots, _) = shown.as_chunks::<16>();
    let (rgba, _) = rgba.as_chunks_mut::<64>();
    let (grey, _) = grey.as_chunks_mut::<16>();
    for ((src, out), g_out) in slots.iter().zip(rgba).zip(grey) {
        let s = load(src);
        let index: [__m128i; 4] = core::array::from_fn(|q| {
            _mm_adds_epu8(_mm_xor_si128(s, _mm_set1_epi8(16 * q as i8)), bias)
        });
        // Whether any of the 16 pixels is an object's (slot bit 5, shifted to each byte's
        // bit 7); most are not, and then the object tables are not looked in.
        let objects = _mm_movemask_epi8(_mm_slli_epi16(s, 2)) != 0;
        let plane = |c: usize| {
            let t = &tables[c];
            let bg = _mm_or_si128(
                _mm_shuffle_epi8(t[0], index[0]),
                _mm_shuffle_epi8(t[1], index[1]),
            );
            if objects {
                _mm_or_si128(
                    bg,
                    _mm_or_si128(
                        _mm_shuffle_epi8(t[2], index[2]),
                        _mm_shuffle_epi8(t[3], index[3]),
                    ),
                )
            } else {
                bg
            }
        };
        let (r, g, b) = (plane(0), plane(1), plane(2));
        store(g_out, plane(3));
        let rg_lo = _mm_unpacklo_epi8(r, g);
        let ba_lo = _mm_unpacklo_epi8(b, alpha);
        let rg_hi = _mm_unpackhi_epi8(r, g);
        let ba_hi = _mm_unpackhi_epi8(b, alpha);
        let quads = [
            _mm_unpacklo_epi16(rg_lo, ba_lo),
            _mm_unpackhi_epi16(rg_lo, ba_lo),
            _mm_unpacklo_epi16(rg_hi, ba_hi),
            _mm_unpackhi_epi16(rg_hi, ba_hi),
        ];
        for (q, dst) in quads.iter().zip(out.as_chunks_mut::<16>().0) {
            store(dst, *q);
        }
    }
}

/// Screen pixel x of a colour-mode line is at `LineSlots[PAD + x]`; the padding takes the
/// parts of the first and last tiles that fall outside the screen.
const PAD: usize = 8;
type LineSlots = [u8; PAD + SCREEN_W + 8];

/// A background pixel's slot byte: colour index (bits 0-1), palette (bits 2-4), the map
/// attribute's BG-over-OBJ priority (bit 5).
const SLOT_PRIORITY: u8 = 0x20;
/// An object pixel's slot byte: colour index, palette and this bit (index 32-63 of the
/// line's colour table); 0 = no object pixel.
const SLOT_OBJECT: u8 = 0x20;

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

    /// Background or window slots of one line from screen pixel `x0` until `x1`: the map row
    /// at VRAM offset `row_base`, fine row `fine_y` of its tiles, screen pixel `x0` showing
    /// map pixel column `m0`. Whole tiles are written, 8 slots in one store; the pixels of the
    /// first tile left of `x0` land in the padding (or are overwritten by whatever is drawn
    /// from `x0` on), and those of the last tile past `x1` are overwritten next.
    #[inline(always)]
    fn cgb_map_slots(
        &self,
        row_base: usize,
        fine_y: usize,
        m0: u8,
        x0: usize,
        x1: usize,
        slots: &mut LineSlots,
    ) {
        let mut at = PAD + x0 - (m0 & 7) as usize;
        let mut col = (m0 >> 3) as usize;
        while at < PAD + x1 {
            let map_addr = row_base + (col & 31);
            let index = self.vram[map_addr];
            let attr = self.cgb.vram1[map_addr];
            let row = if attr & 0x40 != 0 { 7 - fine_y } else { fine_y };
            let bank = if attr & 0x08 != 0 {
                &self.cgb.vram1
            } else {
                &self.vram
            };
            let mut colours = tile_row(bank, self.tile_base(index) + row * 2);
            if attr & 0x20 != 0 {
                // Horizontal flip: the leftmost pixel is the tile row's last.
                colours = colours.swap_bytes();
            }
            let tag = ((attr & 7) << 2) | if attr & 0x80 != 0 { SLOT_PRIORITY } else { 0 };
            let word = colours | (tag as u64 * LANE_LSB);
            slots[at..at + 8].copy_from_slice(&word.to_le_bytes());
            at += 8;
            col += 1;
        }
    }

    /// Draw line `ly` in colour mode.
    pub(super) fn draw_line_cgb(&mut self, ly: u8) {
        let y = ly as usize;
        if y >= SCREEN_H {
            return;
        }
        let lcdc = self.lcdc;
        let mut bg: LineSlots = [0; PAD + SCREEN_W + 8];
        let wx = self.wx as i32 - 7;
        let window = lcdc & 0x20 != 0 && self.window_armed && wx < SCREEN_W as i32;
        let split = if window { wx.max(0) as usize } else { SCREEN_W };

        let bg_map = if lcdc & 0x08 != 0 { 0x1C00 } else { 0x1800 };
        let my = ly.wrapping_add(self.scy);
        let bg_row = bg_map + (my as usize >> 3) * 32;
        if split > 0 {
            self.cgb_map_slots(bg_row, (my & 7) as usize, self.scx, 0, split, &mut bg);
        }
        if window {
            self.window_line += 1;
            let wl = self.window_line as u8;
            let win_map = if lcdc & 0x40 != 0 { 0x1C00 } else { 0x1800 };
            let win_row = win_map + (wl as usize >> 3) * 32;
            let m0 = (split as i32 - wx) as u8;
            self.cgb_map_slots(win_row, (wl & 7) as usize, m0, split, SCREEN_W, &mut bg);
        }
        if ly == 143 {
            self.window_line = -1;
        }
        let bg = &bg[PAD..PAD + SCREEN_W];

        // Object pixels shown, as slots (0: none). Each object is tested against the
        // background only, never against the objects drawn before it.
        let mut obj = [0u8; SCREEN_W];
        let mut objects_shown = false;
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
                let tag = SLOT_OBJECT | (attr & 7) << 2;
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
                    let b = bg[x];
                    if master && (b & SLOT_PRIORITY != 0 || behind) && b & 3 != 0 {
                        continue;
                    }
                    obj[x] = tag | c;
                    objects_shown = true;
                }
            }
        }

        let mut shown = [0u8; SCREEN_W];
        if objects_shown {
            for ((s, &b), &o) in shown.iter_mut().zip(bg).zip(&obj) {
                *s = if o != 0 { o & 0x3F } else { b & 0x1F };
            }
        } else {
            for (s, &b) in shown.iter_mut().zip(bg) {
                *s = b & 0x1F;
            }
        }
        let row = y * SCREEN_W;
        let rgba = &mut self.rgba[row * 4..(row + SCREEN_W) * 4];
        let grey = &mut self.cgb.grey[row..row + SCREEN_W];
        let (bg_pal, obj_pal) = (&self.cgb.bg, &self.cgb.obj);
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("ssse3") {
                // SAFETY: the CPU has SSSE3 (checked just above).
                unsafe { slots_to_pixels_ssse3(&shown, bg_pal, obj_pal, rgba, grey) };
            } else {
                slots_to_pixels_scalar(&shown, bg_pal, obj_pal, rgba, grey);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        slots_to_pixels_scalar(&shown, bg_pal, obj_pal, rgba, grey);
        for (d, &s) in self.shades[row..row + SCREEN_W].iter_mut().zip(&shown) {
            *d = s & 3;
        }
        for (z, &b) in self.bg_zero[row..row + SCREEN_W].iter_mut().zip(bg) {
            *z = ((b & 3 == 0) as u8) | (b & SLOT_PRIORITY) >> 4;
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
        let drawn = self.draw_line_shades(ly);
        self.lcdc = lcdc;
        if !drawn {
            return;
        }
        let row = y * SCREEN_W;
        let mut shades = [0u8; SCREEN_W];
        shades.copy_from_slice(&self.shades[row..row + SCREEN_W]);
        // Which compatibility palette shows each pixel: 0 background, 1 OBP0, 2 OBP1.
        let mut palette_of = [0u8; SCREEN_W];
        let mut objects_shown = false;
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
                let (reg, palette) = if attr & 0x10 != 0 {
                    (self.obp1, 2)
                } else {
                    (self.obp0, 1)
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
                    shades[x] = (reg >> (2 * c)) & 3;
                    palette_of[x] = palette;
                    objects_shown = true;
                }
            }
        }
        // Whole line through the background palette (vector code), then the object pixels.
        let rgba = &mut self.rgba[row * 4..(row + SCREEN_W) * 4];
        for (src, dst) in shades
            .as_chunks::<16>()
            .0
            .iter()
            .zip(rgba.as_chunks_mut::<64>().0)
        {
            shades16_to_colours(src, &COMPAT_RGBA[0], dst);
        }
        let grey = &mut self.cgb.grey[row..row + SCREEN_W];
        for (g, &s) in grey.iter_mut().zip(&shades) {
            *g = select4(s, COMPAT_GREY[0]);
        }
        if objects_shown {
            for x in 0..SCREEN_W {
                let p = palette_of[x] as usize;
                if p != 0 {
                    let s = shades[x] as usize;
                    rgba[x * 4..x * 4 + 4].copy_from_slice(&COMPAT_RGBA[p][s].to_ne_bytes());
                    grey[x] = COMPAT_GREY[p][s];
                }
            }
        }
        self.shades[row..row + SCREEN_W].copy_from_slice(&shades);
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

/// The per-pixel colour-mode renderer the fast one (above) is checked against (tests only).
/// One line of colour mode being drawn: background colour index, RGBA and grey shown, and
/// the map priority flag, per pixel.
#[cfg(test)]
struct ColourLine {
    colour: [u8; SCREEN_W],
    rgba: [u32; SCREEN_W],
    grey: [u8; SCREEN_W],
    priority: [bool; SCREEN_W],
}

#[cfg(test)]
impl Lcd {
    /// Background or window pixels `x0..x1` of one line: the map row at VRAM offset
    /// `row_base`, fine row `fine_y` of its tiles, pixel `x` showing map column
    /// `(m0 + (x - x0)) as u8` (in pixels). One map entry decoded per tile, not per pixel.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn cgb_map_span_reference(
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
                rgba[k] = self.cgb.bg.rgba()[i];
                grey[k] = self.cgb.bg.grey()[i];
                prio[k] = priority;
            }
            x += n;
            m = m.wrapping_add(n as u8);
        }
    }

    /// Draw line `ly` in colour mode.
    pub(super) fn draw_line_cgb_reference(&mut self, ly: u8) {
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
        self.cgb_map_span_reference(bg_row, (my & 7) as usize, self.scx, 0, split, &mut px);
        if window {
            self.window_line += 1;
            let wl = self.window_line as u8;
            let win_map = if lcdc & 0x40 != 0 { 0x1C00 } else { 0x1800 };
            let win_row = win_map + (wl as usize >> 3) * 32;
            let m0 = (split as i32 - wx) as u8;
            self.cgb_map_span_reference(win_row, (wl & 7) as usize, m0, split, SCREEN_W, &mut px);
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
                    px.rgba[x] = self.cgb.obj.rgba()[pal * 4 + c as usize];
                    px.grey[x] = self.cgb.obj.grey()[pal * 4 + c as usize];
                    shown[x] = c;
                }
            }
        }
        self.store_colour_line_reference(y, &px, &shown);
    }

    /// Write one finished line: RGBA, grey, shade (colour index shown) and the background
    /// attribute rows (bit 0: colour 0, bit 1: map priority; PyBoy's attribute byte).
    fn store_colour_line_reference(&mut self, y: usize, line: &ColourLine, shown: &[u8; SCREEN_W]) {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The colour-mode renderer draws exactly what the per-pixel reference draws, over random
    /// VRAM (both banks), OAM, palettes and registers (scroll, window, flips, banks, priorities).
    #[test]
    fn colour_lines_match_the_per_pixel_reference() {
        let mut next = crate::test_rng::xorshift(0x9E37_79B9_7F4A_7C15);
        let mut l = Lcd::new();
        l.set_cgb(true);
        for round in 0..2000u32 {
            l.line_objects.stale = true;
            for b in l
                .vram
                .iter_mut()
                .chain(l.cgb.vram1.iter_mut())
                .chain(l.oam.iter_mut())
            {
                *b = next() as u8;
            }
            for i in 0..32 {
                l.cgb.bg.set_shown_for_test(i, next() as u32, next() as u8);
                l.cgb.obj.set_shown_for_test(i, next() as u32, next() as u8);
            }
            let ly = (next() % 144) as u8;
            for n in 0..40 {
                if next().is_multiple_of(2) {
                    l.oam_mut()[n * 4] = ly.wrapping_add(16).wrapping_sub((next() % 18) as u8);
                }
            }
            l.lcdc = next() as u8 | 0x80;
            l.scx = next() as u8;
            l.scy = next() as u8;
            l.wx = if round % 3 == 0 {
                (next() % 12) as u8
            } else {
                next() as u8
            };
            l.window_armed = !next().is_multiple_of(4);
            let window_line = (next() % 200) as i32 - 1;
            let mut want = l.clone();
            want.window_line = window_line;
            want.draw_line_cgb_reference(ly);
            l.window_line = window_line;
            l.draw_line_cgb(ly);
            let row = ly as usize * SCREEN_W;
            let r = row..row + SCREEN_W;
            assert_eq!(
                l.rgba[row * 4..(row + SCREEN_W) * 4],
                want.rgba[row * 4..(row + SCREEN_W) * 4],
                "round {round}"
            );
            assert_eq!(
                l.cgb.grey[r.clone()],
                want.cgb.grey[r.clone()],
                "round {round}"
            );
            assert_eq!(l.shades[r.clone()], want.shades[r.clone()], "round {round}");
            assert_eq!(l.bg_zero[r.clone()], want.bg_zero[r], "round {round}");
            assert_eq!(l.window_line, want.window_line, "round {round}");
        }
    }

    /// The SSSE3 slot conversion gives what the portable one gives, for every slot value
    /// (random colours, random lines, and lines of each slot alone).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn ssse3_slot_conversion_matches_the_scalar_one() {
        assert!(
            std::arch::is_x86_feature_detected!("ssse3"),
            "this test needs an SSSE3 CPU"
        );
        let mut next = crate::test_rng::xorshift(0x1234_5678_9ABC_DEF1);
        let mut bg = PaletteMemory::new();
        let mut obj = PaletteMemory::new();
        for round in 0..1000u32 {
            for i in 0..32 {
                bg.set_shown_for_test(i, next() as u32, next() as u8);
                obj.set_shown_for_test(i, next() as u32, next() as u8);
            }
            // Each slot alone; then lines of background slots only, of any slots, and of
            // background slots with a few object slots (some 16-pixel groups without any).
            let shown: [u8; SCREEN_W] = match round {
                0..64 => [round as u8; SCREEN_W],
                _ if round % 3 == 0 => core::array::from_fn(|_| (next() % 32) as u8),
                _ if round % 3 == 1 => core::array::from_fn(|_| (next() % 64) as u8),
                _ => core::array::from_fn(|_| {
                    let v = next();
                    (v % 32) as u8 | if v.is_multiple_of(53) { 0x20 } else { 0 }
                }),
            };
            let (mut rgba_a, mut grey_a) = ([0u8; SCREEN_W * 4], [0u8; SCREEN_W]);
            let (mut rgba_b, mut grey_b) = ([1u8; SCREEN_W * 4], [1u8; SCREEN_W]);
            slots_to_pixels_scalar(&shown, &bg, &obj, &mut rgba_a, &mut grey_a);
            // SAFETY: SSSE3 was checked above.
            unsafe { slots_to_pixels_ssse3(&shown, &bg, &obj, &mut rgba_b, &mut grey_b) };
            assert_eq!(rgba_a, rgba_b, "round {round}");
            assert_eq!(grey_a, grey_b, "round {round}");
            let s = shown[17] as usize;
            let want = if s < 32 {
                bg.rgba()[s]
            } else {
                obj.rgba()[s - 32]
            };
            assert_eq!(rgba_b[17 * 4..18 * 4], want.to_ne_bytes(), "round {round}");
        }
    }

    #[test]
    fn compat_grey_table_is_luma_of_the_compat_colours() {
        for p in 0..3 {
            for s in 0..4 {
                assert_eq!(COMPAT_GREY[p][s], luma(COMPAT_RGBA[p][s]));
            }
        }
    }

    #[test]
    fn shades_to_colours_matches_the_table() {
        let src: [u8; 16] = core::array::from_fn(|i| (i * 7 % 4) as u8);
        for colours in &COMPAT_RGBA {
            let mut dst = [0u8; 64];
            shades16_to_colours(&src, colours, &mut dst);
            for (i, &s) in src.iter().enumerate() {
                assert_eq!(dst[4 * i..4 * i + 4], colours[s as usize].to_ne_bytes());
            }
        }
    }

    #[test]
    fn luma_keeps_greys() {
        for g in [0u8, 0x55, 0x99, 0xFF, 0x12] {
            assert_eq!(luma(u32::from_ne_bytes([g, g, g, 0xFF])), g);
        }
        assert_eq!(luma(u32::from_ne_bytes([0xFF, 0, 0, 0xFF])), 76);
    }
}
