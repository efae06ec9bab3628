//! The SM83 CPU (the Game Boy's Sharp LR35902 core).
//!
//! The CPU knows nothing of the Game Boy's memory map or devices: it drives a [`Bus`],
//! one call per M-cycle, in the order the hardware does. The same code runs on the full
//! system bus and on a flat 64 KiB test bus.
//!
//! Design notes:
//! - One `match` on the opcode per instruction; the operand register of the regular
//!   blocks (LD r,r', ALU A,r, INC/DEC r, CB ops) is decoded from the opcode bits as in
//!   the Pan Docs opcode table (`B C D E H L (HL) A` = 0..7).
//! - Every M-cycle is exactly one bus call: `fetch` for opcode/immediate bytes, `read`
//!   and `write` for data, `idle` for internal cycles. The per-instruction sequences
//!   follow the SM83 M-cycle breakdown (Pan Docs "CPU Instruction Set" timings, checked
//!   against the SingleStepTests vectors cycle by cycle).
//! - Interrupt dispatch, HALT wake-up and STOP are the system's business; `step` only
//!   reports them through [`Step`].

use std::mem::offset_of;

/// One call per M-cycle.
pub trait Bus {
    /// Fetch of an opcode or an immediate operand byte at `addr` (an "r-m" M-cycle).
    fn fetch(&mut self, addr: u16) -> u8;
    /// The two fetches of a little-endian 16-bit immediate at `addr` and `addr + 1`, in that
    /// order (a bus that serves both bytes from one place may read them together).
    #[inline(always)]
    fn fetch_word(&mut self, addr: u16) -> u16 {
        let lo = self.fetch(addr);
        let hi = self.fetch(addr.wrapping_add(1));
        u16::from_le_bytes([lo, hi])
    }
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
    /// RETI (0xD9) decoded: called right after `decoded`, before its stack reads. A hook of
    /// its own so that `decoded` needs no test for it.
    #[inline(always)]
    fn reti(&mut self) {}
    /// EI armed its delayed enable (`ei_delay` went from 0 to 2, before this instruction's
    /// countdown). Lets a system that runs instructions without the countdown
    /// ([`Cpu::step_plain`]) hand the next ones back to [`Cpu::step`].
    #[inline(always)]
    fn ei(&mut self) {}
    /// A relative jump went back to `head` by `offset` (JR e, or JR cc,e taken): lets the
    /// plain loop hand short loops to their fast path (`gameboy::short_loop`).
    #[inline(always)]
    fn branched_back(&mut self, _head: u16, _offset: u8) {}
}

/// Each pair's low register first (`repr(C)`), so that a pair is one 16-bit load or store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Registers {
    pub f: u8,
    pub a: u8,
    pub c: u8,
    pub b: u8,
    pub e: u8,
    pub d: u8,
    pub l: u8,
    pub h: u8,
    pub sp: u16,
    pub pc: u16,
}

// Each pair's high register right after its low one (what `Registers::pair` reads).
const _: () = assert!(
    offset_of!(Registers, b) == offset_of!(Registers, c) + 1
        && offset_of!(Registers, d) == offset_of!(Registers, e) + 1
        && offset_of!(Registers, h) == offset_of!(Registers, l) + 1
);

/// Flag bits of F (Pan Docs "CPU Registers and Flags"); the low nibble always reads 0.
pub const FLAG_Z: u8 = 0x80;
pub const FLAG_N: u8 = 0x40;
pub const FLAG_H: u8 = 0x20;
pub const FLAG_C: u8 = 0x10;

impl Registers {
    /// The pair whose low register is at `lo` (an offset in `Registers`; the high one
    /// follows it): one 16-bit load.
    #[inline(always)]
    fn pair(&self, lo: usize) -> u16 {
        debug_assert!(lo + 2 <= offset_of!(Registers, sp));
        // SAFETY: `lo` and `lo + 1` are u8 fields of this repr(C) struct, read through a
        // pointer to all of it.
        u16::from_le(unsafe {
            (self as *const Self)
                .cast::<u8>()
                .add(lo)
                .cast::<u16>()
                .read_unaligned()
        })
    }

    /// Set the pair whose low register is at `lo` (see [`Registers::pair`]).
    #[inline(always)]
    fn set_pair(&mut self, lo: usize, v: u16) {
        debug_assert!(lo + 2 <= offset_of!(Registers, sp));
        // SAFETY: as in `pair`, through a pointer to the whole struct, borrowed mutably.
        unsafe {
            (self as *mut Self)
                .cast::<u8>()
                .add(lo)
                .cast::<u16>()
                .write_unaligned(v.to_le())
        }
    }

    #[inline(always)]
    pub fn af(&self) -> u16 {
        u16::from_be_bytes([self.a, self.f])
    }
    #[inline(always)]
    pub fn bc(&self) -> u16 {
        self.pair(offset_of!(Registers, c))
    }
    #[inline(always)]
    pub fn de(&self) -> u16 {
        self.pair(offset_of!(Registers, e))
    }
    #[inline(always)]
    pub fn hl(&self) -> u16 {
        self.pair(offset_of!(Registers, l))
    }
    /// Sets AF; the low nibble of F does not exist in hardware and is dropped.
    #[inline(always)]
    pub fn set_af(&mut self, v: u16) {
        self.a = (v >> 8) as u8;
        self.f = (v as u8) & 0xF0;
    }
    #[inline(always)]
    pub fn set_bc(&mut self, v: u16) {
        self.set_pair(offset_of!(Registers, c), v);
    }
    #[inline(always)]
    pub fn set_de(&mut self, v: u16) {
        self.set_pair(offset_of!(Registers, e), v);
    }
    #[inline(always)]
    pub fn set_hl(&mut self, v: u16) {
        self.set_pair(offset_of!(Registers, l), v);
    }
    #[inline(always)]
    fn carry(&self) -> u8 {
        (self.f >> 4) & 1
    }
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
    /// With [`Cpu::brk`] set, opcode 0xDB is PyBoy's breakpoint (`OPCODE_BRK`): nothing was
    /// done, PC still points past the opcode byte (the system puts it back) and EI's
    /// countdown has not run. Only used for `hook_register`; see `GameBoy::run_to_break`.
    Break,
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
    /// Treat 0xDB as a breakpoint ([`Step::Break`]) instead of an illegal opcode. Not machine
    /// state: it is a property of the host (set while any PyBoy-style hook is registered).
    pub brk: bool,
    /// LD B,B (0x40) executions, the "breakpoint" of emulator test ROMs (not part of save
    /// states; a debugging aid only).
    pub ld_b_b: LdBB,
}

