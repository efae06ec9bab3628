//! Game Boy Color palette memory (BCPS/BCPD, OCPS/OCPD) and colour output, as PyBoy 2.8.1
//! models them.
//!
//! Spec: Pan Docs, "CGB Registers" / "LCD Color Palettes". Each of the two palette memories
//! holds 8 palettes of 4 colours, each colour a 15-bit little-endian value (bits 0-4 red,
//! 5-9 green, 10-14 blue). The index register selects a byte (bits 0-5) and, with bit 7,
//! advances after every data write.
//!
//! PyBoy's model, which we reproduce:
//! * Writing the index register stores the value as is (reads return it with bit 6 set); the
//!   auto-increment adds one to the whole register value with bit 7 forced, so an index of 63
//!   wraps to 0 and the stored value's bit 6 follows the carry.
//! * Data reads and writes are never blocked (no mode 3 lock).
//! * Both memories start with every palette set to 0x1CE7, 0x1E19, 0x7E31, 0x217B.
//! * A colour is shown as R = red << 3, G = green << 3, B = blue << 3 (no colour correction),
//!   alpha 0xFF.

use super::cgb_render::luma;
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// The colours every palette starts with.
const POWER_ON: [u16; 4] = [0x1CE7, 0x1E19, 0x7E31, 0x217B];

/// The RGBA bytes (as a native-endian word) PyBoy shows for a 15-bit colour.
#[inline]
pub fn rgba_of(colour: u16) -> u32 {
    let r = ((colour & 0x1F) << 3) as u8;
    let g = (((colour >> 5) & 0x1F) << 3) as u8;
    let b = (((colour >> 10) & 0x1F) << 3) as u8;
    u32::from_ne_bytes([r, g, b, 0xFF])
}

/// The RGBA word of a 24-bit 0xRRGGBB colour (PyBoy's palette arguments).
#[inline]
pub const fn rgba_of_rgb24(c: u32) -> u32 {
    u32::from_ne_bytes([(c >> 16) as u8, (c >> 8) as u8, c as u8, 0xFF])
}

/// One palette memory with its index register (BCPS+BCPD or OCPS+OCPD).
#[derive(Clone, Debug)]
pub struct PaletteMemory {
    /// The index register as written (bit 7 auto-increment, bits 0-5 byte index).
    index_reg: u8,
    /// 32 colours as written (bit 15 kept).
    colours: [u16; 32],
    /// The colours as RGBA words.
    rgba: [u32; 32],
    /// Their grey levels ([`luma`] of `rgba`), for the grey picture.
    grey: [u8; 32],
    /// The same colours channel by channel: red, green, blue and grey planes (alpha is
    /// always 0xFF), kept in step with `rgba` and `grey` so that the colour-mode renderer
    /// can look 16 pixels up at once (one byte shuffle per plane and 16 colours).
    planes: [[u8; 32]; 4],
}

impl Default for PaletteMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl PaletteMemory {
    pub fn new() -> PaletteMemory {
        let mut p = PaletteMemory {
            index_reg: 0,
            colours: [0; 32],
            rgba: [0; 32],
            grey: [0; 32],
            planes: [[0; 32]; 4],
        };
        for i in 0..32 {
            p.set_colour(i, POWER_ON[i % 4]);
        }
        p
    }

    /// Every change of a colour goes through here (data writes, state loads, power-on), which
    /// keeps `rgba`, `grey` and `planes` in step.
    #[inline]
    fn set_colour(&mut self, i: usize, c: u16) {
        self.colours[i] = c;
        let rgba = rgba_of(c);
        self.set_shown(i, rgba, luma(rgba));
    }

    /// Show colour `i` as `rgba` and `grey` (in every form the renderers read).
    #[inline]
    fn set_shown(&mut self, i: usize, rgba: u32, grey: u8) {
        self.rgba[i] = rgba;
        self.grey[i] = grey;
        let [r, g, b, _] = rgba.to_ne_bytes();
        self.planes[0][i] = r;
        self.planes[1][i] = g;
        self.planes[2][i] = b;
        self.planes[3][i] = grey;
    }

