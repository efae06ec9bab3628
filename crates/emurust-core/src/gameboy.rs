//! STUB
pub struct GameBoy;
