//! Counter loops for the busy-loop fast-forward (`busy_loop`): a polling loop whose iteration
//! is a fixed point except for one byte that it counts down (or up) by one, as a text box's
//! wait does with its arrow's blink timer (Pokemon Red's `WaitForTextScrollButtonPress` through
//! `HandleDownArrowBlinkTiming`, most of a battle's text frames).
//!
//! The busy loop's proof simulates one iteration with the counter's value `c`; the iterations
//! after it see `c - 1`, `c - 2`, ... (or `+`). They take the same path, with the same
//! accesses and cycles, as long as no branch depends on the counter in a way that changes over
//! those values. [`CounterTrack`] follows, along a second simulation of the iteration, what is
//! derived from the counter: the counter's byte itself, A loaded from it, and the Z, H and C
//! flags computed from those. It allows the few ways text boxes and menus use such a counter
//! (load it into A, `DEC`/`INC` A or the byte in memory, test it with `AND A`, `OR A` or
//! `CP n`, store A back, branch on Z) and refuses any other use of a derived value (into
//! another register, an address, a carry or half-carry flag that something reads, a store
//! elsewhere). Each branch on a derived Z tests `c + offset == k` for a known offset and
//! `k`: its outcome holds until the counter reaches `k - offset`, which bounds how many
//! iterations may be skipped ([`CounterTrack::max_iterations`]).

/// Where the half-carry flag comes from when derived from the counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Half {
    /// `INC` of `counter + offset`: set when its low nibble was 0xF.
    Inc(u8),
    /// `DEC` of `counter + offset`: set when its low nibble was 0.
    Dec(u8),
    /// Computed some other way (`CP n`): not followed.
    Opaque,
}

/// F as the second simulation knows it: the bits not derived from the counter, and the
/// derived ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Flags {
    base: u8,
    /// Z: `counter + offset == k`.
    z: Option<(u8, u8)>,
    h: Option<Half>,
    /// C derived from the counter (`CP n`): not followed.
    c: bool,
}

impl Flags {
    fn derived(&self) -> bool {
        self.z.is_some() || self.h.is_some() || self.c
    }

    /// F when the iteration starts with the counter at `counter`.
    fn value(&self, counter: u8) -> u8 {
        let mut f = self.base;
        if let Some((offset, k)) = self.z {
            f = (f & !0x80)
                | if counter.wrapping_add(offset) == k {
                    0x80
                } else {
                    0
                };
        }
        let half = match self.h {
            Some(Half::Inc(offset)) => counter.wrapping_add(offset) & 0xF == 0xF,
            Some(Half::Dec(offset)) => counter.wrapping_add(offset) & 0xF == 0,
            _ => return f,
        };
        (f & !0x20) | if half { 0x20 } else { 0 }
    }
}

/// The most stack bytes holding a derived F at once (`PUSH AF` in a bank-switching call).
pub(super) const MAX_DERIVED_SLOTS: usize = 4;

/// What the second simulation knows of the values derived from the counter (see the module
/// docs). Offsets are modulo 256, relative to the counter's value when the iteration started.
#[derive(Clone, Debug)]
pub(super) struct CounterTrack {
    /// The counter's address.
    pub(super) addr: u16,
    /// The counter's value when the iteration started.
    start: u8,
    /// +1 or -1 (0xFF): how an iteration moves it.
    delta: u8,
    /// The byte at `addr`: the counter plus this offset, or `None` once overwritten with a
    /// value not derived from it.
    x: Option<u8>,
    /// A: the counter plus this offset, or `None` (not derived from it).
    a: Option<u8>,
    flags: Flags,
    /// Stack bytes holding a derived F (`PUSH AF`): address and flags.
    slots: [(u16, Flags); MAX_DERIVED_SLOTS],
    slots_len: usize,
    /// Iterations from the start whose branches all go as in this one.
    max_iterations: u64,
}

/// Loads of A from memory (the only instructions that may read the counter's byte, with
/// `INC (HL)` and `DEC (HL)`).
const fn loads_a(op: u8) -> bool {
    matches!(op, 0xF0 | 0xFA | 0x7E | 0x2A | 0x3A | 0x0A | 0x1A | 0xF2)
}

/// Stores of A to memory.
const fn stores_a(op: u8) -> bool {
    matches!(op, 0xE0 | 0xEA | 0x77 | 0x22 | 0x32 | 0x02 | 0x12 | 0xE2)
}