/// What [`Cpu::ld_b_b`] records: LD B,B is a no-op that test suites (mooneye, SameSuite, age,
/// Mealybug Tearoom, acid2) execute when a test ends, with the result in the registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LdBB {
    /// LD B,B instructions executed since power-on.
    pub count: u32,
    /// Address of the first one and the registers when it executed (PC: that address).
    pub first: Option<(u16, Registers)>,
}

/// True for the 11 opcodes with no defined behaviour (Pan Docs: they hang the CPU).
#[inline(always)]
pub const fn is_illegal_opcode(op: u8) -> bool {
    matches!(
        op,
        0xD3 | 0xDB | 0xDD | 0xE3 | 0xE4 | 0xEB | 0xEC | 0xED | 0xF4 | 0xFC | 0xFD
    )
}

/// Invoke macro `$m` with the 256 byte values as literals (match arms that specialise code per
/// opcode need literal patterns).
macro_rules! every_byte {
    ($m:ident) => {
        $m!(
            0x00 0x01 0x02 0x03 0x04 0x05 0x06 0x07 0x08 0x09 0x0A 0x0B 0x0C 0x0D 0x0E 0x0F
            0x10 0x11 0x12 0x13 0x14 0x15 0x16 0x17 0x18 0x19 0x1A 0x1B 0x1C 0x1D 0x1E 0x1F
            0x20 0x21 0x22 0x23 0x24 0x25 0x26 0x27 0x28 0x29 0x2A 0x2B 0x2C 0x2D 0x2E 0x2F
            0x30 0x31 0x32 0x33 0x34 0x35 0x36 0x37 0x38 0x39 0x3A 0x3B 0x3C 0x3D 0x3E 0x3F
            0x40 0x41 0x42 0x43 0x44 0x45 0x46 0x47 0x48 0x49 0x4A 0x4B 0x4C 0x4D 0x4E 0x4F
            0x50 0x51 0x52 0x53 0x54 0x55 0x56 0x57 0x58 0x59 0x5A 0x5B 0x5C 0x5D 0x5E 0x5F
            0x60 0x61 0x62 0x63 0x64 0x65 0x66 0x67 0x68 0x69 0x6A 0x6B 0x6C 0x6D 0x6E 0x6F
            0x70 0x71 0x72 0x73 0x74 0x75 0x76 0x77 0x78 0x79 0x7A 0x7B 0x7C 0x7D 0x7E 0x7F
            0x80 0x81 0x82 0x83 0x84 0x85 0x86 0x87 0x88 0x89 0x8A 0x8B 0x8C 0x8D 0x8E 0x8F
            0x90 0x91 0x92 0x93 0x94 0x95 0x96 0x97 0x98 0x99 0x9A 0x9B 0x9C 0x9D 0x9E 0x9F
            0xA0 0xA1 0xA2 0xA3 0xA4 0xA5 0xA6 0xA7 0xA8 0xA9 0xAA 0xAB 0xAC 0xAD 0xAE 0xAF
            0xB0 0xB1 0xB2 0xB3 0xB4 0xB5 0xB6 0xB7 0xB8 0xB9 0xBA 0xBB 0xBC 0xBD 0xBE 0xBF
            0xC0 0xC1 0xC2 0xC3 0xC4 0xC5 0xC6 0xC7 0xC8 0xC9 0xCA 0xCB 0xCC 0xCD 0xCE 0xCF
            0xD0 0xD1 0xD2 0xD3 0xD4 0xD5 0xD6 0xD7 0xD8 0xD9 0xDA 0xDB 0xDC 0xDD 0xDE 0xDF
            0xE0 0xE1 0xE2 0xE3 0xE4 0xE5 0xE6 0xE7 0xE8 0xE9 0xEA 0xEB 0xEC 0xED 0xEE 0xEF
            0xF0 0xF1 0xF2 0xF3 0xF4 0xF5 0xF6 0xF7 0xF8 0xF9 0xFA 0xFB 0xFC 0xFD 0xFE 0xFF
        )
    };
}

impl Cpu {
    pub fn new() -> Self {
        Self::default()
    }

    /// Execute one whole instruction at PC (opcode fetch included), then run EI's countdown.
    /// Interrupt dispatch and HALT wake-up are the system's business, not this function's.
    #[inline(always)]
    pub fn step<B: Bus>(&mut self, bus: &mut B) -> Step {
        if self.locked {
            bus.idle();
            return Step::Locked;
        }
        let mut pc = self.r.pc;
        let op = self.fetch_byte(bus, &mut pc);
        let outcome = self.dispatch(bus, op, &mut pc);
        self.r.pc = pc;
        if matches!(outcome, Step::Locked | Step::Break) {
            // The illegal opcode never completes, so EI's countdown does not advance (for a
            // breakpoint the system decides).
            return outcome;
        }
        // EI's delayed enable ticks once per completed instruction (EI itself included),
        // so IME turns on after the instruction that follows EI.
        if self.ei_delay > 0 {
            self.ei_delay -= 1;
            if self.ei_delay == 0 {
                self.ime = true;
            }
        }
        outcome
    }

    /// [`Cpu::step`] for a CPU that is not locked and has no EI countdown under way
    /// (`ei_delay == 0`): the same instruction without those two tests. An EI executed here
    /// leaves `ei_delay` at 2 with its first countdown still to apply (the caller, told by
    /// [`Bus::ei`], applies it); an illegal opcode locks the CPU as in `step`.
    ///
    /// The PC is the caller's `pc`, not `self.r.pc` (left as it was): a loop of these keeps
    /// it in a register across instructions and stores it once when it stops (nothing the
    /// bus calls can read the CPU's registers).
    #[inline(always)]
    pub fn step_plain<B: Bus>(&mut self, bus: &mut B, pc: &mut u16) -> Step {
        debug_assert!(!self.locked && self.ei_delay == 0);
        let op = self.fetch_byte(bus, pc);
        self.dispatch(bus, op, pc)
    }

    // ----- bus helpers -------------------------------------------------------------

    #[inline(always)]
    fn fetch_byte<B: Bus>(&mut self, bus: &mut B, pc: &mut u16) -> u8 {
        let v = bus.fetch(*pc);
        *pc = pc.wrapping_add(1);
        v
    }

    /// Little-endian 16-bit immediate: low byte first (two fetch cycles). PC is stored once
    /// (the bus never sees it).
    #[inline(always)]
    fn fetch_word<B: Bus>(&mut self, bus: &mut B, pc: &mut u16) -> u16 {
        let at = *pc;
        let v = bus.fetch_word(at);
        *pc = at.wrapping_add(2);
        v
    }

    /// Two write cycles: high byte at SP-1, then low byte at SP-2.
    #[inline(always)]
    fn push_word<B: Bus>(&mut self, bus: &mut B, v: u16) {
        let [hi, lo] = v.to_be_bytes();
        self.r.sp = self.r.sp.wrapping_sub(1);
        bus.write(self.r.sp, hi);
        self.r.sp = self.r.sp.wrapping_sub(1);
        bus.write(self.r.sp, lo);
    }

