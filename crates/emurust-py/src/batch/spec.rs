//! What a batch observes and rewards: observation kinds, RAM value types, reward terms and
//! episode-end conditions, parsed once at construction (nothing here runs per step but the
//! evaluation functions, which neither allocate nor branch on strings).

use emurust_core::GameBoy;

/// One observation kind. Shapes are per environment; the batch adds a leading `N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObsKind {
    /// (1, 144, 160) uint8 grey levels (PyBoy's default palette: 255, 153, 85, 0), channel-first.
    Grey,
    /// (1, 72, 80) uint8: the grey screen averaged over 2x2 blocks (rounded).
    GreyHalf,
    /// (144, 160, 3) uint8 RGB, channel-last (as images and PyBoy's `screen.ndarray[..., :3]`).
    Rgb,
    /// (3, 144, 160) uint8 RGB, channel-first.
    RgbChw,
    /// (1, 144, 160) uint8 shade indices 0 (white) to 3 (black).
    Shades,
    /// (K,) uint8: the bytes of the batch's RAM ranges, concatenated.
    Ram,
}

impl ObsKind {
    pub const ALL: [(&'static str, ObsKind); 6] = [
        ("grey", ObsKind::Grey),
        ("grey_half", ObsKind::GreyHalf),
        ("rgb", ObsKind::Rgb),
        ("rgb_chw", ObsKind::RgbChw),
        ("shades", ObsKind::Shades),
        ("ram", ObsKind::Ram),
    ];

    pub fn parse(name: &str) -> Option<ObsKind> {
        let lower = name.to_ascii_lowercase();
        let lower = match lower.as_str() {
            "gray" => "grey",
            "gray_half" => "grey_half",
            s => s,
        };
        Self::ALL.iter().find(|(n, _)| *n == lower).map(|(_, k)| *k)
    }

    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, k)| *k == self).unwrap().0
    }

    pub fn needs_pixels(self) -> bool {
        self != ObsKind::Ram
    }

    /// Per-environment shape.
    pub fn shape(self, ram_len: usize) -> Vec<usize> {
        match self {
            ObsKind::Grey | ObsKind::Shades => vec![1, 144, 160],
            ObsKind::GreyHalf => vec![1, 72, 80],
            ObsKind::Rgb => vec![144, 160, 3],
            ObsKind::RgbChw => vec![3, 144, 160],
            ObsKind::Ram => vec![ram_len],
        }
    }
}

/// PyBoy's default DMG palette, one grey level per shade index.
const GREY: [u8; 4] = [0xFF, 0x99, 0x55, 0x00];

/// Write observation `kind` of `gb` into `out` (exactly `shape(kind).product()` bytes).
pub fn write_obs(kind: ObsKind, gb: &GameBoy, ram: &[(u16, u16)], out: &mut [u8]) {
    let shades = gb.bus.lcd.screen_shades();
    if gb.is_cgb() {
        // Game Boy Color hardware: grey is the luma of the colours shown (see `lcd::luma`).
        let grey = gb.bus.lcd.screen_grey();
        match kind {
            ObsKind::Grey => {
                out.copy_from_slice(&grey[..out.len()]);
                return;
            }
            ObsKind::GreyHalf => {
                for y in 0..72 {
                    let r0 = &grey[(2 * y) * 160..(2 * y + 1) * 160];
                    let r1 = &grey[(2 * y + 1) * 160..(2 * y + 2) * 160];
                    let row = &mut out[y * 80..(y + 1) * 80];
                    for (x, o) in row.iter_mut().enumerate() {
                        let sum = r0[2 * x] as u16
                            + r0[2 * x + 1] as u16
                            + r1[2 * x] as u16
                            + r1[2 * x + 1] as u16;
                        *o = ((sum + 2) / 4) as u8;
                    }
                }
                return;
            }
            _ => {}
        }
    }
    match kind {
        ObsKind::Grey => {
            for (o, s) in out.iter_mut().zip(shades) {
                *o = GREY[(*s & 3) as usize];
            }
        }
        ObsKind::Shades => out.copy_from_slice(&shades[..out.len()]),
        ObsKind::GreyHalf => {
            for y in 0..72 {
                let r0 = &shades[(2 * y) * 160..(2 * y + 1) * 160];
                let r1 = &shades[(2 * y + 1) * 160..(2 * y + 2) * 160];
                let row = &mut out[y * 80..(y + 1) * 80];
                for (x, o) in row.iter_mut().enumerate() {
                    let sum = GREY[(r0[2 * x] & 3) as usize] as u16
                        + GREY[(r0[2 * x + 1] & 3) as usize] as u16
                        + GREY[(r1[2 * x] & 3) as usize] as u16
                        + GREY[(r1[2 * x + 1] & 3) as usize] as u16;
                    *o = ((sum + 2) / 4) as u8;
                }
            }
        }
        ObsKind::Rgb => {
            let rgba = gb.bus.lcd.screen_rgba();
            for (o, px) in out.chunks_exact_mut(3).zip(rgba.chunks_exact(4)) {
                o.copy_from_slice(&px[..3]);
            }
        }
        ObsKind::RgbChw => {
            let rgba = gb.bus.lcd.screen_rgba();
            let plane = 144 * 160;
            for c in 0..3 {
                for (i, o) in out[c * plane..(c + 1) * plane].iter_mut().enumerate() {
                    *o = rgba[i * 4 + c];
                }
            }
        }
        ObsKind::Ram => {
            let mut k = 0;
            for &(addr, len) in ram {
                for j in 0..len {
                    out[k] = gb.bus.peek(addr.wrapping_add(j));
                    k += 1;
                }
            }
        }
    }
}