    /// Tests only: show colour `i` as any RGBA word (alpha 0xFF) and grey, not only the
    /// ones a 15-bit colour gives.
    #[cfg(test)]
    pub(crate) fn set_shown_for_test(&mut self, i: usize, rgba: u32, grey: u8) {
        self.set_shown(i, rgba | u32::from_ne_bytes([0, 0, 0, 0xFF]), grey);
    }

    /// The 32 colours as RGBA words (alpha 0xFF).
    #[inline]
    pub fn rgba(&self) -> &[u32; 32] {
        &self.rgba
    }

    /// The 32 colours' grey levels.
    #[inline]
    pub fn grey(&self) -> &[u8; 32] {
        &self.grey
    }

    /// The 32 colours as red, green, blue and grey planes.
    #[inline]
    pub fn planes(&self) -> &[[u8; 32]; 4] {
        &self.planes
    }

    /// The index register as read (bit 6 always set).
    pub fn read_index(&self) -> u8 {
        self.index_reg | 0x40
    }

    pub fn write_index(&mut self, value: u8) {
        self.index_reg = value;
    }

    fn colour_index(&self) -> usize {
        ((self.index_reg >> 1) & 0x1F) as usize
    }

    fn high_byte(&self) -> bool {
        self.index_reg & 1 != 0
    }

    pub fn read_data(&self) -> u8 {
        let c = self.colours[self.colour_index()];
        if self.high_byte() {
            (c >> 8) as u8
        } else {
            c as u8
        }
    }

    pub fn write_data(&mut self, value: u8) {
        let i = self.colour_index();
        let old = self.colours[i];
        let c = if self.high_byte() {
            (old & 0x00FF) | ((value as u16) << 8)
        } else {
            (old & 0xFF00) | value as u16
        };
        self.set_colour(i, c);
        if self.index_reg & 0x80 != 0 {
            self.index_reg = 0x80 | self.index_reg.wrapping_add(1);
        }
    }

    /// The 15-bit colour `c` of palette `p` (bit 15 as written).
    pub fn colour(&self, p: usize, c: usize) -> u16 {
        self.colours[(p * 4 + c) & 31]
    }

    pub fn save_state(&self, w: &mut StateWriter) {
        w.u8(self.index_reg);
        for c in &self.colours {
            w.u16(*c);
        }
    }

    pub fn load_state(r: &mut StateReader) -> Result<PaletteMemory, CoreError> {
        let mut p = PaletteMemory::new();
        p.index_reg = r.u8()?;
        for i in 0..32 {
            let c = r.u16()?;
            p.set_colour(i, c);
        }
        Ok(p)
    }

    /// PyBoy's index register fields (value, auto-increment, colour index, high byte).
    pub fn pyboy_index_fields(&self) -> (u8, u8, u8, u8) {
        (
            self.index_reg,
            self.index_reg >> 7,
            (self.index_reg >> 1) & 0x1F,
            self.index_reg & 1,
        )
    }

    /// Restore from PyBoy's fields: the index register value and the 32 colours.
    pub fn set_raw(&mut self, index_reg: u8, colours: &[u16; 32]) {
        self.index_reg = index_reg;
        for (i, c) in colours.iter().enumerate() {
            self.set_colour(i, *c);
        }
    }

    pub fn colours(&self) -> &[u16; 32] {
        &self.colours
    }
}

