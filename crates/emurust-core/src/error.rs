//! Errors the core reports to its callers (the Python bindings turn them into exceptions).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// The ROM image cannot be used (empty, truncated, oversized, bad header, unsupported MBC).
    Rom(String),
    /// A save state is corrupt, truncated, from another ROM or from another format version.
    State(String),
    /// A boot ROM image has the wrong size.
    BootRom(String),
    /// Battery-backed cartridge RAM of the wrong size or for a cartridge without RAM.
    CartridgeRam(String),
    /// Any other argument a caller passed is out of range.
    InvalidArgument(String),
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::Rom(m) => write!(f, "invalid ROM: {m}"),
            CoreError::State(m) => write!(f, "invalid save state: {m}"),
            CoreError::BootRom(m) => write!(f, "invalid boot ROM: {m}"),
            CoreError::CartridgeRam(m) => write!(f, "invalid cartridge RAM: {m}"),
            CoreError::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
        }
    }
}

impl std::error::Error for CoreError {}