    /// Two read cycles: low byte at SP, then high byte at SP+1.
    #[inline(always)]
    fn pop_word<B: Bus>(&mut self, bus: &mut B) -> u16 {
        let lo = bus.read(self.r.sp);
        self.r.sp = self.r.sp.wrapping_add(1);
        let hi = bus.read(self.r.sp);
        self.r.sp = self.r.sp.wrapping_add(1);
        u16::from_le_bytes([lo, hi])
    }

    // ----- operand decoding -------------------------------------------------------

    /// 8-bit operand by its 3-bit code (B C D E H L (HL) A); code 6 costs a read cycle.
    #[inline(always)]
    pub(crate) fn get_r8<B: Bus>(&mut self, bus: &mut B, code: u8) -> u8 {
        match code & 7 {
            0 => self.r.b,
            1 => self.r.c,
            2 => self.r.d,
            3 => self.r.e,
            4 => self.r.h,
            5 => self.r.l,
            6 => bus.read(self.r.hl()),
            _ => self.r.a,
        }
    }

    /// Store to an 8-bit operand by its 3-bit code; code 6 costs a write cycle.
    #[inline(always)]
    pub(crate) fn set_r8<B: Bus>(&mut self, bus: &mut B, code: u8, v: u8) {
        match code & 7 {
            0 => self.r.b = v,
            1 => self.r.c = v,
            2 => self.r.d = v,
            3 => self.r.e = v,
            4 => self.r.h = v,
            5 => self.r.l = v,
            6 => bus.write(self.r.hl(), v),
            _ => self.r.a = v,
        }
    }

    /// 16-bit register pair by its 2-bit code (BC DE HL SP).
    #[inline(always)]
    fn get_rr(&self, code: u8) -> u16 {
        match code & 3 {
            0 => self.r.bc(),
            1 => self.r.de(),
            2 => self.r.hl(),
            _ => self.r.sp,
        }
    }

    #[inline(always)]
    fn set_rr(&mut self, code: u8, v: u16) {
        match code & 3 {
            0 => self.r.set_bc(v),
            1 => self.r.set_de(v),
            2 => self.r.set_hl(v),
            _ => self.r.sp = v,
        }
    }

    /// Branch condition by its 2-bit code (NZ Z NC C).
    #[inline(always)]
    pub(crate) fn condition(&self, code: u8) -> bool {
        let f = self.r.f;
        match code & 3 {
            0 => f & FLAG_Z == 0,
            1 => f & FLAG_Z != 0,
            2 => f & FLAG_C == 0,
            _ => f & FLAG_C != 0,
        }
    }

    // ----- arithmetic ---------------------------------------------------------------

    /// The eight accumulator operations (ADD ADC SUB SBC AND XOR OR CP) by 3-bit code.
    #[inline(always)]
    pub(crate) fn alu(&mut self, kind: u8, v: u8) {
        let a = self.r.a;
        match kind & 7 {
            0 => self.r.a = self.add8(a, v, 0),
            1 => {
                let c = self.r.carry();
                self.r.a = self.add8(a, v, c);
            }
            2 => self.r.a = self.sub8(a, v, 0),
            3 => {
                let c = self.r.carry();
                self.r.a = self.sub8(a, v, c);
            }
            4 => {
                let res = a & v;
                self.r.a = res;
                self.r.f = zero_flag(res) | FLAG_H;
            }
            5 => {
                let res = a ^ v;
                self.r.a = res;
                self.r.f = zero_flag(res);
            }
            6 => {
                let res = a | v;
                self.r.a = res;
                self.r.f = zero_flag(res);
            }
            _ => {
                self.sub8(a, v, 0);
            }
        }
    }

    /// a + v + carry_in, setting all four flags.
    #[inline(always)]
    fn add8(&mut self, a: u8, v: u8, carry_in: u8) -> u8 {
        let wide = a as u16 + v as u16 + carry_in as u16;
        let res = wide as u8;
        // Bit 4 of a^v^res is the carry into bit 4 (half carry).
        let half = (a ^ v ^ res) & 0x10;
        self.r.f = zero_flag(res) | (half << 1) | (((wide >> 8) as u8) << 4);
        res
    }

    /// a - v - carry_in, setting all four flags (also used by CP, which drops the result).
    #[inline(always)]
    fn sub8(&mut self, a: u8, v: u8, carry_in: u8) -> u8 {
        let wide = (a as u16)
            .wrapping_sub(v as u16)
            .wrapping_sub(carry_in as u16);
        let res = wide as u8;
        // Bit 4 of a^v^res is the borrow out of bit 3.
        let half = (a ^ v ^ res) & 0x10;
        // Bit 8 of the 16-bit difference is set exactly when it borrowed.
        let borrow = ((wide >> 8) as u8) & 1;
        self.r.f = zero_flag(res) | FLAG_N | (half << 1) | (borrow << 4);
        res
    }

    #[inline(always)]
    fn inc8(&mut self, v: u8) -> u8 {
        let res = v.wrapping_add(1);
        let half = if res & 0x0F == 0 { FLAG_H } else { 0 };
        self.r.f = (self.r.f & FLAG_C) | zero_flag(res) | half;
        res
    }

    #[inline(always)]
    pub(crate) fn dec8(&mut self, v: u8) -> u8 {
        let res = v.wrapping_sub(1);
        let half = if v & 0x0F == 0 { FLAG_H } else { 0 };
        self.r.f = (self.r.f & FLAG_C) | zero_flag(res) | FLAG_N | half;
        res
    }

    /// ADD HL,rr: Z kept, N cleared, H from bit 11, C from bit 15.
    #[inline(always)]
    pub(crate) fn add_hl(&mut self, v: u16) {
        let hl = self.r.hl();
        let (res, carry) = hl.overflowing_add(v);
        let half = ((hl & 0x0FFF) + (v & 0x0FFF)) > 0x0FFF;
        self.r.f = (self.r.f & FLAG_Z)
            | (if half { FLAG_H } else { 0 })
            | (if carry { FLAG_C } else { 0 });
        self.r.set_hl(res);
    }

    /// SP + signed offset as used by ADD SP,e and LD HL,SP+e: Z and N cleared, H and C
    /// come from the unsigned addition of the low bytes.
    #[inline(always)]
    fn sp_plus_offset(&mut self, e: u8) -> u16 {
        let sp = self.r.sp;
        let res = sp.wrapping_add(e as i8 as u16);
        let low = sp as u8;
        let half = ((low & 0x0F) + (e & 0x0F)) & 0x10;
        let carry = (low as u16 + e as u16) > 0xFF;
        self.r.f = (half << 1) | (if carry { FLAG_C } else { 0 });
        res
    }

