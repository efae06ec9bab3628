//! A small, explicit binary format for save states: little-endian fields written in a fixed
//! order by each component. No reflection, no allocation per field.

use crate::CoreError;

pub struct StateWriter {
    pub buf: Vec<u8>,
}

impl StateWriter {
    pub fn new() -> Self {
        StateWriter { buf: Vec::with_capacity(64 * 1024) }
    }
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn bool(&mut self, v: bool) {
        self.buf.push(v as u8);
    }
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.buf.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    /// Length-prefixed byte block.
    pub fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.buf.extend_from_slice(v);
    }
}

impl Default for StateWriter {
    fn default() -> Self {
        Self::new()
    }
}

pub struct StateReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> StateReader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        StateReader { data, pos: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], CoreError> {
        if self.data.len() - self.pos < n {
            return Err(CoreError::State(format!(
                "truncated: needed {n} more bytes at offset {}, only {} left",
                self.pos,
                self.data.len() - self.pos
            )));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, CoreError> {
        Ok(self.take(1)?[0])
    }
    pub fn bool(&mut self) -> Result<bool, CoreError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(CoreError::State(format!("corrupt boolean {v} at offset {}", self.pos - 1))),
        }
    }
    pub fn u16(&mut self) -> Result<u16, CoreError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    pub fn u32(&mut self) -> Result<u32, CoreError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    pub fn u64(&mut self) -> Result<u64, CoreError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    pub fn i64(&mut self) -> Result<i64, CoreError> {
        Ok(i64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    pub fn f64(&mut self) -> Result<f64, CoreError> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// Length-prefixed block that must be exactly `expected` bytes long.
    pub fn bytes_exact(&mut self, expected: usize) -> Result<&'a [u8], CoreError> {
        let n = self.u32()? as usize;
        if n != expected {
            return Err(CoreError::State(format!("block of {n} bytes where {expected} expected")));
        }
        self.take(n)
    }
    /// Length-prefixed block of any length up to `max`.
    pub fn bytes_max(&mut self, max: usize) -> Result<&'a [u8], CoreError> {
        let n = self.u32()? as usize;
        if n > max {
            return Err(CoreError::State(format!("block of {n} bytes exceeds the {max} allowed")));
        }
        self.take(n)
    }
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
}