/// Instructions that read A (`cb`: the byte after 0xCB).
const fn reads_a(op: u8, cb: u8) -> bool {
    match op {
        0x02
        | 0x12
        | 0x22
        | 0x32
        | 0x07
        | 0x0F
        | 0x17
        | 0x1F
        | 0x27
        | 0x2F
        | 0x3C
        | 0x3D
        | 0x47
        | 0x4F
        | 0x57
        | 0x5F
        | 0x67
        | 0x6F
        | 0x77
        | 0x7F
        | 0x80..=0xBF
        | 0xC6
        | 0xCE
        | 0xD6
        | 0xDE
        | 0xE6
        | 0xEE
        | 0xF6
        | 0xFE
        | 0xE0
        | 0xE2
        | 0xEA
        | 0xF5 => true,
        0xCB => cb & 7 == 7,
        _ => false,
    }
}

/// Instructions that write A without reading it.
const fn overwrites_a(op: u8) -> bool {
    matches!(op, 0x3E | 0x78..=0x7E | 0xF1) || loads_a(op)
}

/// The flags an instruction sets (Z, H, C), whatever its inputs.
const fn flag_writes(op: u8, cb: u8) -> (bool, bool, bool) {
    match op {
        // INC r / DEC r: Z N H.
        0x04 | 0x0C | 0x14 | 0x1C | 0x24 | 0x2C | 0x34 | 0x3C | 0x05 | 0x0D | 0x15 | 0x1D
        | 0x25 | 0x2D | 0x35 | 0x3D => (true, true, false),
        0x07 | 0x0F | 0x17 | 0x1F | 0x27 => (true, true, true),
        0x2F => (false, true, false),
        0x37 | 0x3F | 0x09 | 0x19 | 0x29 | 0x39 => (false, true, true),
        0x80..=0xBF
        | 0xC6
        | 0xCE
        | 0xD6
        | 0xDE
        | 0xE6
        | 0xEE
        | 0xF6
        | 0xFE
        | 0xE8
        | 0xF8
        | 0xF1 => (true, true, true),
        0xCB => match cb {
            0x00..=0x3F => (true, true, true),
            0x40..=0x7F => (true, true, false),
            _ => (false, false, false),
        },
        _ => (false, false, false),
    }
}

/// Branches on Z.
const fn reads_z(op: u8) -> bool {
    matches!(op, 0x20 | 0x28 | 0xC0 | 0xC8 | 0xC2 | 0xCA | 0xC4 | 0xCC)
}

/// Instructions that read C.
const fn reads_c(op: u8, cb: u8) -> bool {
    match op {
        0x30
        | 0x38
        | 0xD0
        | 0xD8
        | 0xD2
        | 0xDA
        | 0xD4
        | 0xDC
        | 0x88..=0x8F
        | 0x98..=0x9F
        | 0xCE
        | 0xDE
        | 0x17
        | 0x1F
        | 0x3F
        | 0x27 => true,
        0xCB => matches!(cb, 0x10..=0x1F),
        _ => false,
    }
}

/// What an instruction of the second simulation did besides its registers (see
/// [`CounterTrack::step`]).
pub(super) struct Effects {
    pub(super) op: u8,
    /// The byte after the opcode (the CB-prefixed opcode, or an immediate).
    pub(super) next: u8,
    /// F after it, and SP before and after.
    pub(super) f: u8,
    pub(super) sp_before: u16,
    pub(super) sp_after: u16,
    /// Whether it read or wrote the counter's byte.
    pub(super) counter_read: bool,
    pub(super) counter_written: bool,
    /// Bit i: it read or wrote [`CounterTrack::watched`]'s slot i.
    pub(super) slots_read: u8,
    pub(super) slots_written: u8,
}

impl CounterTrack {
    /// The counter at `addr`, `start` when the iteration starts, moved by `delta` (+1 or
    /// -1) by each; `f`: F at the start (not derived).
    pub(super) fn new(addr: u16, start: u8, delta: u8, f: u8) -> Self {
        debug_assert!(delta == 1 || delta == 0xFF);
        let flags = Flags {
            base: f,
            z: None,
            h: None,
            c: false,
        };
        CounterTrack {
            addr,
            start,
            delta,
            x: Some(0),
            a: None,
            flags,
            slots: [(0, flags); MAX_DERIVED_SLOTS],
            slots_len: 0,
            max_iterations: u64::MAX,
        }
    }