    /// DAA: adjust A to packed BCD after an addition or subtraction (Pan Docs "DAA").
    #[inline(always)]
    fn daa(&mut self) {
        let f = self.r.f;
        let mut a = self.r.a;
        let mut carry = f & FLAG_C != 0;
        if f & FLAG_N == 0 {
            let mut adj = 0u8;
            if f & FLAG_H != 0 || a & 0x0F > 0x09 {
                adj |= 0x06;
            }
            if carry || a > 0x99 {
                adj |= 0x60;
                carry = true;
            }
            a = a.wrapping_add(adj);
        } else {
            let mut adj = 0u8;
            if f & FLAG_H != 0 {
                adj |= 0x06;
            }
            if carry {
                adj |= 0x60;
            }
            a = a.wrapping_sub(adj);
        }
        self.r.a = a;
        self.r.f = zero_flag(a) | (f & FLAG_N) | (if carry { FLAG_C } else { 0 });
    }

    /// The CB-prefixed rotate/shift/swap group (CB 00-3F) by its 3-bit code:
    /// RLC RRC RL RR SLA SRA SWAP SRL. Z from the result, N=H=0, C the bit shifted out.
    #[inline(always)]
    fn rotate_shift(&mut self, kind: u8, v: u8) -> u8 {
        let cin = self.r.carry();
        let (res, cout) = match kind & 7 {
            0 => (v.rotate_left(1), v >> 7),
            1 => (v.rotate_right(1), v & 1),
            2 => ((v << 1) | cin, v >> 7),
            3 => ((v >> 1) | (cin << 7), v & 1),
            4 => (v << 1, v >> 7),
            5 => ((v >> 1) | (v & 0x80), v & 1),
            6 => (v.rotate_left(4), 0),
            _ => (v >> 1, v & 1),
        };
        self.r.f = zero_flag(res) | (cout << 4);
        res
    }

    // ----- execution ------------------------------------------------------------------

    /// [`Cpu::execute`] specialised per opcode: each arm runs it with a constant opcode, so
    /// the operand codes (registers, conditions, ALU and rotate kinds) fold away and one
    /// jump dispatches an instruction, instead of the opcode's plus its operands' (whose
    /// indirect branches mispredict most of the interpreter's time away).
    #[inline(always)]
    fn dispatch<B: Bus>(&mut self, bus: &mut B, op: u8, pc: &mut u16) -> Step {
        macro_rules! specialised {
            ($($n:literal)*) => {
                match op {
                    $($n => {
                        // A CB prefix reports its opcode after the second fetch.
                        if $n != 0xCB {
                            bus.decoded($n);
                        }
                        self.execute(bus, $n, pc)
                    })*
                }
            };
        }
        every_byte!(specialised)
    }

    /// [`Cpu::execute_cb`] specialised per opcode (see [`Cpu::dispatch`]).
    #[inline(always)]
    fn dispatch_cb<B: Bus>(&mut self, bus: &mut B, cb: u8) {
        macro_rules! specialised {
            ($($n:literal)*) => { match cb { $($n => self.execute_cb(bus, $n),)* } };
        }
        every_byte!(specialised)
    }

