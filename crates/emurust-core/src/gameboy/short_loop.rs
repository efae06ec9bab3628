//! Short loops run without the interpreter: the delay, fill and copy loops games run every
//! frame (clearing a shadow OAM before building it, copying a buffer, waiting a few dozen
//! cycles), each a handful of instructions ending in a branch back to its head.
//!
//! When the plain loop takes a short branch back to an instruction that can head such a loop
//! ([`loop_back_hint`], from [`PlainBus`](super::plain_bus::PlainBus)), the slice hands the
//! loop to [`GameBoy::run_short_loop`], which recognises its shape from its bytes in ROM and
//! runs whole iterations in Rust, each doing what the interpreter would: the same registers,
//! flags and memory, the same clock, instruction count and PC trace, and the same starts of
//! the last two instructions (the LCD's deferral reads them). It stops before an iteration
//! whose last instruction would start at or after the slice's end, and before one that would
//! touch memory other than work RAM and HRAM (and ROM, read): no device sees those accesses,
//! so none needs its stamp, and nothing can become pending inside the slice (its end is the
//! next event). The interpreter runs the rest, the loop's exit included where it returns.
//!
//! The shapes (`r` an 8-bit register the body does not otherwise use):
//! - delay: `L: DEC r; JR NZ,L`
//! - fill: `L: LD (HL+),A | LD (HL-),A; DEC r; JR NZ,L` (r: B, C, D or E)
//! - copy: `L: LD A,(HL+); LD (DE),A; INC DE; DEC r; JR NZ,L` (r: B or C), or from DE to HL:
//!   `L: LD A,(DE); LD (HL+),A; INC DE; DEC r; JR NZ,L`
//! - long copy: the same two with `DEC BC; LD A,C | LD A,B; OR B | OR C` for `DEC r` (the usual
//!   `CopyData`), `JR NZ,L`
//! - long fill: `L: LD A,r; LD (HL+),A; DEC BC; LD A,C | LD A,B; OR B | OR C; JR NZ,L` (r: D
//!   or E)
//! - fill up to a mark: `L: CP L; RET Z; LD (HL),r; ADD HL,DE | ADD HL,BC; JR L` (a stride
//!   fill that ends when L reaches A: the first-generation Pokemon games clear their unused
//!   shadow OAM entries so every frame; r: B, C, D, E or A)

use super::{GameBoy, SystemBus};

/// `HEAD_OFFSETS[op]`: the branch offsets (bit `k` for `-(k + 3)`) with which an instruction `op`
/// heads a loop of one of the shapes: the plain loop's test before it hands a branch over.
static HEAD_OFFSETS: [u8; 256] = {
    let mut t = [0u8; 256];
    // DEC r (not (HL)): the delay loop, branch -3.
    let mut r = 0;
    while r < 8 {
        if r != 6 {
            t[0x05 | (r << 3)] |= 1 << 0;
        }
        r += 1;
    }
    // LD (HL+),A and LD (HL-),A: the fill loop, branch -4.
    t[0x22] |= 1 << 1;
    t[0x32] |= 1 << 1;
    // LD A,(HL+) and LD A,(DE): the copy loops (-6) and the long copies (-8).
    t[0x2A] |= (1 << 3) | (1 << 5);
    t[0x1A] |= (1 << 3) | (1 << 5);
    // LD A,D and LD A,E: the long fill (-7).
    t[0x7A] |= 1 << 4;
    t[0x7B] |= 1 << 4;
    // CP L: the fill up to a mark (JR -6).
    t[0xBD] |= 1 << 3;
    t
};

/// Whether a taken branch back to `head` (offset `offset`, a signed byte), where the opcode
/// `op` is, may close one of the loops here.
#[inline(always)]
pub(super) fn loop_back_hint(op: u8, offset: u8) -> bool {
    // -3..=-8 as a bit index 0..=5 (anything else lands past bit 7 or wraps high).
    let k = offset.wrapping_neg().wrapping_sub(3);
    k < 6 && HEAD_OFFSETS[op as usize] & (1 << k) != 0
}

/// The loop shapes (see the module docs), with what each iteration's instructions need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// DEC `reg`.
    Delay { reg: u8 },
    /// LD (HL+/-),A; DEC `reg`.
    Fill { reg: u8, down: bool },
    /// LD A,(HL+); LD (DE),A; INC DE; DEC `reg` (or from DE to HL+).
    Copy { reg: u8, from_de: bool },
    /// The same with DEC BC and its test.
    LongCopy { from_de: bool },
    /// LD A,`reg`; LD (HL+),A; DEC BC and its test.
    LongFill { reg: u8 },
    /// CP L; RET Z; LD (HL),`value`; ADD HL,BC or DE.
    FillToMark { value: u8, stride_bc: bool },
}

