//! The SM83 CPU (STUB: the CPU helper replaces this file; the interface below is fixed).
//!
//! The CPU knows nothing of the Game Boy's memory map or devices: it drives a [`Bus`],
//! one call per M-cycle, in the order the hardware does. The same code runs on the full
//! system bus and on a flat 64 KiB test bus.

/// One call per M-cycle.
pub trait Bus {
    /// Fetch of an opcode or an immediate operand byte at `addr` (an "r-m" M-cycle).
    fn fetch(&mut self, addr: u16) -> u8;
    /// Data read (an "r-m" M-cycle).
    fn read(&mut self, addr: u16) -> u8;
    /// Data write (a "-wm" M-cycle).
    fn write(&mut self, addr: u16, value: u8);
    /// Internal M-cycle with no memory access ("---").
    fn idle(&mut self);
    /// Called once per instruction, after its opcode byte(s) were fetched:
    /// 0x000-0x0FF base opcodes, 0x100-0x1FF CB-prefixed ones.
    #[inline(always)]
    fn decoded(&mut self, _opcode: u16) {}
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Registers {
    pub a: u8,
    pub f: u8,
    pub b: u8,
    pub c: u8,
    pub d: u8,
    pub e: u8,
    pub h: u8,
    pub l: u8,
    pub sp: u16,
    pub pc: u16,
}

/// What the instruction just executed asks of the system around the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Normal,
    /// HALT (0x76) was executed; `Cpu::halted` is set.
    Halt,
    /// STOP (0x10) was executed.
    Stop,
    /// One of the 11 illegal opcodes locked the CPU (now or earlier); `Cpu::locked` is set.
    Locked,
}

#[derive(Clone, Debug, Default)]
pub struct Cpu {
    pub r: Registers,
    /// Interrupt master enable.
    pub ime: bool,
    /// EI's delayed enable, counted in instructions: EI sets it to 2 (if 0); it drops by one
    /// after every instruction and IME is set when it reaches 0 (so IME is on after the
    /// instruction that follows EI). DI and RETI clear it.
    pub ei_delay: u8,
    pub halted: bool,
    pub stopped: bool,
    /// Set by an illegal opcode; the CPU then only idles.
    pub locked: bool,
}

impl Cpu {
    pub fn new() -> Self {
        Self::default()
    }

    /// Execute one whole instruction at PC (opcode fetch included), then run EI's countdown.
    /// Interrupt dispatch and HALT wake-up are the system's business, not this function's.
    pub fn step<B: Bus>(&mut self, bus: &mut B) -> Step {
        let _ = bus;
        Step::Normal
    }
}
