//! Helpers shared by the integration tests that run one program two ways and compare.

use emurust_core::gameboy::GameBoy;

/// The two machines' save states are the same; otherwise panic with `at` and the first byte
/// where they differ.
pub fn assert_same_state(at: &str, a: &GameBoy, b: &GameBoy) {
    let (a, b) = (a.save_state(), b.save_state());
    if a != b {
        let pos = a.iter().zip(&b).position(|(x, y)| x != y);
        panic!("{at}: states differ at byte {pos:?} of {}", a.len());
    }
}