/// How bytes at an address are read as a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    /// Unsigned/signed integer of `len` bytes (1-4), little or big endian.
    Int { len: u8, signed: bool, big: bool },
    /// Packed BCD of `len` bytes (2 digits each; 1-4), most significant byte first unless `le`.
    Bcd { len: u8, le: bool },
}

impl ValueType {
    /// Names: u8 i8 u16le u16be i16le i16be u24le u24be u32le u32be i32le i32be, bcd1..bcd4
    /// (big endian, as most games store money), bcd1le..bcd4le.
    pub fn parse(name: &str) -> Option<ValueType> {
        let s = name.to_ascii_lowercase();
        match s.as_str() {
            "u8" => {
                return Some(ValueType::Int {
                    len: 1,
                    signed: false,
                    big: false,
                })
            }
            "i8" => {
                return Some(ValueType::Int {
                    len: 1,
                    signed: true,
                    big: false,
                })
            }
            _ => {}
        }
        if let Some(rest) = s.strip_prefix("bcd") {
            let (digits, le) = match rest.strip_suffix("le") {
                Some(d) => (d, true),
                None => (rest.strip_suffix("be").unwrap_or(rest), false),
            };
            let len: u8 = digits.parse().ok()?;
            return (1..=4).contains(&len).then_some(ValueType::Bcd { len, le });
        }
        let (signed, rest) = if let Some(r) = s.strip_prefix('u') {
            (false, r)
        } else if let Some(r) = s.strip_prefix('i') {
            (true, r)
        } else {
            return None;
        };
        let (bits, big) = if let Some(b) = rest.strip_suffix("le") {
            (b, false)
        } else if let Some(b) = rest.strip_suffix("be") {
            (b, true)
        } else {
            return None;
        };
        let len = match bits {
            "16" => 2,
            "24" => 3,
            "32" => 4,
            _ => return None,
        };
        Some(ValueType::Int { len, signed, big })
    }

    pub fn len(self) -> u8 {
        match self {
            ValueType::Int { len, .. } | ValueType::Bcd { len, .. } => len,
        }
    }

    /// Read the value at `addr` (side-effect-free).
    #[inline]
    pub fn read(self, gb: &GameBoy, addr: u16) -> f64 {
        let n = self.len() as u16;
        let byte = |i: u16| gb.bus.peek(addr.wrapping_add(i)) as u64;
        match self {
            ValueType::Int { len, signed, big } => {
                let mut v: u64 = 0;
                for i in 0..n {
                    let b = if big { byte(i) } else { byte(n - 1 - i) };
                    v = (v << 8) | b;
                }
                if signed {
                    let shift = 64 - 8 * len as u32;
                    (((v << shift) as i64) >> shift) as f64
                } else {
                    v as f64
                }
            }
            ValueType::Bcd { le, .. } => {
                let mut v: u64 = 0;
                for i in 0..n {
                    let b = if le { byte(n - 1 - i) } else { byte(i) };
                    // Nibbles above 9 are not BCD; they count as their binary value.
                    v = v * 100 + (b >> 4) * 10 + (b & 0x0F);
                }
                v as f64
            }
        }
    }
}

/// One reward term: `weight * value` or, with `delta`, `weight * (value - value at the
/// previous step)` (0 on the first step after a reset).
#[derive(Clone, Copy, Debug)]
pub struct Term {
    pub addr: u16,
    pub ty: ValueType,
    pub weight: f64,
    pub delta: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    pub fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "==" | "eq" => Op::Eq,
            "!=" | "ne" => Op::Ne,
            "<" | "lt" => Op::Lt,
            "<=" | "le" => Op::Le,
            ">" | "gt" => Op::Gt,
            ">=" | "ge" => Op::Ge,
            _ => return None,
        })
    }

    #[inline]
    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Eq => a == b,
            Op::Ne => a != b,
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
        }
    }
}

/// An episode ends (terminated) when `value op threshold` holds after a step.
#[derive(Clone, Copy, Debug)]
pub struct Cond {
    pub addr: u16,
    pub ty: ValueType,
    pub op: Op,
    pub value: f64,
}

impl Cond {
    #[inline]
    pub fn holds(&self, gb: &GameBoy) -> bool {
        self.op.holds(self.ty.read(gb, self.addr), self.value)
    }
}