impl Shape {
    /// Each instruction's address after the head's, and start (cycles after the
    /// iteration's): one iteration that goes round.
    fn layout(self) -> (&'static [u16], &'static [u64]) {
        match self {
            Shape::Delay { .. } => (&[0, 1], &[0, 4]),
            Shape::Fill { .. } => (&[0, 1, 2], &[0, 8, 12]),
            Shape::Copy { .. } => (&[0, 1, 2, 3, 4], &[0, 8, 16, 24, 28]),
            Shape::LongCopy { .. } => (&[0, 1, 2, 3, 4, 5, 6], &[0, 8, 16, 24, 32, 36, 40]),
            Shape::LongFill { .. } => (&[0, 1, 2, 3, 4, 5], &[0, 4, 12, 20, 24, 28]),
            Shape::FillToMark { .. } => (&[0, 1, 2, 3, 4], &[0, 4, 12, 20, 28]),
        }
    }

    /// Cycles of an iteration that goes round (ends with the branch back taken).
    fn cycles(self) -> u64 {
        match self {
            Shape::Delay { .. } => 16,
            Shape::Fill { .. } => 24,
            Shape::Copy { .. } | Shape::FillToMark { .. } | Shape::LongFill { .. } => 40,
            Shape::LongCopy { .. } => 52,
        }
    }

    /// The loop's length in bytes (where the PC goes when the last branch is not taken).
    fn bytes(self) -> u16 {
        match self {
            Shape::Delay { .. } => 3,
            Shape::Fill { .. } => 4,
            Shape::Copy { .. } | Shape::FillToMark { .. } => 6,
            Shape::LongFill { .. } => 7,
            Shape::LongCopy { .. } => 8,
        }
    }
}

/// The shape of the loop whose bytes from its head are `code`, if one of those above.
fn shape_of(code: [u8; 8]) -> Option<Shape> {
    let dec_reg = |op: u8, allowed: &[u8]| {
        let reg = op >> 3;
        (op & 0xC7 == 0x05 && allowed.contains(&reg)).then_some(reg)
    };
    match code {
        [dec, 0x20, 0xFD, ..] => {
            dec_reg(dec, &[0, 1, 2, 3, 4, 5, 7]).map(|reg| Shape::Delay { reg })
        }
        [st @ (0x22 | 0x32), dec, 0x20, 0xFC, ..] => {
            dec_reg(dec, &[0, 1, 2, 3]).map(|reg| Shape::Fill {
                reg,
                down: st == 0x32,
            })
        }
        [0x2A, 0x12, 0x13, dec, 0x20, 0xFA, ..] => dec_reg(dec, &[0, 1]).map(|reg| Shape::Copy {
            reg,
            from_de: false,
        }),
        [0x1A, 0x22, 0x13, dec, 0x20, 0xFA, ..] => {
            dec_reg(dec, &[0, 1]).map(|reg| Shape::Copy { reg, from_de: true })
        }
        [0x2A, 0x12, 0x13, 0x0B, 0x79, 0xB0, 0x20, 0xF8]
        | [0x2A, 0x12, 0x13, 0x0B, 0x78, 0xB1, 0x20, 0xF8] => {
            Some(Shape::LongCopy { from_de: false })
        }
        [0x1A, 0x22, 0x13, 0x0B, 0x79, 0xB0, 0x20, 0xF8]
        | [0x1A, 0x22, 0x13, 0x0B, 0x78, 0xB1, 0x20, 0xF8] => {
            Some(Shape::LongCopy { from_de: true })
        }
        [ld @ (0x7A | 0x7B), 0x22, 0x0B, 0x79, 0xB0, 0x20, 0xF9, ..]
        | [ld @ (0x7A | 0x7B), 0x22, 0x0B, 0x78, 0xB1, 0x20, 0xF9, ..] => {
            Some(Shape::LongFill { reg: ld & 7 })
        }
        [0xBD, 0xC8, st, add @ (0x09 | 0x19), 0x18, 0xFA, ..]
            if st & 0xF8 == 0x70 && matches!(st & 7, 0 | 1 | 2 | 3 | 7) =>
        {
            Some(Shape::FillToMark {
                value: st & 7,
                stride_bc: add == 0x09,
            })
        }
        _ => None,
    }
}

impl SystemBus {
    /// How many bytes from `addr` on (upwards, or downwards with `down`) the loops here may
    /// write: work RAM or HRAM, to the end of the one `addr` is in.
    #[inline(always)]
    fn short_loop_room(addr: u16, down: bool) -> u64 {
        let (first, last) = match addr {
            0xC000..=0xDFFF => (0xC000u16, 0xDFFFu16),
            0xFF80..=0xFFFE => (0xFF80, 0xFFFE),
            _ => return 0,
        };
        if down {
            (addr - first) as u64 + 1
        } else {
            (last - addr) as u64 + 1
        }
    }