/// PyBoy's default colours for a DMG game on Game Boy Color hardware (its
/// `cgb_color_palette`): background, object palette 0, object palette 1, as RGBA words.
pub const COMPAT_RGBA: [[u32; 4]; 3] = [
    [
        rgba_of_rgb24(0xFFFFFF),
        rgba_of_rgb24(0x7BFF31),
        rgba_of_rgb24(0x0063C5),
        rgba_of_rgb24(0x000000),
    ],
    [
        rgba_of_rgb24(0xFFFFFF),
        rgba_of_rgb24(0xFF8484),
        rgba_of_rgb24(0x943A3A),
        rgba_of_rgb24(0x000000),
    ],
    [
        rgba_of_rgb24(0xFFFFFF),
        rgba_of_rgb24(0xFF8484),
        rgba_of_rgb24(0x943A3A),
        rgba_of_rgb24(0x000000),
    ],
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_increment_wraps_and_keeps_bit7() {
        let mut p = PaletteMemory::new();
        p.write_index(0xBE); // colour 31, low byte, auto-increment
        p.write_data(0x12);
        assert_eq!(p.read_index(), 0xFF);
        p.write_data(0x34);
        assert_eq!(p.colour(7, 3), 0x3412);
        // 0xBF + 1 = 0xC0: index 0 again, bit 6 carried into the stored value.
        assert_eq!(p.read_index(), 0xC0);
        p.write_data(0xFF);
        assert_eq!(p.colour(0, 0) & 0xFF, 0xFF);
    }

    #[test]
    fn no_increment_without_bit7() {
        let mut p = PaletteMemory::new();
        p.write_index(0x03);
        p.write_data(0x7F);
        assert_eq!(p.read_index(), 0x43);
        assert_eq!(p.read_data(), 0x7F);
        assert_eq!(p.colour(0, 1), 0x7F19);
    }

    /// The planes hold exactly the bytes of `rgba` and `grey`.
    fn assert_planes_in_step(p: &PaletteMemory) {
        for i in 0..32 {
            let [r, g, b, a] = p.rgba()[i].to_ne_bytes();
            assert_eq!(a, 0xFF, "colour {i}");
            assert_eq!(p.grey()[i], luma(p.rgba()[i]), "colour {i}");
            assert_eq!(
                [
                    p.planes()[0][i],
                    p.planes()[1][i],
                    p.planes()[2][i],
                    p.planes()[3][i]
                ],
                [r, g, b, p.grey()[i]],
                "colour {i}"
            );
            assert_eq!(p.rgba()[i], rgba_of(p.colours()[i]), "colour {i}");
        }
    }

    #[test]
    fn planes_follow_every_colour_change() {
        let mut next = crate::test_rng::xorshift(0x2545_F491_4F6C_DD1D);
        let mut p = PaletteMemory::new();
        assert_planes_in_step(&p);
        for _ in 0..500 {
            // Random index (auto-increment or not) and a run of data writes.
            p.write_index(next() as u8);
            for _ in 0..(next() % 80) {
                p.write_data(next() as u8);
            }
            assert_planes_in_step(&p);
        }
        // The writes did change the colours.
        assert_ne!(p.colours(), PaletteMemory::new().colours());

        // State save and load.
        let mut w = StateWriter::new();
        p.save_state(&mut w);
        let bytes = w.buf;
        let mut r = StateReader::new(&bytes);
        let q = PaletteMemory::load_state(&mut r).unwrap();
        assert_eq!(q.colours(), p.colours());
        assert_eq!(q.planes(), p.planes());
        assert_planes_in_step(&q);

        // Restore from PyBoy's fields.
        let mut raw = [0u16; 32];
        for c in raw.iter_mut() {
            *c = next() as u16;
        }
        let mut q = PaletteMemory::new();
        q.set_raw(0x85, &raw);
        assert_eq!(q.colours(), &raw);
        assert_planes_in_step(&q);
    }

    #[test]
    fn colour_conversion() {
        // red 31, green 0, blue 16
        assert_eq!(rgba_of(0x401F).to_ne_bytes(), [0xF8, 0, 0x80, 0xFF]);
        assert_eq!(rgba_of(0xFFFF).to_ne_bytes(), [0xF8, 0xF8, 0xF8, 0xFF]);
        assert_eq!(COMPAT_RGBA[0][1].to_ne_bytes(), [0x7B, 0xFF, 0x31, 0xFF]);
    }
}