    /// Nothing derived from the counter is live but its byte: no register, flag or stack
    /// byte holds such a value. An instruction that then touches neither the counter's byte
    /// nor a watched stack byte leaves the track as it is: `step` would only note F as its
    /// base, which every step that derives flags sets anew.
    pub(super) fn quiescent(&self) -> bool {
        self.a.is_none() && !self.flags.derived() && self.slots_len == 0
    }

    /// The stack bytes holding a derived F, for the bus to report accesses to.
    pub(super) fn watched(&self) -> impl Iterator<Item = u16> + '_ {
        self.slots[..self.slots_len].iter().map(|&(a, _)| a)
    }

    /// After an instruction of the second simulation (see [`Effects`]). False if it used a
    /// value derived from the counter in a way this analysis does not follow (see the module
    /// docs).
    pub(super) fn step(&mut self, e: &Effects) -> bool {
        let (op, cb) = (e.op, e.next);
        let flags = self.flags;
        // Flags read (a branch does not change them: F is what it tested).
        if reads_z(op) {
            if let Some((offset, k)) = flags.z {
                self.constrain(offset, k, e.f & 0x80 != 0);
            }
        }
        if (reads_c(op, cb) && flags.c) || (op == 0x27 && flags.h.is_some()) {
            return false;
        }
        // Stack bytes holding a derived F: only POP AF reads them back.
        if e.slots_read != 0 {
            if op != 0xF1 || e.slots_read.count_ones() != 1 {
                return false;
            }
            let i = e.slots_read.trailing_zeros() as usize;
            if self.slots[i].0 != e.sp_before {
                return false;
            }
            self.flags = self.slots[i].1;
            self.flags.base = e.f;
            self.a = None;
            return true;
        }
        if e.slots_written != 0 {
            // Overwritten: no longer derived.
            let mut k = 0;
            for i in 0..self.slots_len {
                if e.slots_written & (1 << i) == 0 {
                    self.slots[k] = self.slots[i];
                    k += 1;
                }
            }
            self.slots_len = k;
        }
        if op == 0xF5 {
            if self.a.is_some() || flags.h == Some(Half::Opaque) || flags.c {
                return false;
            }
            if flags.derived() {
                if self.slots_len == MAX_DERIVED_SLOTS || e.counter_written {
                    return false;
                }
                self.slots[self.slots_len] = (e.sp_after, flags);
                self.slots_len += 1;
            }
            return true;
        }
        // The counter's byte.
        if e.counter_read {
            match op {
                0x34 | 0x35 => {
                    self.x = self.x.map(|x| {
                        let after = x.wrapping_add(if op == 0x34 { 1 } else { 0xFF });
                        self.flags.z = Some((after, 0));
                        self.flags.h = Some(if op == 0x34 {
                            Half::Inc(x)
                        } else {
                            Half::Dec(x)
                        });
                        after
                    });
                    if self.x.is_none() {
                        (self.flags.z, self.flags.h) = (None, None);
                    }
                    self.flags.base = e.f;
                    return true;
                }
                _ if loads_a(op) && !e.counter_written => {
                    self.a = self.x;
                    return true;
                }
                _ => return false,
            }
        }
        if e.counter_written {
            if stores_a(op) {
                self.x = self.a;
                return true;
            }
            self.x = None;
        }
        // A derived from the counter: the uses followed.
        if let Some(a) = self.a {
            if reads_a(op, cb) {
                let f = &mut self.flags;
                f.base = e.f;
                match op {
                    0x3C | 0x3D => {
                        let after = a.wrapping_add(if op == 0x3C { 1 } else { 0xFF });
                        self.a = Some(after);
                        f.z = Some((after, 0));
                        f.h = Some(if op == 0x3C {
                            Half::Inc(a)
                        } else {
                            Half::Dec(a)
                        });
                    }
                    0xA7 | 0xB7 => {
                        f.z = Some((a, 0));
                        (f.h, f.c) = (None, false);
                    }
                    0xFE => {
                        f.z = Some((a, cb));
                        (f.h, f.c) = (Some(Half::Opaque), true);
                    }
                    // XOR A, SUB A: zero, whatever A was.
                    0xAF | 0x97 => {
                        self.a = None;
                        (f.z, f.h, f.c) = (None, None, false);
                    }
                    0x7F => {}
                    _ => return false,
                }
                return true;
            }
            if overwrites_a(op) {
                self.a = None;
            }
        }
        let (z, h, c) = flag_writes(op, cb);
        let f = &mut self.flags;
        f.base = e.f;
        if z {
            f.z = None;
        }
        if h {
            f.h = None;
        }
        if c {
            f.c = false;
        }
        true
    }

    /// A branch found `counter + offset == k` to be `holds`: the iterations after it keep
    /// that outcome until the counter reaches `k - offset`.
    fn constrain(&mut self, offset: u8, k: u8, holds: bool) {
        let hit = k.wrapping_sub(offset);
        let steps = if holds {
            // Only the value that hits it: this iteration alone.
            1
        } else {
            let d = if self.delta == 1 {
                hit.wrapping_sub(self.start)
            } else {
                self.start.wrapping_sub(hit)
            };
            d as u64
        };
        self.max_iterations = self.max_iterations.min(steps);
    }

    /// At the iteration's end: the iterations that may be skipped from its start (every
    /// derived value gone but the counter, moved by `delta`, and the stack bytes holding a
    /// derived F), or `None`.
    pub(super) fn max_iterations(&self) -> Option<u64> {
        let clean = self.a.is_none() && !self.flags.derived();
        (clean && self.x == Some(self.delta)).then_some(self.max_iterations)
    }

    /// The stack bytes holding a derived F after `iterations` skipped iterations, with their
    /// values (those the last one wrote).
    pub(super) fn slot_values(&self, iterations: u64) -> impl Iterator<Item = (u16, u8)> + '_ {
        let last = self
            .start
            .wrapping_add(self.delta.wrapping_mul((iterations - 1) as u8));
        self.slots[..self.slots_len]
            .iter()
            .map(move |&(addr, f)| (addr, f.value(last)))
    }

    /// The counter after `iterations` skipped iterations.
    pub(super) fn counter_after(&self, iterations: u64) -> u8 {
        self.start
            .wrapping_add(self.delta.wrapping_mul(iterations as u8))
    }
}

