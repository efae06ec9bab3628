//! emurust-core: a Game Boy (DMG) and Game Boy Color emulator core that behaves exactly like
//! PyBoy 2.8.1 (see [`gameboy::select_hardware`] for which one runs a cartridge).
//!
//! The crate has no Python dependency. It is split like the hardware: one module per
//! component, wired together by [`gameboy::GameBoy`], which owns the system bus and the
//! scheduler that decides when devices catch up with the CPU.
//!
//! Time is counted in T-cycles (4.194304 MHz clock ticks) since power-on, as a `u64`.

pub mod apu;
pub mod cartridge;
pub mod cpu;
pub mod data_access_by_cycle;
pub mod error;
pub mod gameboy;
pub mod hdma;
pub mod interrupts;
pub mod joypad;
pub mod lcd;
pub mod postboot;
pub mod pyboy_timing;
pub mod serial;
pub mod sst;
pub mod state;
pub mod timer;

#[cfg(test)]
mod test_rng;

pub use error::CoreError;
pub use gameboy::GameBoy;