    /// How many bytes from `addr` up the loops here may read: ROM (through the window, which
    /// serves 0000-7FFF whenever it serves any), work RAM or HRAM, to the end of the one
    /// `addr` is in.
    #[inline(always)]
    fn short_loop_readable(&self, addr: u16) -> u64 {
        match addr {
            0x0000..=0x7FFF if self.rom_window.read(addr).is_some() => 0x8000 - addr as u64,
            _ => Self::short_loop_room(addr, false),
        }
    }

    /// A byte [`SystemBus::short_loop_readable`] allows.
    #[inline(always)]
    fn short_loop_read(&self, addr: u16) -> u8 {
        match addr {
            0xC000..=0xDFFF => self.wram[(addr - 0xC000) as usize],
            0xFF80..=0xFFFE => self.hram[(addr - 0xFF80) as usize],
            _ => self.rom_window.read(addr).unwrap_or(0xFF),
        }
    }

    /// How many bytes a copy from `src` up to `dst` up may move (the smaller of the two).
    #[inline(always)]
    fn short_loop_copy_room(&self, src: u16, dst: u16) -> u64 {
        self.short_loop_readable(src)
            .min(Self::short_loop_room(dst, false))
    }

    /// `k` bytes of `v` from `first` up, within what [`SystemBus::short_loop_room`] allows.
    #[inline(always)]
    fn short_loop_fill(&mut self, first: u16, k: u64, v: u8) {
        for addr in first..=first + (k as u16 - 1) {
            self.short_loop_write(addr, v);
        }
    }

    /// A byte [`SystemBus::short_loop_room`] allows.
    #[inline(always)]
    fn short_loop_write(&mut self, addr: u16, v: u8) {
        match addr {
            0xC000..=0xDFFF => self.wram[(addr - 0xC000) as usize] = v,
            0xFF80..=0xFFFE => self.hram[(addr - 0xFF80) as usize] = v,
            _ => debug_assert!(false, "a short loop writes work RAM and HRAM only"),
        }
    }
}

impl GameBoy {
    /// The loop the plain loop just branched back into (the PC at its head), run as the
    /// module docs say: whole iterations whose last instruction starts before `bound`.
    /// `traced_from`: from this cycle on the plain loop would trace its instructions
    /// (`GameBoy::pc_trace`); before it, it would leave the trace incomplete. A loop not run
    /// for what it is (not for the slice's end) is remembered
    /// (`SystemBus::short_loop_refused`): the plain loop stops handing its branches over
    /// until another loop is refused.
    #[inline(never)]
    pub(super) fn run_short_loop(&mut self, bound: u64, traced_from: u64) {
        let head = self.cpu.r.pc;
        let bus = &self.bus;
        let code: Option<[u8; 8]> = (|| {
            let mut code = [0u8; 8];
            for (k, b) in code.iter_mut().enumerate() {
                // The window serves 0000-7FFF only; a loop reaching past it is not one here.
                *b = bus.rom_window.read(head.checked_add(k as u16)?)?;
            }
            Some(code)
        })();
        let shape = match code.and_then(shape_of) {
            Some(shape) if self.may_run_wait_loop() && !bus.dma.active => shape,
            _ => {
                self.bus.short_loop_refused = head;
                return;
            }
        };
        let (offsets, starts) = shape.layout();
        let len = offsets.len();
        let cycles = shape.cycles();
        let last_start = starts[len - 1];
        let start = self.bus.cycles;
        // Iterations whose last instruction starts before `bound`.
        let fit = if bound > start + last_start {
            (bound - start - last_start - 1) / cycles + 1
        } else {
            0
        };
        let Some((iterations, exited)) = self.short_loop_iterations(shape, fit) else {
            self.bus.short_loop_refused = head;
            return;
        };
        if iterations == 0 {
            return;
        }
        // (The last branch, not taken, has no internal cycle.)
        let end = start + iterations * cycles - if exited { 4 } else { 0 };
        // The count and PC trace as the interpreter leaves them: traced where the plain loop
        // would trace (`GameBoy::skip_iterations`, as the other loop skips), else only
        // counted, the trace complete from the next instruction on (as after an untraced run).
        let count = iterations * len as u64;
        if self.pc_trace_on || end >= traced_from {
            let mut pcs = [0u16; 8];
            for (pc, offset) in pcs.iter_mut().zip(offsets) {
                *pc = head + offset;
            }
            self.skip_iterations(&pcs[..len], 0, iterations, cycles);
        } else {
            self.instructions += count;
            self.pc_trace_from = self.pc_trace_from.max(self.instructions);
        }
        let last_iteration = start + (iterations - 1) * cycles;
        self.bus.cycles = end;
        self.bus.instr_start = last_iteration + last_start;
        self.bus.prev_instr_start = last_iteration + starts[len - 2];
        self.cpu.r.pc = if exited { head + shape.bytes() } else { head };
        let stats = &mut self.wait_loop_stats;
        stats.short_loops += 1;
        stats.short_loop_instructions += count;
    }