#[cfg(test)]
mod tests {
    use super::{CounterTrack, Effects};

    fn fx(op: u8, next: u8, f: u8, read: bool, written: bool) -> Effects {
        Effects {
            op,
            next,
            f,
            sp_before: 0xDFF0,
            sp_after: 0xDFF0,
            counter_read: read,
            counter_written: written,
            slots_read: 0,
            slots_written: 0,
        }
    }

    /// `dec (hl) ; jr nz,loop` from 40: the Z branch holds until the counter reaches 1 (39
    /// iterations: 40 down to 2 leave it non-zero); the flags then overwritten.
    #[test]
    fn dec_memory_and_branch() {
        let mut t = CounterTrack::new(0xC023, 40, 0xFF, 0);
        assert!(t.step(&fx(0x35, 0, 0x40, true, true)));
        assert!(t.step(&fx(0x20, 0, 0x40, false, false)));
        assert_eq!(t.max_iterations(), None, "the flags are still derived");
        assert!(t.step(&fx(0xA7, 0, 0xA0, false, false)));
        assert_eq!(t.max_iterations(), Some(39));
        assert_eq!(t.counter_after(39), 1);
    }

    /// Pokemon Red's arrow blink: `ldh a,(n) ; dec a ; ldh (n),a ; ret nz`, then `PUSH AF`
    /// of the derived flags in a bank-switching call, `POP AF`, and an unrelated `and a`.
    #[test]
    fn load_dec_store_return_push_pop() {
        let mut t = CounterTrack::new(0xFF8B, 0x31, 0xFF, 0);
        assert!(t.step(&fx(0xF0, 0x8B, 0x00, true, false)));
        // DEC A of 0x31: 0x30, N set, no half borrow.
        assert!(t.step(&fx(0x3D, 0, 0x40, false, false)));
        assert!(t.step(&fx(0xE0, 0x8B, 0x40, false, true)));
        assert!(t.step(&fx(0xC0, 0, 0x40, false, false)));
        assert!(t.step(&fx(0x3E, 5, 0x40, false, false)));
        let mut push = fx(0xF5, 0, 0x40, false, false);
        push.sp_after = 0xDFEE;
        assert!(t.step(&push));
        assert_eq!(t.watched().collect::<Vec<_>>(), vec![0xDFEE]);
        assert!(t.step(&fx(0xAF, 0, 0x80, false, false)));
        let mut pop = fx(0xF1, 0, 0x40, false, false);
        pop.sp_before = 0xDFEE;
        pop.slots_read = 1;
        assert!(t.step(&pop));
        assert_eq!(t.max_iterations(), None, "F popped back is derived");
        assert!(t.step(&fx(0xA7, 0, 0x20, false, false)));
        // From 0x31 the branch on 0x31 - 1 == 0 holds for 0x31 down to 2: 48 iterations.
        assert_eq!(t.max_iterations(), Some(0x30));
        // The last skipped iteration starts at 0x31 - 47 = 2: DEC A to 1, N, no borrow.
        assert_eq!(
            t.slot_values(0x30).collect::<Vec<_>>(),
            vec![(0xDFEE, 0x40)]
        );
        // After 0x2F iterations the last starts at 3... and after 0x22, at 0x10: half borrow.
        assert_eq!(
            t.slot_values(0x22).collect::<Vec<_>>(),
            vec![(0xDFEE, 0x60)]
        );
    }