    /// Everything after the opcode fetch of a base opcode.
    #[inline(always)]
    fn execute<B: Bus>(&mut self, bus: &mut B, op: u8, pc: &mut u16) -> Step {
        match op {
            0x00 => {}
            // LD rr,nn
            0x01 | 0x11 | 0x21 | 0x31 => {
                let v = self.fetch_word(bus, pc);
                self.set_rr(op >> 4, v);
            }
            // LD (BC),A / LD (DE),A
            0x02 => bus.write(self.r.bc(), self.r.a),
            0x12 => bus.write(self.r.de(), self.r.a),
            // LD (HL+),A / LD (HL-),A
            0x22 => {
                let hl = self.r.hl();
                bus.write(hl, self.r.a);
                self.r.set_hl(hl.wrapping_add(1));
            }
            0x32 => {
                let hl = self.r.hl();
                bus.write(hl, self.r.a);
                self.r.set_hl(hl.wrapping_sub(1));
            }
            // INC rr / DEC rr: one internal cycle, no flags.
            0x03 | 0x13 | 0x23 | 0x33 => {
                bus.idle();
                let code = op >> 4;
                let v = self.get_rr(code).wrapping_add(1);
                self.set_rr(code, v);
            }
            0x0B | 0x1B | 0x2B | 0x3B => {
                bus.idle();
                let code = op >> 4;
                let v = self.get_rr(code).wrapping_sub(1);
                self.set_rr(code, v);
            }
            // INC r / INC (HL)
            0x04 | 0x0C | 0x14 | 0x1C | 0x24 | 0x2C | 0x34 | 0x3C => {
                let code = op >> 3;
                let v = self.get_r8(bus, code);
                let res = self.inc8(v);
                self.set_r8(bus, code, res);
            }
            // DEC r / DEC (HL)
            0x05 | 0x0D | 0x15 | 0x1D | 0x25 | 0x2D | 0x35 | 0x3D => {
                let code = op >> 3;
                let v = self.get_r8(bus, code);
                let res = self.dec8(v);
                self.set_r8(bus, code, res);
            }
            // LD r,n / LD (HL),n
            0x06 | 0x0E | 0x16 | 0x1E | 0x26 | 0x2E | 0x36 | 0x3E => {
                let v = self.fetch_byte(bus, pc);
                self.set_r8(bus, op >> 3, v);
            }
            // Accumulator rotates: like the CB forms but Z is always cleared.
            0x07 | 0x0F | 0x17 | 0x1F => {
                let res = self.rotate_shift(op >> 3, self.r.a);
                self.r.a = res;
                self.r.f &= FLAG_C;
            }
            // LD (nn),SP
            0x08 => {
                let addr = self.fetch_word(bus, pc);
                let [hi, lo] = self.r.sp.to_be_bytes();
                bus.write(addr, lo);
                bus.write(addr.wrapping_add(1), hi);
            }
            // ADD HL,rr
            0x09 | 0x19 | 0x29 | 0x39 => {
                bus.idle();
                let v = self.get_rr(op >> 4);
                self.add_hl(v);
            }
            0x0A => self.r.a = bus.read(self.r.bc()),
            0x1A => self.r.a = bus.read(self.r.de()),
            0x2A => {
                let hl = self.r.hl();
                self.r.a = bus.read(hl);
                self.r.set_hl(hl.wrapping_add(1));
            }
            0x3A => {
                let hl = self.r.hl();
                self.r.a = bus.read(hl);
                self.r.set_hl(hl.wrapping_sub(1));
            }
            // STOP: the system decides what it means; the vectors show two internal
            // cycles after the opcode and PC advanced by one.
            0x10 => {
                bus.idle();
                bus.idle();
                self.stopped = true;
                return Step::Stop;
            }
            // JR e
            0x18 => {
                let e = self.fetch_byte(bus, pc);
                bus.idle();
                *pc = pc.wrapping_add(e as i8 as u16);
                bus.branched_back(*pc, e);
            }
            // JR cc,e: the internal cycle only when taken.
            0x20 | 0x28 | 0x30 | 0x38 => {
                let e = self.fetch_byte(bus, pc);
                if self.condition(op >> 3) {
                    bus.idle();
                    *pc = pc.wrapping_add(e as i8 as u16);
                    bus.branched_back(*pc, e);
                }
            }
            0x27 => self.daa(),
            // CPL
            0x2F => {
                self.r.a = !self.r.a;
                self.r.f |= FLAG_N | FLAG_H;
            }
            // SCF
            0x37 => self.r.f = (self.r.f & FLAG_Z) | FLAG_C,
            // CCF
            0x3F => self.r.f = (self.r.f & (FLAG_Z | FLAG_C)) ^ FLAG_C,
            // HALT: like STOP, two internal cycles in the vectors; the system handles the rest.
            0x76 => {
                bus.idle();
                bus.idle();
                self.halted = true;
                return Step::Halt;
            }
            // LD B,B: no effect on the machine; counted (see `LdBB`).
            0x40 => {
                if self.ld_b_b.count == 0 {
                    let mut at = self.r;
                    at.pc = pc.wrapping_sub(1);
                    self.ld_b_b.first = Some((at.pc, at));
                }
                self.ld_b_b.count = self.ld_b_b.count.wrapping_add(1);
            }
            // LD r,r' / LD r,(HL) / LD (HL),r (LD B,B above)
            0x41..=0x7F => {
                let v = self.get_r8(bus, op);
                self.set_r8(bus, op >> 3, v);
            }
            // ALU A,r / ALU A,(HL)
            0x80..=0xBF => {
                let v = self.get_r8(bus, op);
                self.alu(op >> 3, v);
            }
            // RET cc: an internal cycle to test the condition, another after the pops.
            0xC0 | 0xC8 | 0xD0 | 0xD8 => {
                bus.idle();
                if self.condition(op >> 3) {
                    let to = self.pop_word(bus);
                    bus.idle();
                    *pc = to;
                }
            }
            // POP rr (AF drops F's low nibble)
            0xC1 | 0xD1 | 0xE1 => {
                let v = self.pop_word(bus);
                self.set_rr(op >> 4, v);
            }
            0xF1 => {
                let v = self.pop_word(bus);
                self.r.set_af(v);
            }
            // JP cc,nn
            0xC2 | 0xCA | 0xD2 | 0xDA => {
                let nn = self.fetch_word(bus, pc);
                if self.condition(op >> 3) {
                    bus.idle();
                    *pc = nn;
                }
            }
            0xC3 => {
                let nn = self.fetch_word(bus, pc);
                bus.idle();
                *pc = nn;
            }
            // CALL cc,nn
            0xC4 | 0xCC | 0xD4 | 0xDC => {
                let nn = self.fetch_word(bus, pc);
                if self.condition(op >> 3) {
                    bus.idle();
                    self.push_word(bus, *pc);
                    *pc = nn;
                }
            }
            0xCD => {
                let nn = self.fetch_word(bus, pc);
                bus.idle();
                self.push_word(bus, *pc);
                *pc = nn;
            }
            // PUSH rr: an internal cycle (SP pre-decrement), then two writes.
            0xC5 | 0xD5 | 0xE5 => {
                bus.idle();
                let v = self.get_rr(op >> 4);
                self.push_word(bus, v);
            }
            0xF5 => {
                bus.idle();
                self.push_word(bus, self.r.af());
            }
            // ALU A,n
            0xC6 | 0xCE | 0xD6 | 0xDE | 0xE6 | 0xEE | 0xF6 | 0xFE => {
                let v = self.fetch_byte(bus, pc);
                self.alu(op >> 3, v);
            }
            // RST n
            0xC7 | 0xCF | 0xD7 | 0xDF | 0xE7 | 0xEF | 0xF7 | 0xFF => {
                bus.idle();
                self.push_word(bus, *pc);
                *pc = (op & 0x38) as u16;
            }
            0xC9 => {
                let to = self.pop_word(bus);
                bus.idle();
                *pc = to;
            }
            // RETI: IME on at once (no EI-style delay), and any pending EI is dropped.
            0xD9 => {
                bus.reti();
                let to = self.pop_word(bus);
                bus.idle();
                *pc = to;
                self.ime = true;
                self.ei_delay = 0;
            }
            0xCB => {
                let cb = self.fetch_byte(bus, pc);
                bus.decoded(0x100 | cb as u16);
                self.dispatch_cb(bus, cb);
            }
            // LDH (n),A / LDH A,(n) / LDH (C),A / LDH A,(C)
            0xE0 => {
                let n = self.fetch_byte(bus, pc);
                bus.write(0xFF00 | n as u16, self.r.a);
            }
            0xF0 => {
                let n = self.fetch_byte(bus, pc);
                self.r.a = bus.read(0xFF00 | n as u16);
            }
            0xE2 => bus.write(0xFF00 | self.r.c as u16, self.r.a),
            0xF2 => self.r.a = bus.read(0xFF00 | self.r.c as u16),
            // ADD SP,e: two internal cycles.
            0xE8 => {
                let e = self.fetch_byte(bus, pc);
                bus.idle();
                bus.idle();
                self.r.sp = self.sp_plus_offset(e);
            }
            // LD HL,SP+e: one internal cycle.
            0xF8 => {
                let e = self.fetch_byte(bus, pc);
                bus.idle();
                let v = self.sp_plus_offset(e);
                self.r.set_hl(v);
            }
            // JP HL: no extra cycle.
            0xE9 => *pc = self.r.hl(),
            // LD SP,HL: one internal cycle.
            0xF9 => {
                bus.idle();
                self.r.sp = self.r.hl();
            }
            // LD (nn),A / LD A,(nn)
            0xEA => {
                let nn = self.fetch_word(bus, pc);
                bus.write(nn, self.r.a);
            }
            0xFA => {
                let nn = self.fetch_word(bus, pc);
                self.r.a = bus.read(nn);
            }
            0xF3 => {
                self.ime = false;
                self.ei_delay = 0;
            }
            0xFB => {
                if self.ei_delay == 0 {
                    self.ei_delay = 2;
                    bus.ei();
                }
            }
            // PyBoy's breakpoint opcode, while hooks are registered.
            0xDB if self.brk => return Step::Break,
            // D3 DB DD E3 E4 EB EC ED F4 FC FD: the CPU hangs.
            _ => {
                self.locked = true;
                return Step::Locked;
            }
        }
        Step::Normal
    }

