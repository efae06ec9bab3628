//! The joypad register P1 (FF00) and the joypad interrupt (Pan Docs: "Joypad Input").
//!
//! Matched to PyBoy 2.8.1: the value read from P1 is computed when the program writes the
//! select bits, not when it reads, so a button pressed after the write shows only after the
//! next write. With one group selected, the select bits read back as 0.

use crate::state::{StateReader, StateWriter};
use crate::CoreError;

pub mod pyboy_state;

/// Buttons as bit masks of [`Joypad::pressed`]: low nibble the d-pad, high nibble the buttons.
pub mod button {
    pub const RIGHT: u8 = 1 << 0;
    pub const LEFT: u8 = 1 << 1;
    pub const UP: u8 = 1 << 2;
    pub const DOWN: u8 = 1 << 3;
    pub const A: u8 = 1 << 4;
    pub const B: u8 = 1 << 5;
    pub const SELECT: u8 = 1 << 6;
    pub const START: u8 = 1 << 7;
}

/// Names in the order of the bits above (the names PyBoy's `button()` accepts).
pub const BUTTON_NAMES: [&str; 8] = ["right", "left", "up", "down", "a", "b", "select", "start"];

#[derive(Clone, Debug)]
pub struct Joypad {
    /// Bit set = held down.
    pressed: u8,
    /// P1 as the program will read it.
    p1: u8,
}

impl Default for Joypad {
    fn default() -> Self {
        Self::new()
    }
}

impl Joypad {
    pub fn new() -> Self {
        Joypad { pressed: 0, p1: 0 }
    }

    pub fn pressed(&self) -> u8 {
        self.pressed
    }

    /// Set the held buttons. Returns true when a button went down (joypad interrupt).
    pub fn set_pressed(&mut self, pressed: u8) -> bool {
        let newly_down = pressed & !self.pressed;
        self.pressed = pressed;
        newly_down != 0
    }

    pub fn read(&self) -> u8 {
        self.p1
    }

    pub fn write(&mut self, value: u8) {
        let dpad = !self.pressed & 0x0F;
        let buttons = !(self.pressed >> 4) & 0x0F;
        let select_dpad = value & 0x10 == 0;
        let select_buttons = value & 0x20 == 0;
        self.p1 = match (select_dpad, select_buttons) {
            (true, false) => 0xC0 | dpad,
            (false, true) => 0xC0 | buttons,
            // Neither or both groups: PyBoy shows no lines pulled low.
            _ => 0xCF,
        };
    }

    pub fn save_state(&self, w: &mut StateWriter) {
        w.u8(self.pressed);
        w.u8(self.p1);
    }

    pub fn load_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.pressed = r.u8()?;
        self.p1 = r.u8()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn press_shows_after_next_select_write() {
        let mut j = Joypad::new();
        j.write(0x20); // select d-pad
        assert_eq!(j.read(), 0xCF);
        assert!(j.set_pressed(button::LEFT | button::A));
        assert_eq!(j.read(), 0xCF, "value is latched at write time");
        j.write(0x20);
        assert_eq!(j.read(), 0xC0 | 0b1101);
        j.write(0x10);
        assert_eq!(j.read(), 0xC0 | 0b1110);
        j.write(0x30);
        assert_eq!(j.read(), 0xCF);
        j.write(0x00);
        assert_eq!(j.read(), 0xCF);
    }

    #[test]
    fn interrupt_only_on_press() {
        let mut j = Joypad::new();
        assert!(j.set_pressed(button::START));
        assert!(!j.set_pressed(button::START));
        assert!(!j.set_pressed(0));
        assert!(j.set_pressed(button::DOWN));
    }
}