    /// Uses not followed: the counter copied into B, its carry tested, A stored elsewhere.
    #[test]
    fn other_uses_refused() {
        let mut t = CounterTrack::new(0xC000, 10, 0xFF, 0);
        assert!(
            !t.step(&fx(0x46, 0, 0, true, false)),
            "LD B,(HL) of the counter"
        );
        let mut t = CounterTrack::new(0xC000, 10, 0xFF, 0);
        assert!(t.step(&fx(0xFA, 0, 0, true, false)));
        assert!(t.step(&fx(0xFE, 5, 0, false, false)));
        assert!(
            !t.step(&fx(0x38, 0, 0, false, false)),
            "JR C after CP of the counter"
        );
        let mut t = CounterTrack::new(0xC000, 10, 0xFF, 0);
        assert!(t.step(&fx(0xFA, 0, 0, true, false)));
        assert!(
            !t.step(&fx(0x47, 0, 0, false, false)),
            "LD B,A of the counter"
        );
        let mut t = CounterTrack::new(0xC000, 10, 0xFF, 0);
        assert!(t.step(&fx(0xFA, 0, 0, true, false)));
        assert!(!t.step(&fx(0xEA, 0, 0, false, false)), "A stored elsewhere");
        let mut t = CounterTrack::new(0xC000, 10, 0xFF, 0);
        assert!(t.step(&fx(0xFA, 0, 0, true, false)));
        assert!(
            !t.step(&fx(0xF5, 0, 0, false, false)),
            "PUSH AF of the counter in A"
        );
    }

    /// A branch taken on the counter's own value ends the run there; a CP against a lower
    /// value bounds it where the counter would reach it.
    #[test]
    fn bounds_from_branches() {
        let mut t = CounterTrack::new(0xC000, 10, 0xFF, 0);
        assert!(t.step(&fx(0xFA, 0, 0, true, false)));
        assert!(t.step(&fx(0xFE, 4, 0x00, false, false)));
        assert!(t.step(&fx(0x28, 0, 0x00, false, false)));
        assert!(t.step(&fx(0x3D, 0, 0x40, false, false)));
        assert!(t.step(&fx(0xEA, 0, 0x40, false, true)));
        assert!(t.step(&fx(0xAF, 0, 0x80, false, false)));
        // 10, 9, ..., 5 are not 4: six iterations.
        assert_eq!(t.max_iterations(), Some(6));
        let mut t = CounterTrack::new(0xC000, 4, 0xFF, 0);
        assert!(t.step(&fx(0xFA, 0, 0, true, false)));
        assert!(t.step(&fx(0xFE, 4, 0x80, false, false)));
        assert!(t.step(&fx(0x28, 0, 0x80, false, false)));
        assert!(t.step(&fx(0x3D, 0, 0x40, false, false)));
        assert!(t.step(&fx(0xEA, 0, 0x40, false, true)));
        assert!(t.step(&fx(0xAF, 0, 0x80, false, false)));
        assert_eq!(t.max_iterations(), Some(1));
    }
}
