//! Helpers shared by the integration tests that run one program two ways and compare.

use std::sync::Arc;

use emurust_core::gameboy::{GameBoy, Options};

/// A machine running `rom`, from power-on or from `state` (a PyBoy 2.8.1 state) if given.
// Not every test binary that includes this module starts from states.
#[allow(dead_code)]
pub fn machine(rom: &Arc<[u8]>, state: Option<&[u8]>, options: Options) -> GameBoy {
    match state {
        None => GameBoy::with_options(rom.clone(), None, options),
        Some(s) => GameBoy::from_pyboy_state(rom.clone(), options, s),
    }
    .unwrap()
}

/// The two machines' save states are the same; otherwise panic with `at` and the first byte
/// where they differ.
pub fn assert_same_state(at: &str, a: &GameBoy, b: &GameBoy) {
    let (a, b) = (a.save_state(), b.save_state());
    if a != b {
        let pos = a.iter().zip(&b).position(|(x, y)| x != y);
        panic!("{at}: states differ at byte {pos:?} of {}", a.len());
    }
}