    /// Up to `fit` iterations of `shape` from its head, done in one go: how many ran and
    /// whether the last left the loop (its branch back not taken); `None` (nothing done) if
    /// the first would reach past ROM, work RAM and HRAM. The
    /// registers, flags and memory end as the last iteration leaves them.
    fn short_loop_iterations(&mut self, shape: Shape, fit: u64) -> Option<(u64, bool)> {
        let cpu = &mut self.cpu;
        let bus = &mut self.bus;
        match shape {
            Shape::Delay { reg } => Some(Self::byte_count(cpu, bus, reg, fit)),
            Shape::Fill { reg, down } => {
                let hl = cpu.r.hl();
                let room = SystemBus::short_loop_room(hl, down);
                if room == 0 {
                    return None;
                }
                let (k, done) = Self::byte_count(cpu, bus, reg, fit.min(room));
                if k > 0 {
                    let (first, next) = if down {
                        (hl - (k as u16 - 1), hl.wrapping_sub(k as u16))
                    } else {
                        (hl, hl.wrapping_add(k as u16))
                    };
                    bus.short_loop_fill(first, k, cpu.r.a);
                    cpu.r.set_hl(next);
                }
                Some((k, done))
            }
            Shape::Copy { reg, from_de } => {
                let (src, dst) = Self::copy_ends(cpu, from_de);
                let room = bus.short_loop_copy_room(src, dst);
                if room == 0 {
                    return None;
                }
                let (k, done) = Self::byte_count(cpu, bus, reg, fit.min(room));
                if k > 0 {
                    Self::short_loop_copy(cpu, bus, src, dst, k);
                }
                Some((k, done))
            }
            Shape::LongCopy { from_de } => {
                let (src, dst) = Self::copy_ends(cpu, from_de);
                let room = bus.short_loop_copy_room(src, dst);
                if room == 0 {
                    return None;
                }
                let (k, done) = Self::long_count(cpu, fit.min(room));
                if k > 0 {
                    Self::short_loop_copy(cpu, bus, src, dst, k);
                    Self::long_count_test(cpu);
                }
                Some((k, done))
            }
            Shape::LongFill { reg } => {
                let hl = cpu.r.hl();
                let room = SystemBus::short_loop_room(hl, false);
                if room == 0 {
                    return None;
                }
                let (k, done) = Self::long_count(cpu, fit.min(room));
                if k > 0 {
                    let v = cpu.get_r8(bus, reg);
                    bus.short_loop_fill(hl, k, v);
                    cpu.r.set_hl(hl.wrapping_add(k as u16));
                    Self::long_count_test(cpu);
                }
                Some((k, done))
            }
            Shape::FillToMark { value, stride_bc } => {
                if cpu.r.a == cpu.r.l {
                    // RET Z leaves: the interpreter's (the loop is still one).
                    return Some((0, false));
                }
                let v = cpu.get_r8(bus, value);
                let stride = if stride_bc { cpu.r.bc() } else { cpu.r.de() };
                let (a, mut hl) = (cpu.r.a, cpu.r.hl());
                let mut k = 0;
                let mut last = hl;
                // Each iteration: CP L (A differs: RET Z falls through), LD (HL),r, ADD HL,rr.
                while k < fit && hl as u8 != a && SystemBus::short_loop_room(hl, false) != 0 {
                    bus.short_loop_write(hl, v);
                    last = hl;
                    hl = hl.wrapping_add(stride);
                    k += 1;
                }
                if k == 0 {
                    return if fit == 0 { Some((0, false)) } else { None };
                }
                // The flags of the last iteration's CP and ADD.
                cpu.r.set_hl(last);
                cpu.alu(7, last as u8);
                cpu.add_hl(stride);
                Some((k, false))
            }
        }
    }