    /// Everything after the second fetch of a CB-prefixed opcode.
    #[inline(always)]
    fn execute_cb<B: Bus>(&mut self, bus: &mut B, cb: u8) {
        let target = cb & 7;
        let bit = (cb >> 3) & 7;
        let v = self.get_r8(bus, target);
        match cb >> 6 {
            0 => {
                let res = self.rotate_shift(bit, v);
                self.set_r8(bus, target, res);
            }
            // BIT: Z = tested bit clear, N=0, H=1, C kept. No write-back.
            1 => {
                let z = if v & (1 << bit) == 0 { FLAG_Z } else { 0 };
                self.r.f = (self.r.f & FLAG_C) | FLAG_H | z;
            }
            2 => self.set_r8(bus, target, v & !(1 << bit)),
            _ => self.set_r8(bus, target, v | (1 << bit)),
        }
    }
}

#[inline(always)]
const fn zero_flag(v: u8) -> u8 {
    if v == 0 {
        FLAG_Z
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sst::{CycleKind, FlatBus};

    /// A CPU + flat bus with `code` placed at 0xC000 and PC there.
    fn setup(code: &[u8]) -> (Cpu, FlatBus) {
        let mut bus = FlatBus::new();
        for (i, &b) in code.iter().enumerate() {
            bus.mem[0xC000 + i] = b;
        }
        let mut cpu = Cpu::new();
        cpu.r.pc = 0xC000;
        cpu.r.sp = 0xFFFE;
        (cpu, bus)
    }

    fn flags(z: bool, n: bool, h: bool, c: bool) -> u8 {
        (z as u8) << 7 | (n as u8) << 6 | (h as u8) << 5 | (c as u8) << 4
    }

    /// Reference 8-bit arithmetic written from the flag definitions in signed/unsigned
    /// integer terms, independent of the bit tricks used by the CPU.
    fn reference_alu(kind: u8, a: u8, b: u8, cin: bool) -> (u8, u8) {
        let (a32, b32, c32) = (a as i32, b as i32, cin as i32);
        match kind {
            0 | 1 => {
                let c = if kind == 1 { c32 } else { 0 };
                let sum = a32 + b32 + c;
                let r = (sum & 0xFF) as u8;
                let h = (a32 & 15) + (b32 & 15) + c > 15;
                (r, flags(r == 0, false, h, sum > 255))
            }
            2 | 3 | 7 => {
                let c = if kind == 3 { c32 } else { 0 };
                let diff = a32 - b32 - c;
                let r = (diff & 0xFF) as u8;
                let h = (a32 & 15) - (b32 & 15) - c < 0;
                let res = if kind == 7 { a } else { r };
                (res, flags(r == 0, true, h, diff < 0))
            }
            4 => (a & b, flags(a & b == 0, false, true, false)),
            5 => (a ^ b, flags(a ^ b == 0, false, false, false)),
            _ => (a | b, flags(a | b == 0, false, false, false)),
        }
    }

    #[test]
    fn alu_register_forms_match_reference_over_all_inputs() {
        // ADD ADC SUB SBC AND XOR OR CP with B as operand (0x80 + 8*kind), every A, B and
        // incoming carry; the other incoming flags must not matter.
        for kind in 0..8u8 {
            let op = 0x80 | (kind << 3);
            for a in 0..=255u8 {
                for b in 0..=255u8 {
                    for cin in [false, true] {
                        let (mut cpu, mut bus) = setup(&[op]);
                        cpu.r.a = a;
                        cpu.r.b = b;
                        cpu.r.f = if cin {
                            FLAG_C | FLAG_Z | FLAG_N
                        } else {
                            FLAG_H
                        };
                        assert_eq!(cpu.step(&mut bus), Step::Normal);
                        let (r, f) = reference_alu(kind, a, b, cin);
                        assert_eq!(
                            (cpu.r.a, cpu.r.f),
                            (r, f),
                            "op {op:02X} a={a:02X} b={b:02X} c={cin}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn alu_immediate_and_hl_forms_agree_with_register_form() {
        for kind in 0..8u8 {
            for (a, b) in [
                (0x00, 0x00),
                (0x0F, 0x01),
                (0xF0, 0x10),
                (0x3C, 0xC4),
                (0x80, 0xFF),
            ] {
                let (r, f) = reference_alu(kind, a, b, true);
                // A,n
                let (mut cpu, mut bus) = setup(&[0xC6 | (kind << 3), b]);
                cpu.r.a = a;
                cpu.r.f = FLAG_C;
                cpu.step(&mut bus);
                assert_eq!((cpu.r.a, cpu.r.f, cpu.r.pc), (r, f, 0xC002));
                // A,(HL)
                let (mut cpu, mut bus) = setup(&[0x86 | (kind << 3)]);
                cpu.r.a = a;
                cpu.r.f = FLAG_C;
                cpu.r.set_hl(0xD000);
                bus.mem[0xD000] = b;
                cpu.step(&mut bus);
                assert_eq!((cpu.r.a, cpu.r.f), (r, f));
                assert_eq!(bus.log.len(), 2);
                assert_eq!(bus.log[1].kind, CycleKind::Read);
            }
        }
    }

    /// DAA as described in Pan Docs ("DAA": the adjustment depends on N, H, C and the
    /// nibbles of A), written as a separate decision table.
    fn reference_daa(a: u8, n: bool, h: bool, c: bool) -> (u8, u8) {
        let lo = a & 0x0F;
        let mut out_c = c;
        let result = if !n {
            let mut correction = 0u16;
            if h || lo > 9 {
                correction += 0x06;
            }
            if c || a > 0x99 {
                correction += 0x60;
                out_c = true;
            }
            ((a as u16 + correction) & 0xFF) as u8
        } else {
            let mut correction = 0i16;
            if h {
                correction += 0x06;
            }
            if c {
                correction += 0x60;
            }
            ((a as i16 - correction) & 0xFF) as u8
        };
        (result, flags(result == 0, n, false, out_c))
    }

    #[test]
    fn daa_matches_reference_for_every_a_and_flag_combination() {
        for a in 0..=255u8 {
            for fl in 0..16u8 {
                let f = fl << 4;
                let (mut cpu, mut bus) = setup(&[0x27]);
                cpu.r.a = a;
                cpu.r.f = f;
                cpu.step(&mut bus);
                let want = reference_daa(a, f & FLAG_N != 0, f & FLAG_H != 0, f & FLAG_C != 0);
                assert_eq!((cpu.r.a, cpu.r.f), want, "a={a:02X} f={f:02X}");
            }
        }
    }

    #[test]
    fn daa_after_bcd_add_and_sub_gives_bcd() {
        for x in 0..100u8 {
            for y in 0..100u8 {
                let bx = (x / 10) << 4 | (x % 10);
                let by = (y / 10) << 4 | (y % 10);
                // ADD A,B ; DAA
                let (mut cpu, mut bus) = setup(&[0x80, 0x27]);
                cpu.r.a = bx;
                cpu.r.b = by;
                cpu.step(&mut bus);
                cpu.step(&mut bus);
                let s = (x as u16 + y as u16) % 100;
                assert_eq!(cpu.r.a, ((s / 10) << 4 | (s % 10)) as u8);
                assert_eq!(cpu.r.f & FLAG_C != 0, x as u16 + y as u16 >= 100);
                // SUB A,B ; DAA
                let (mut cpu, mut bus) = setup(&[0x90, 0x27]);
                cpu.r.a = bx;
                cpu.r.b = by;
                cpu.step(&mut bus);
                cpu.step(&mut bus);
                let d = (x as i16 - y as i16).rem_euclid(100);
                assert_eq!(cpu.r.a, ((d / 10) << 4 | (d % 10)) as u8);
                assert_eq!(cpu.r.f & FLAG_C != 0, x < y);
            }
        }
    }

    #[test]
    fn inc_dec_8bit_flags_over_all_values() {
        for v in 0..=255u8 {
            for cin in [0, FLAG_C] {
                let (mut cpu, mut bus) = setup(&[0x04, 0x0D]); // INC B ; DEC C
                cpu.r.b = v;
                cpu.r.c = v;
                cpu.r.f = cin | FLAG_N;
                cpu.step(&mut bus);
                let r = v.wrapping_add(1);
                assert_eq!(cpu.r.b, r);
                assert_eq!(cpu.r.f, flags(r == 0, false, v & 15 == 15, cin != 0));
                cpu.r.f = cin;
                cpu.step(&mut bus);
                let r = v.wrapping_sub(1);
                assert_eq!(cpu.r.c, r);
                assert_eq!(cpu.r.f, flags(r == 0, true, v & 15 == 0, cin != 0));
            }
        }
    }

    #[test]
    fn inc_dec_16bit_wrap_and_leave_flags() {
        for (op, code) in [(0x03u8, 0u8), (0x13, 1), (0x23, 2), (0x33, 3)] {
            let (mut cpu, mut bus) = setup(&[op, op + 8]);
            cpu.set_rr(code, 0xFFFF);
            cpu.r.f = 0xA0;
            cpu.step(&mut bus);
            assert_eq!(cpu.get_rr(code), 0x0000);
            assert_eq!(cpu.r.f, 0xA0);
            assert_eq!(bus.log.len(), 2);
            assert_eq!(bus.log[1].kind, CycleKind::Idle);
            cpu.step(&mut bus); // DEC rr
            assert_eq!(cpu.get_rr(code), 0xFFFF);
            assert_eq!(cpu.r.f, 0xA0);
        }
    }

    #[test]
    fn add_hl_and_sp_offset_flags() {
        for &(hl, v) in &[
            (0x0FFFu16, 0x0001u16),
            (0xFFFF, 0x0001),
            (0x1234, 0x4321),
            (0x8000, 0x8000),
        ] {
            let (mut cpu, mut bus) = setup(&[0x09]);
            cpu.r.set_hl(hl);
            cpu.r.set_bc(v);
            cpu.r.f = FLAG_Z | FLAG_N;
            cpu.step(&mut bus);
            let sum = hl as u32 + v as u32;
            assert_eq!(cpu.r.hl(), sum as u16);
            let h = (hl & 0xFFF) + (v & 0xFFF) > 0xFFF;
            assert_eq!(cpu.r.f, flags(true, false, h, sum > 0xFFFF));
        }
        for sp in [0x0000u16, 0x00FF, 0x0F0F, 0xFFF8, 0x1234] {
            for e in 0..=255u8 {
                let (mut cpu, mut bus) = setup(&[0xE8, e, 0xF8, e]);
                cpu.r.sp = sp;
                cpu.r.f = 0xF0;
                cpu.step(&mut bus);
                let want = (sp as i32 + e as i8 as i32) as u16;
                let h = (sp & 0xF) + (e as u16 & 0xF) > 0xF;
                let c = (sp & 0xFF) + e as u16 > 0xFF;
                assert_eq!((cpu.r.sp, cpu.r.f), (want, flags(false, false, h, c)));
                cpu.r.sp = sp;
                cpu.step(&mut bus);
                assert_eq!(
                    (cpu.r.hl(), cpu.r.sp, cpu.r.f),
                    (want, sp, flags(false, false, h, c))
                );
            }
        }
    }

    #[test]
    fn push_pop_round_trip_all_pairs() {
        // PUSH BC, PUSH DE, PUSH HL, PUSH AF, then POP in reverse into other pairs.
        let (mut cpu, mut bus) = setup(&[0xC5, 0xD5, 0xE5, 0xF5, 0xC1, 0xD1, 0xE1, 0xF1]);
        cpu.r.set_bc(0x1234);
        cpu.r.set_de(0x5678);
        cpu.r.set_hl(0x9ABC);
        cpu.r.a = 0xDE;
        cpu.r.f = 0xF0;
        cpu.r.sp = 0x0002; // wraps below zero
        for _ in 0..4 {
            cpu.step(&mut bus);
        }
        assert_eq!(cpu.r.sp, 0xFFFA);
        assert_eq!(bus.mem[0x0001], 0x12);
        assert_eq!(bus.mem[0x0000], 0x34);
        assert_eq!(bus.mem[0xFFFB], 0xDE);
        assert_eq!(bus.mem[0xFFFA], 0xF0);
        bus.mem[0x0000] = 0x3F; // POP AF pops this as F: the low nibble must be dropped
        for _ in 0..4 {
            cpu.step(&mut bus);
        }
        assert_eq!(cpu.r.sp, 0x0002);
        assert_eq!(cpu.r.bc(), 0xDEF0);
        assert_eq!(cpu.r.de(), 0x9ABC);
        assert_eq!(cpu.r.hl(), 0x5678);
        assert_eq!(cpu.r.af(), 0x1230);
        // POP AF from 0x..FF
        let (mut cpu, mut bus) = setup(&[0xF1]);
        cpu.r.sp = 0xD000;
        bus.mem[0xD000] = 0xFF;
        bus.mem[0xD001] = 0x42;
        cpu.step(&mut bus);
        assert_eq!((cpu.r.a, cpu.r.f), (0x42, 0xF0));
    }

    #[test]
    fn illegal_opcodes_lock_without_panicking_and_keep_idling() {
        for op in [
            0xD3u8, 0xDB, 0xDD, 0xE3, 0xE4, 0xEB, 0xEC, 0xED, 0xF4, 0xFC, 0xFD,
        ] {
            assert!(is_illegal_opcode(op));
            let (mut cpu, mut bus) = setup(&[op, 0x00]);
            cpu.ei_delay = 1;
            assert_eq!(cpu.step(&mut bus), Step::Locked);
            assert!(cpu.locked);
            assert_eq!(bus.log.len(), 1);
            let regs = cpu.r;
            for i in 0..10 {
                assert_eq!(cpu.step(&mut bus), Step::Locked);
                assert_eq!(bus.log.len(), 2 + i);
                assert_eq!(bus.log[1 + i].kind, CycleKind::Idle);
            }
            assert_eq!(cpu.r, regs);
            assert!(!cpu.ime);
        }
        let legal = (0..=255u8).filter(|&op| !is_illegal_opcode(op)).count();
        assert_eq!(legal, 245);
    }

    #[test]
    fn ei_enables_after_the_following_instruction_and_di_reti_cancel() {
        // EI ; NOP ; NOP
        let (mut cpu, mut bus) = setup(&[0xFB, 0x00, 0x00]);
        cpu.step(&mut bus);
        assert!(!cpu.ime);
        assert_eq!(cpu.ei_delay, 1);
        cpu.step(&mut bus);
        assert!(cpu.ime);
        assert_eq!(cpu.ei_delay, 0);
        // EI ; DI
        let (mut cpu, mut bus) = setup(&[0xFB, 0xF3]);
        cpu.step(&mut bus);
        cpu.step(&mut bus);
        assert!(!cpu.ime);
        assert_eq!(cpu.ei_delay, 0);
        // EI ; EI ; NOP: the second EI does not restart the delay.
        let (mut cpu, mut bus) = setup(&[0xFB, 0xFB, 0x00]);
        cpu.step(&mut bus);
        cpu.step(&mut bus);
        assert!(cpu.ime);
        // RETI sets IME at once and clears a pending EI.
        let (mut cpu, mut bus) = setup(&[0xFB, 0xD9]);
        cpu.r.sp = 0xD000;
        bus.mem[0xD000] = 0x34;
        bus.mem[0xD001] = 0x12;
        cpu.step(&mut bus);
        cpu.step(&mut bus);
        assert!(cpu.ime);
        assert_eq!(cpu.ei_delay, 0);
        assert_eq!(cpu.r.pc, 0x1234);
    }

    #[test]
    fn conditional_branches_take_the_right_number_of_cycles() {
        // (opcode, bytes, cycles when taken, cycles when not taken); condition Z.
        let cases: &[(u8, usize, usize)] = &[
            (0x28, 3, 2), // JR Z
            (0xCA, 4, 3), // JP Z
            (0xCC, 6, 3), // CALL Z
            (0xC8, 5, 2), // RET Z
        ];
        for &(op, taken, not_taken) in cases {
            for (z, want) in [(true, taken), (false, not_taken)] {
                let (mut cpu, mut bus) = setup(&[op, 0x10, 0x20]);
                cpu.r.sp = 0xD000;
                cpu.r.f = if z { FLAG_Z } else { 0 };
                cpu.step(&mut bus);
                assert_eq!(bus.log.len(), want, "op {op:02X} z={z}");
            }
        }
    }

    #[test]
    fn ld_b_b_is_a_no_op_that_is_recorded() {
        // LD C,5; LD B,B; INC B; LD B,B
        let (mut cpu, mut bus) = setup(&[0x0E, 0x05, 0x40, 0x04, 0x40]);
        cpu.r.b = 0x42;
        cpu.step(&mut bus);
        assert_eq!(cpu.ld_b_b, LdBB::default());
        let before = cpu.r;
        bus.log.clear();
        cpu.step(&mut bus);
        assert_eq!((cpu.r.b, cpu.r.f, cpu.r.pc), (0x42, before.f, 0xC003));
        assert_eq!(bus.log.len(), 1, "one fetch, nothing else");
        assert_eq!(cpu.ld_b_b.count, 1);
        assert_eq!(cpu.ld_b_b.first, Some((0xC002, before)));
        cpu.step(&mut bus);
        cpu.step(&mut bus);
        assert_eq!(cpu.ld_b_b.count, 2);
        assert_eq!(
            cpu.ld_b_b.first.unwrap().1.c,
            5,
            "the first one's registers are kept"
        );
    }

    #[test]
    fn decoded_is_reported_after_the_opcode_bytes() {
        struct Probe {
            mem: [u8; 4],
            events: Vec<(char, u16)>,
        }
        impl Bus for Probe {
            fn fetch(&mut self, addr: u16) -> u8 {
                self.events.push(('f', addr));
                self.mem[addr as usize & 3]
            }
            fn read(&mut self, addr: u16) -> u8 {
                self.events.push(('r', addr));
                0
            }
            fn write(&mut self, addr: u16, _v: u8) {
                self.events.push(('w', addr));
            }
            fn idle(&mut self) {
                self.events.push(('i', 0));
            }
            fn decoded(&mut self, op: u16) {
                self.events.push(('d', op));
            }
        }
        let mut cpu = Cpu::new();
        let mut p = Probe {
            mem: [0xCB, 0x46, 0, 0],
            events: vec![],
        };
        cpu.r.set_hl(0x8000);
        cpu.step(&mut p); // BIT 0,(HL)
        assert_eq!(
            p.events,
            vec![('f', 0), ('f', 1), ('d', 0x146), ('r', 0x8000)]
        );
        let mut cpu = Cpu::new();
        let mut p = Probe {
            mem: [0xFA, 0x34, 0x12, 0],
            events: vec![],
        };
        cpu.step(&mut p); // LD A,(nn)
        assert_eq!(
            p.events,
            vec![('f', 0), ('d', 0xFA), ('f', 1), ('f', 2), ('r', 0x1234)]
        );
    }

    #[test]
    fn cb_ops_on_memory_read_then_write() {
        for cb in 0..=255u8 {
            if cb & 7 != 6 {
                continue;
            }
            let (mut cpu, mut bus) = setup(&[0xCB, cb]);
            cpu.r.set_hl(0xD000);
            bus.mem[0xD000] = 0x5A;
            cpu.step(&mut bus);
            let kinds: Vec<_> = bus.log.iter().map(|c| c.kind).collect();
            if cb >> 6 == 1 {
                assert_eq!(
                    kinds,
                    vec![CycleKind::Read, CycleKind::Read, CycleKind::Read]
                );
            } else {
                assert_eq!(
                    kinds,
                    vec![
                        CycleKind::Read,
                        CycleKind::Read,
                        CycleKind::Read,
                        CycleKind::Write
                    ]
                );
            }
        }
    }
}
