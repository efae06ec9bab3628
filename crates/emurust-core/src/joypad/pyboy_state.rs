//! The joypad in a PyBoy 2.8.1 save state. PyBoy keeps it in two places: the P1 value the
//! program reads (in its I/O register block, latched at the last P1 write) and, in its own
//! section, the held buttons as two active-low nibbles: d-pad (right, left, up, down in bits
//! 0-3) and buttons (A, B, Select, Start).

use super::Joypad;
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// Byte length of PyBoy's joypad ("interaction") section.
pub const PYBOY_JOYPAD_SECTION_LEN: usize = 2;

impl Joypad {
    /// The P1 value as PyBoy stores it in its I/O register block.
    pub fn pyboy_p1(&self) -> u8 {
        self.p1
    }

    pub fn save_pyboy(&self, w: &mut StateWriter) {
        w.u8(!self.pressed & 0x0F);
        w.u8(!(self.pressed >> 4) & 0x0F);
    }

    /// A joypad from PyBoy's section and the latched P1 value.
    pub fn load_pyboy(r: &mut StateReader, p1: u8) -> Result<Joypad, CoreError> {
        let (dpad, buttons) = (r.u8()?, r.u8()?);
        if dpad > 0x0F || buttons > 0x0F {
            return Err(CoreError::State(format!(
                "PyBoy joypad: button nibbles {dpad:#04x}/{buttons:#04x} out of range"
            )));
        }
        Ok(Joypad {
            pressed: (!dpad & 0x0F) | ((!buttons & 0x0F) << 4),
            p1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::button;
    use super::*;

    #[test]
    fn round_trip() {
        let mut j = Joypad::new();
        j.set_pressed(button::LEFT | button::START);
        j.write(0x20);
        let mut w = StateWriter::new();
        j.save_pyboy(&mut w);
        assert_eq!(w.buf, [0x0D, 0x07]);
        let k = Joypad::load_pyboy(&mut StateReader::new(&w.buf), j.pyboy_p1()).unwrap();
        assert_eq!(k.pressed(), j.pressed());
        assert_eq!(k.read(), j.read());
    }
}