    /// An 8-bit count loop (`DEC reg`) of at most `most` iterations: how many run and whether
    /// the last leaves the loop (the register reaches zero; from zero, 256 run); the register
    /// and flags as the last `DEC` leaves them (untouched when none runs).
    #[inline(always)]
    fn byte_count(
        cpu: &mut crate::cpu::Cpu,
        bus: &mut SystemBus,
        reg: u8,
        most: u64,
    ) -> (u64, bool) {
        let v = cpu.get_r8(bus, reg);
        let left = if v == 0 { 256 } else { v as u64 };
        let k = left.min(most);
        if k > 0 {
            let last = cpu.dec8(v.wrapping_sub((k - 1) as u8));
            cpu.set_r8(bus, reg, last);
        }
        (k, k == left)
    }

    /// A copy loop's source and destination: HL and DE, or DE and HL.
    #[inline(always)]
    fn copy_ends(cpu: &crate::cpu::Cpu, from_de: bool) -> (u16, u16) {
        let (hl, de) = (cpu.r.hl(), cpu.r.de());
        if from_de {
            (de, hl)
        } else {
            (hl, de)
        }
    }

    /// `k` bytes copied one at a time from `src` up to `dst` up (in order: the ranges may
    /// overlap), as the copy loops leave them: A the last byte, HL and DE past the ranges.
    #[inline(always)]
    fn short_loop_copy(cpu: &mut crate::cpu::Cpu, bus: &mut SystemBus, src: u16, dst: u16, k: u64) {
        let mut a = cpu.r.a;
        for i in 0..k as u16 {
            a = bus.short_loop_read(src + i);
            bus.short_loop_write(dst + i, a);
        }
        cpu.r.a = a;
        cpu.r.set_hl(cpu.r.hl().wrapping_add(k as u16));
        cpu.r.set_de(cpu.r.de().wrapping_add(k as u16));
    }

    /// A 16-bit count loop (`DEC BC` and its test) of at most `most` iterations: how many
    /// run and whether the last leaves the loop; BC counted down by them.
    #[inline(always)]
    fn long_count(cpu: &mut crate::cpu::Cpu, most: u64) -> (u64, bool) {
        let bc = cpu.r.bc();
        let left = if bc == 0 { 0x10000 } else { bc as u64 };
        let k = left.min(most);
        cpu.r.set_bc(bc.wrapping_sub(k as u16));
        (k, k == left)
    }

    /// `LD A,C; OR B` (or `LD A,B; OR C`: A is C | B either way), the flags from the OR.
    #[inline(always)]
    fn long_count_test(cpu: &mut crate::cpu::Cpu) {
        cpu.r.a = cpu.r.c;
        cpu.alu(6, cpu.r.b);
    }
}

#[cfg(test)]
mod tests {
    use super::{loop_back_hint, shape_of, Shape};
    use crate::gameboy::GameBoy;
    use std::sync::Arc;

    /// A 64 KiB MBC1 cartridge (for the Game Boy Color with `cgb`): RETI at the interrupt
    /// vectors, at 0150 `prelude`, then `code` and a jump back to it, bank 1 (at 4000) mapped
    /// with distinct bytes (copy sources).
    fn rom(prelude: &[u8], code: &[u8], cgb: bool) -> Arc<[u8]> {
        let mut rom = vec![0u8; 0x10000];
        for (i, b) in rom.iter_mut().enumerate().skip(0x200) {
            *b = (i as u8).wrapping_mul(7) ^ (i >> 8) as u8;
        }
        for v in [0x40, 0x48, 0x50, 0x58, 0x60] {
            rom[v] = 0xD9;
        }
        rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]);
        if cgb {
            rom[0x143] = 0x80;
        }
        rom[0x147] = 0x01;
        rom[0x148] = 0x01;
        let [lo, hi] = (0x150 + prelude.len() as u16).to_le_bytes();
        let all: Vec<u8> = [prelude, code, &[0xC3, lo, hi]].concat();
        rom[0x150..0x150 + all.len()].copy_from_slice(&all);
        rom[0x14D] = crate::cartridge::header::compute_header_checksum(&rom);
        rom.into()
    }

    /// The program at `start` (it jumps back there after the loop): `setup`, then the loop
    /// `body`; a loop that leaves through `RET Z` (the fill up to a mark) finds the address
    /// of that jump back on the stack (`LD BC,nn; PUSH BC` first).
    fn program(start: u16, setup: &[u8], body: &[u8]) -> Vec<u8> {
        if body[0] != 0xBD {
            return [setup, body].concat();
        }
        let [lo, hi] = (start + 4 + (setup.len() + body.len()) as u16).to_le_bytes();
        [&[0x01, lo, hi, 0xC5], setup, body].concat()
    }

    /// `LD HL,hl; LD DE,de; LD BC,bc; LD A,a`.
    fn setup(hl: u16, de: u16, bc: u16, a: u8) -> Vec<u8> {
        let [hl0, hl1] = hl.to_le_bytes();
        let [de0, de1] = de.to_le_bytes();
        let [bc0, bc1] = bc.to_le_bytes();
        vec![0x21, hl0, hl1, 0x11, de0, de1, 0x01, bc0, bc1, 0x3E, a]
    }

    /// Every loop shape, at the edges of what the fast path runs (counts 0, 1 and 2, work
    /// RAM's and HRAM's ends, sources in ROM across the bank boundary, in VRAM, overlapping
    /// ranges), with interrupts ending slices inside the loops: the fast path on and off
    /// leave the same machine, instruction count and PC trace at every frame, and it ran.
    /// (case, setup, loop, whether the fast path runs it)
    #[allow(clippy::type_complexity)]
    fn cases() -> Vec<(&'static str, Vec<u8>, Vec<u8>, bool)> {
        vec![
            (
                "delay B 0",
                setup(0, 0, 0x0000, 0),
                vec![0x05, 0x20, 0xFD],
                true,
            ),
            ("delay A 2", setup(0, 0, 0, 2), vec![0x3D, 0x20, 0xFD], true),
            (
                "delay C 17 then E 200",
                setup(0, 0x00C8, 0x0011, 0),
                vec![0x0D, 0x20, 0xFD, 0x1D, 0x20, 0xFD],
                true,
            ),
            (
                "fill up C000",
                setup(0xC000, 0, 0x00A0, 0x5A),
                vec![0x22, 0x0D, 0x20, 0xFC],
                true,
            ),
            (
                "fill up past DFFF",
                setup(0xDFC0, 0, 0x0080, 0x33),
                vec![0x22, 0x05, 0x20, 0xFC],
                true,
            ),
            (
                "fill down past C000",
                setup(0xC010, 0, 0x3000, 0x44),
                vec![0x32, 0x15, 0x20, 0xFC],
                true,
            ),
            (
                "fill HRAM into IE",
                setup(0xFFE0, 0, 0x0040, 0x00),
                vec![0x22, 0x05, 0x20, 0xFC],
                true,
            ),
            (
                "fill VRAM",
                setup(0x8000, 0, 0x0020, 0x11),
                vec![0x22, 0x0D, 0x20, 0xFC],
                false,
            ),
            (
                "fill count 1",
                setup(0xC100, 0, 0x0001, 0x77),
                vec![0x22, 0x0D, 0x20, 0xFC],
                false,
            ),
            (
                "copy ROM to WRAM",
                setup(0x3FC0, 0xC200, 0x0080, 0),
                vec![0x2A, 0x12, 0x13, 0x05, 0x20, 0xFA],
                true,
            ),
            (
                "copy WRAM overlapping",
                setup(0xC200, 0xC203, 0x0000, 0),
                vec![0x2A, 0x12, 0x13, 0x0D, 0x20, 0xFA],
                true,
            ),
            (
                "copy to HRAM end",
                setup(0x0400, 0xFFF0, 0x0020, 0),
                vec![0x2A, 0x12, 0x13, 0x0D, 0x20, 0xFA],
                true,
            ),
            (
                "copy from VRAM",
                setup(0x8000, 0xC000, 0x0010, 0),
                vec![0x2A, 0x12, 0x13, 0x0D, 0x20, 0xFA],
                false,
            ),
            (
                "long copy ROM",
                setup(0x7F00, 0xC400, 0x0300, 0),
                vec![0x2A, 0x12, 0x13, 0x0B, 0x79, 0xB0, 0x20, 0xF8],
                true,
            ),
            (
                "long copy into echo",
                setup(0x1000, 0xDF00, 0x0200, 0),
                vec![0x2A, 0x12, 0x13, 0x0B, 0x78, 0xB1, 0x20, 0xF8],
                true,
            ),
            (
                "copy from DE, WRAM to HRAM",
                setup(0xFF90, 0xC000, 0x0030, 0),
                vec![0x1A, 0x22, 0x13, 0x05, 0x20, 0xFA],
                true,
            ),
            (
                "long copy from DE, ROM",
                setup(0xC800, 0x3F80, 0x0101, 0),
                vec![0x1A, 0x22, 0x13, 0x0B, 0x79, 0xB0, 0x20, 0xF8],
                true,
            ),
            (
                "long fill D",
                setup(0xC900, 0x7700, 0x0234, 0),
                vec![0x7A, 0x22, 0x0B, 0x78, 0xB1, 0x20, 0xF9],
                true,
            ),
            (
                "long fill E past DFFF",
                setup(0xDF00, 0x0066, 0x0180, 0),
                vec![0x7B, 0x22, 0x0B, 0x79, 0xB0, 0x20, 0xF9],
                true,
            ),
            (
                "long fill into VRAM",
                setup(0x9800, 0x0011, 0x0040, 0),
                vec![0x7B, 0x22, 0x0B, 0x79, 0xB0, 0x20, 0xF9],
                false,
            ),
            // L from 0x00 by 4 to A = 0xA0 (a shadow OAM's clear), DE the stride.
            (
                "fill to mark",
                setup(0xC300, 0x0004, 0x00A0, 0xA0),
                vec![0xBD, 0xC8, 0x70, 0x19, 0x18, 0xFA],
                true,
            ),
            (
                "fill to mark, stride BC",
                setup(0xC300, 0, 0x0010, 0xF0),
                vec![0xBD, 0xC8, 0x77, 0x09, 0x18, 0xFA],
                true,
            ),
            (
                "fill to mark past DFFF",
                setup(0xDF80, 0x0008, 0x0011, 0x40),
                vec![0xBD, 0xC8, 0x71, 0x19, 0x18, 0xFA],
                true,
            ),
        ]
    }

    /// Every shape of `cases()` handed over at its first branch back and then cut at every
    /// cycle of a stretch (the slice's end): what the fast path and the interpreter after it
    /// leave is what the interpreter alone leaves, to the flags, the last two instructions'
    /// starts, the instruction count, the PC trace and memory.
    #[test]
    fn short_loops_cut_at_every_cycle_match_the_interpreter() {
        use crate::gameboy::BAIL_SHORT_LOOP;
        for (case, setup, body, runs) in cases() {
            let code = program(0x150, &setup, &body);
            let mut base = GameBoy::new(rom(&[], &code, false), None).unwrap();
            base.cpu.r.pc = 0x150;
            let state = base.save_state();
            let start = base.bus.cycles;
            let (mut a, mut b) = (
                GameBoy::new(rom(&[], &code, false), None).unwrap(),
                GameBoy::new(rom(&[], &code, false), None).unwrap(),
            );
            let mut ran = 0;
            for cut in (start + 1..start + 2400).step_by(3) {
                let run = |gb: &mut GameBoy, fast: bool| {
                    gb.load_state(&state).unwrap();
                    gb.bus.refresh_rom_window();
                    let (from, before) = (
                        gb.instructions(),
                        gb.wait_loop_stats.short_loop_instructions,
                    );
                    gb.bus.short_loop_refused = 0xFFFF;
                    // As the slice runs it; without the fast path each hint is refused.
                    while gb.bus.cycles < cut {
                        gb.bus.bail = 0;
                        gb.run_plain::<true, false, true>(cut);
                        if gb.bus.bail & BAIL_SHORT_LOOP == 0 {
                            break;
                        }
                        gb.bus.bail = 0;
                        if fast {
                            gb.run_short_loop(cut, 0);
                        } else {
                            gb.bus.short_loop_refused = gb.cpu.r.pc;
                        }
                    }
                    let n = gb.instructions();
                    let trace: Vec<u16> = (from.max(n.saturating_sub(256))..n)
                        .map(|k| gb.pc_trace[k as usize & crate::gameboy::PC_TRACE_MASK])
                        .collect();
                    let bus = &gb.bus;
                    let seen = (
                        gb.cpu.r,
                        (bus.cycles, bus.instr_start, bus.prev_instr_start),
                        n,
                        trace,
                    );
                    let ran = gb.wait_loop_stats.short_loop_instructions - before;
                    (seen, bus.wram, bus.hram, ran)
                };
                let (fast, plain) = (run(&mut a, true), run(&mut b, false));
                assert_eq!(fast.0, plain.0, "{case}: cut at {}", cut - start);
                assert!(
                    fast.1 == plain.1 && fast.2 == plain.2,
                    "{case}: memory at {}",
                    cut - start
                );
                ran += fast.3;
            }
            assert_eq!(ran > 0, runs, "{case}");
        }
    }

    /// The same programs run for frames with interrupts ending slices inside the loops, on the
    /// DMG and on the Game Boy Color at normal and double speed (a prelude switches: `LD A,1;
    /// LDH (KEY1),A; STOP`): the fast path on and off leave the same machine, instruction
    /// count and PC trace at every frame, and it ran where it may.
    #[test]
    fn short_loops_on_and_off_give_the_same_machine() {
        let double_speed: &[u8] = &[0x3E, 0x01, 0xE0, 0x4D, 0x10, 0x00];
        for (hardware, cgb, prelude) in [
            ("DMG", false, &[][..]),
            ("CGB", true, &[][..]),
            ("CGB double speed", true, double_speed),
        ] {
            for (case, setup, body, runs) in cases() {
                // `setup` sets the registers, the loop runs, and the program starts over.
                let code = program(0x150 + prelude.len() as u16, &setup, &body);
                let rom = rom(prelude, &code, cgb);
                let make = |on: bool| {
                    let mut gb = GameBoy::new(rom.clone(), None).unwrap();
                    assert_eq!(gb.is_cgb(), cgb);
                    gb.wait_loop_fast_paths = on;
                    gb.set_pc_trace(true);
                    // A frame without interrupts (the prelude's STOP), then timer (every 16
                    // cycles' tick, overflow every 4096) and HBlank STAT interrupts: slices
                    // end inside the loops at moving points.
                    gb.tick(1, false, false);
                    gb.bus.poke(0xFF07, 0x05);
                    gb.bus.poke(0xFF41, 0x08);
                    gb.bus.poke(0xFFFF, 0x07);
                    gb.cpu.ime = true;
                    gb
                };
                let (mut on, mut off) = (make(true), make(false));
                for frame in 0..20 {
                    on.tick(1, false, false);
                    off.tick(1, false, false);
                    let what = format!("{hardware}, {case}: frame {frame}");
                    assert_eq!(on.cpu.r, off.cpu.r, "{what}");
                    assert_eq!(on.instructions(), off.instructions(), "{what}");
                    assert_eq!(on.pc_trace(), off.pc_trace(), "{what}");
                    assert!(on.save_state() == off.save_state(), "{what}: states differ");
                }
                assert_eq!(
                    on.bus.cgbx.double_speed,
                    !prelude.is_empty(),
                    "{hardware}, {case}"
                );
                let ran = on.wait_loop_stats.short_loop_instructions;
                assert_eq!(
                    ran > 0,
                    runs,
                    "{hardware}, {case}: {ran} instructions by the fast path"
                );
                assert_eq!(off.wait_loop_stats.short_loops, 0, "{hardware}, {case}");
            }
        }
    }

    #[test]
    fn hints_only_for_heads_at_their_offsets() {
        assert!(loop_back_hint(0x0D, 0xFD), "DEC C; JR NZ,-3");
        assert!(!loop_back_hint(0x0D, 0xFC));
        assert!(!loop_back_hint(0x35, 0xFD), "DEC (HL) heads no delay loop");
        assert!(loop_back_hint(0x22, 0xFC));
        assert!(loop_back_hint(0x2A, 0xFA) && loop_back_hint(0x2A, 0xF8));
        assert!(!loop_back_hint(0x2A, 0xF9));
        assert!(loop_back_hint(0xBD, 0xFA));
        for offset in [0x00, 0x02, 0x7F, 0x80, 0xF7, 0xFE, 0xFF] {
            for op in 0..=255u8 {
                assert!(!loop_back_hint(op, offset), "{op:#04x} {offset:#04x}");
            }
        }
    }

    #[test]
    fn shapes_from_bytes() {
        let pad = |b: &[u8]| {
            let mut c = [0u8; 8];
            c[..b.len()].copy_from_slice(b);
            c
        };
        assert_eq!(
            shape_of(pad(&[0x3D, 0x20, 0xFD])),
            Some(Shape::Delay { reg: 7 })
        );
        assert_eq!(shape_of(pad(&[0x35, 0x20, 0xFD])), None);
        assert_eq!(
            shape_of(pad(&[0x32, 0x05, 0x20, 0xFC])),
            Some(Shape::Fill { reg: 0, down: true })
        );
        // DEC L would move the pointer, DEC A the value.
        assert_eq!(shape_of(pad(&[0x22, 0x2D, 0x20, 0xFC])), None);
        assert_eq!(shape_of(pad(&[0x22, 0x3D, 0x20, 0xFC])), None);
        assert_eq!(
            shape_of(pad(&[0x2A, 0x12, 0x13, 0x0D, 0x20, 0xFA])),
            Some(Shape::Copy {
                reg: 1,
                from_de: false
            })
        );
        // DEC D or E would move the destination.
        assert_eq!(shape_of(pad(&[0x2A, 0x12, 0x13, 0x15, 0x20, 0xFA])), None);
        assert_eq!(
            shape_of([0x2A, 0x12, 0x13, 0x0B, 0x78, 0xB1, 0x20, 0xF8]),
            Some(Shape::LongCopy { from_de: false })
        );
        assert_eq!(
            shape_of(pad(&[0xBD, 0xC8, 0x70, 0x19, 0x18, 0xFA])),
            Some(Shape::FillToMark {
                value: 0,
                stride_bc: false
            })
        );
        // LD (HL),H or (HL),L would store the moving pointer.
        assert_eq!(shape_of(pad(&[0xBD, 0xC8, 0x74, 0x19, 0x18, 0xFA])), None);
        assert_eq!(shape_of(pad(&[0xBD, 0xC8, 0x70, 0x29, 0x18, 0xFA])), None);
    }
}
