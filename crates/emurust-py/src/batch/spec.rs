//! What a batch observes and rewards: observation kinds, RAM value types, reward terms and
//! episode-end conditions, parsed once at construction (nothing here runs per step but the
//! evaluation functions, which neither allocate nor branch on strings).

use emurust_core::GameBoy;

/// Side-effect-free reads of the address space: the emulator's bus (and, in the unit tests,
/// a plain 64 KiB array).
pub trait Peek {
    fn peek(&self, addr: u16) -> u8;

    /// LCD register `reg` (0 SCX, 1 SCY, 2 WX, 3 WY) as screen line `line` was drawn, 0 while
    /// the LCD is off (PyBoy's `screen.tilemap_position_list`, WX unshifted).
    fn line_register(&self, _line: u8, _reg: u8) -> u8 {
        0
    }
}

impl Peek for GameBoy {
    #[inline]
    fn peek(&self, addr: u16) -> u8 {
        self.bus.peek(addr)
    }

    fn line_register(&self, line: u8, reg: u8) -> u8 {
        if self.bus.peek(0xFF40) & 0x80 == 0 {
            return 0;
        }
        self.bus.lcd.line_parameters()[line as usize][reg as usize]
    }
}

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
    pub fn read<M: Peek + ?Sized>(self, gb: &M, addr: u16) -> f64 {
        let n = self.len() as u16;
        let byte = |i: u16| gb.peek(addr.wrapping_add(i)) as u64;
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

/// How a reward term turns its value into a reward each step (always 0 on the first step
/// after a reset, whose value only becomes the reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delta {
    /// `value` itself, every step.
    None,
    /// `value - previous value`.
    Change,
    /// `max(0, value - previous value)`: rises only (e.g. healing).
    Increase,
    /// `max(0, value - the episode's highest value so far)`: new records only (e.g. progress).
    NewMax,
}

impl Delta {
    pub fn parse(name: &str) -> Option<Delta> {
        Some(match name {
            "none" | "false" => Delta::None,
            "change" | "true" => Delta::Change,
            "increase" => Delta::Increase,
            "new_max" => Delta::NewMax,
            _ => return None,
        })
    }
}

/// What a reward term reads from memory.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// One value of type `ty` at `addr`.
    Value { addr: u16, ty: ValueType },
    /// The sum of values of type `ty` at each address, each times its scale (1 when `scales`
    /// is empty).
    Sum {
        addrs: Vec<u16>,
        ty: ValueType,
        scales: Vec<f64>,
        lines: Vec<LinePart>,
    },
    /// `sum(num) / sum(den)` (values of type `ty`); 0 when `sum(den)` is 0.
    Ratio {
        num: Vec<u16>,
        den: Vec<u16>,
        ty: ValueType,
    },
    /// The number of set bits in the `len` bytes from `addr` (event flags, badges).
    Popcount { addr: u16, len: u16 },
    /// A decimal number written one digit per byte, most significant first (digit tiles on
    /// screen, or digit bytes in RAM): `sum(b_i * 10^(len-1-i))` over the bytes that are not
    /// `blank` (a blank byte counts as 0, as a leading space does).
    Digits {
        addr: u16,
        len: u8,
        blank: Option<u8>,
    },
    /// The number of distinct keys seen this episode, a key being the bytes at `addrs`
    /// (e.g. map, x, y): exploration. `set` indexes the environment's visited sets.
    Visited { addrs: Vec<u16>, set: usize },
}

/// LCD registers a [`LinePart`] can read, in `line_parameters` order.
pub const LINE_REGISTERS: [&str; 4] = ["scx", "scy", "wx", "wy"];

/// A part of a `Sum` that is not in memory: `scale * ((reg + add) mod modulo)`, `reg` an LCD
/// register (index into [`LINE_REGISTERS`]) as screen line `line` was drawn. Games that
/// scroll mid-frame (a fixed status bar) keep their play field's scroll only there; Super Mario
/// Land's level progress adds the fine scroll of line 16 this way.
#[derive(Clone, Debug, PartialEq)]
pub struct LinePart {
    pub line: u8,
    pub reg: u8,
    pub add: i16,
    pub modulo: u16,
    pub scale: f64,
}

impl LinePart {
    #[inline]
    fn value<M: Peek + ?Sized>(&self, m: &M) -> f64 {
        let raw = m.line_register(self.line, self.reg) as i32;
        self.scale * (raw + self.add as i32).rem_euclid(self.modulo as i32) as f64
    }
}

/// A line part as given from Python: (line, register name, add, modulo, scale).
pub type LinePartSpec = (i64, String, i64, i64, f64);

fn check_line_part(p: &LinePartSpec, what: &str) -> Result<LinePart, String> {
    let (line, name, add, modulo, scale) = p;
    let line = u8::try_from(*line)
        .ok()
        .filter(|&l| (l as usize) < SCREEN_LINES)
        .ok_or_else(|| format!("{what}: line {line} is outside 0-{}", SCREEN_LINES - 1))?;
    let reg = LINE_REGISTERS
        .iter()
        .position(|r| r == name)
        .ok_or_else(|| {
            format!("{what}: unknown line register {name:?}; expected one of {LINE_REGISTERS:?}")
        })? as u8;
    if !(-255..=255).contains(add) {
        return Err(format!("{what}: add must be -255 to 255, got {add}"));
    }
    if !(1..=256).contains(modulo) {
        return Err(format!("{what}: modulo must be 1-256, got {modulo}"));
    }
    if !scale.is_finite() {
        return Err(format!("{what}: a line part's scale must be finite"));
    }
    Ok(LinePart {
        line,
        reg,
        add: *add as i16,
        modulo: *modulo as u16,
        scale: *scale,
    })
}

/// Screen lines with recorded LCD registers.
const SCREEN_LINES: usize = 144;

/// One reward term: `weight * f(value)`, `f` given by `delta`.
#[derive(Clone, Debug)]
pub struct Term {
    pub source: Source,
    pub weight: f64,
    pub delta: Delta,
}

/// Most bytes a `Visited` key may have (packed into a u64 with room for the empty marker).
pub const VISITED_MAX_KEY_BYTES: usize = 7;
/// Most keys one visited set may hold (its table is twice that, allocated at construction).
pub const VISITED_MAX_CAPACITY: usize = 1 << 24;
/// Keys a visited set holds by default: a 256 KiB table per environment.
pub const VISITED_DEFAULT_CAPACITY: usize = 1 << 14;

/// The most memory the visited tables of one batch may take, all environments together: each
/// table is allocated up front and cleared at every reset, so a capacity far beyond what the
/// machine holds would end the process (out of memory) at the first episode end.
pub const VISITED_MAX_TOTAL_BYTES: u64 = 4 << 30;

/// Bytes of the table of a visited set of `capacity` keys (see [`VisitedSet::new`]).
pub fn visited_table_bytes(capacity: usize) -> u64 {
    (2 * capacity.max(1)).next_power_of_two() as u64 * 8
}

/// A fixed-size set of keys (open addressing, linear probing), allocated once: inserting never
/// allocates. Once `capacity` keys are in, new keys are no longer counted (documented limit).
#[derive(Clone, Debug)]
pub struct VisitedSet {
    /// `key + 1` per used slot, 0 for empty.
    slots: Box<[u64]>,
    shift: u32,
    len: usize,
    capacity: usize,
}

impl VisitedSet {
    pub fn new(capacity: usize) -> VisitedSet {
        let size = (visited_table_bytes(capacity) / 8) as usize;
        VisitedSet {
            slots: vec![0u64; size].into_boxed_slice(),
            shift: 64 - size.trailing_zeros(),
            len: 0,
            capacity,
        }
    }

    pub fn clear(&mut self) {
        if self.len > 0 {
            self.slots.fill(0);
            self.len = 0;
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Add `key` (< 2^56); true if it was new and counted.
    #[inline]
    pub fn insert(&mut self, key: u64) -> bool {
        let stored = key + 1;
        let mask = self.slots.len() - 1;
        let mut i = if self.shift >= 64 {
            0
        } else {
            (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
        };
        loop {
            let s = self.slots[i];
            if s == stored {
                return false;
            }
            if s == 0 {
                if self.len >= self.capacity {
                    return false;
                }
                self.slots[i] = stored;
                self.len += 1;
                return true;
            }
            i = (i + 1) & mask;
        }
    }
}

impl Term {
    /// The term's value now. `Visited` adds the current key to its set.
    #[inline]
    pub fn value<M: Peek + ?Sized>(&self, m: &M, visited: &mut [VisitedSet]) -> f64 {
        match &self.source {
            Source::Value { addr, ty } => ty.read(m, *addr),
            Source::Sum {
                addrs,
                ty,
                scales,
                lines,
            } => {
                let memory: f64 = if scales.is_empty() {
                    addrs.iter().map(|&a| ty.read(m, a)).sum()
                } else {
                    addrs
                        .iter()
                        .zip(scales)
                        .map(|(&a, s)| s * ty.read(m, a))
                        .sum()
                };
                memory + lines.iter().map(|p| p.value(m)).sum::<f64>()
            }
            Source::Ratio { num, den, ty } => {
                let d: f64 = den.iter().map(|&a| ty.read(m, a)).sum();
                if d == 0.0 {
                    0.0
                } else {
                    num.iter().map(|&a| ty.read(m, a)).sum::<f64>() / d
                }
            }
            Source::Popcount { addr, len } => (0..*len)
                .map(|i| m.peek(addr.wrapping_add(i)).count_ones())
                .sum::<u32>() as f64,
            Source::Digits { addr, len, blank } => {
                let mut v = 0u64;
                for i in 0..*len as u16 {
                    let b = m.peek(addr.wrapping_add(i));
                    v = v * 10 + if Some(b) == *blank { 0 } else { b as u64 };
                }
                v as f64
            }
            Source::Visited { addrs, set } => {
                let key = addrs.iter().fold(0u64, |k, &a| (k << 8) | m.peek(a) as u64);
                let s = &mut visited[*set];
                s.insert(key);
                s.len() as f64
            }
        }
    }
}

/// Per-environment memory of the reward terms: previous values, episode highs, visited sets.
/// Allocated once at construction.
#[derive(Clone, Debug)]
pub struct TermMemory {
    prev: Vec<f64>,
    best: Vec<f64>,
    visited: Vec<VisitedSet>,
}

impl TermMemory {
    /// Memory for `terms`; `capacities[k]` is the capacity of visited set `k`.
    pub fn new(terms: &[Term], capacities: &[usize]) -> TermMemory {
        TermMemory {
            prev: vec![0.0; terms.len()],
            best: vec![0.0; terms.len()],
            visited: capacities.iter().map(|&c| VisitedSet::new(c)).collect(),
        }
    }

    /// A new episode starts from the memory's current contents: visited sets emptied (then
    /// holding the current key), previous values and highs set to the current values.
    pub fn reset<M: Peek + ?Sized>(&mut self, terms: &[Term], m: &M) {
        for v in &mut self.visited {
            v.clear();
        }
        for (i, t) in terms.iter().enumerate() {
            let v = t.value(m, &mut self.visited);
            self.prev[i] = v;
            self.best[i] = v;
        }
    }

    /// The episode goes on from a loaded state: previous values become the current ones (no
    /// reward for the jump); highs and visited sets are kept (the current key is added).
    pub fn rebase<M: Peek + ?Sized>(&mut self, terms: &[Term], m: &M) {
        for (i, t) in terms.iter().enumerate() {
            self.prev[i] = t.value(m, &mut self.visited);
        }
    }

    /// The reward of one step.
    #[inline]
    pub fn step<M: Peek + ?Sized>(&mut self, terms: &[Term], m: &M) -> f64 {
        let mut reward = 0.0;
        for (i, t) in terms.iter().enumerate() {
            let v = t.value(m, &mut self.visited);
            let p = self.prev[i];
            let r = match t.delta {
                Delta::None => v,
                Delta::Change => v - p,
                Delta::Increase => (v - p).max(0.0),
                Delta::NewMax => {
                    let r = (v - self.best[i]).max(0.0);
                    self.best[i] = self.best[i].max(v);
                    r
                }
            };
            reward += t.weight * r;
            self.prev[i] = v;
        }
        reward
    }
}

/// A reward term as given from Python, before checks (`kind` names the `Source`).
#[derive(Clone, Debug, Default)]
pub struct TermSpec {
    pub kind: String,
    pub addrs: Vec<i64>,
    pub den: Vec<i64>,
    pub scales: Vec<f64>,
    pub lines: Vec<LinePartSpec>,
    pub ty: String,
    pub weight: f64,
    pub delta: String,
    pub length: Option<i64>,
    pub blank: Option<i64>,
    pub capacity: Option<i64>,
}

/// Kinds of reward terms, as named in specs.
pub const TERM_KINDS: [&str; 6] = ["value", "sum", "ratio", "popcount", "digits", "visited"];

fn check_addr(v: i64, what: &str) -> Result<u16, String> {
    u16::try_from(v).map_err(|_| format!("{what}: address {v} is outside 0x0000-0xFFFF"))
}

fn check_values(addrs: &[i64], ty: ValueType, what: &str) -> Result<Vec<u16>, String> {
    addrs
        .iter()
        .map(|&a| {
            let a = check_addr(a, what)?;
            if a as u32 + ty.len() as u32 > 0x10000 {
                return Err(format!(
                    "{what}: {} bytes at {a:#06x} leave the address space",
                    ty.len()
                ));
            }
            Ok(a)
        })
        .collect()
}

impl TermSpec {
    /// Check the spec and build its term. A `Visited` term gets set index `*sets` and its
    /// capacity is pushed to `capacities`.
    pub fn build(&self, what: &str, capacities: &mut Vec<usize>) -> Result<Term, String> {
        if !self.weight.is_finite() {
            return Err(format!("{what}: weight must be finite"));
        }
        let delta = Delta::parse(&self.delta).ok_or_else(|| {
            format!(
                "{what}: unknown delta {:?}; expected False/'none', True/'change', 'increase' or 'new_max'",
                self.delta
            )
        })?;
        let ty = || {
            ValueType::parse(&self.ty).ok_or_else(|| {
                format!(
                    "{what}: unknown value type {:?}; expected u8, i8, u16le, u16be, i16le, i16be, u24le/be, u32le/be, i32le/be, bcd1..bcd4 (big endian) or bcd1le..bcd4le",
                    self.ty
                )
            })
        };
        let one_addr = || -> Result<u16, String> {
            match self.addrs.as_slice() {
                [a] => check_addr(*a, what),
                _ => Err(format!(
                    "{what}: a {:?} term reads from one address, got {}",
                    self.kind,
                    self.addrs.len()
                )),
            }
        };
        let some_addrs = |list: &[i64], name: &str| -> Result<(), String> {
            if list.is_empty() {
                Err(format!("{what}: {name} must list at least one address"))
            } else {
                Ok(())
            }
        };
        let unused = |name: &str, v: &Option<i64>| -> Result<(), String> {
            match v {
                Some(_) => Err(format!(
                    "{what}: {name} does not apply to a {:?} term",
                    self.kind
                )),
                None => Ok(()),
            }
        };
        if self.kind != "sum" && !self.scales.is_empty() {
            return Err(format!("{what}: scales apply to 'sum' terms only"));
        }
        if self.kind != "sum" && !self.lines.is_empty() {
            return Err(format!("{what}: lines apply to 'sum' terms only"));
        }
        if self.kind != "ratio" && !self.den.is_empty() {
            return Err(format!("{what}: den applies to 'ratio' terms only"));
        }
        if self.kind != "digits" {
            unused("blank", &self.blank)?;
        }
        if self.kind != "visited" {
            unused("capacity", &self.capacity)?;
        }
        if !matches!(self.kind.as_str(), "popcount" | "digits") {
            unused("length", &self.length)?;
        }
        let source = match self.kind.as_str() {
            "value" => {
                let ty = ty()?;
                let addr = one_addr()?;
                check_values(&[addr as i64], ty, what)?;
                Source::Value { addr, ty }
            }
            "sum" => {
                let ty = ty()?;
                some_addrs(&self.addrs, "addrs")?;
                if !self.scales.is_empty() && self.scales.len() != self.addrs.len() {
                    return Err(format!(
                        "{what}: {} scales for {} addresses",
                        self.scales.len(),
                        self.addrs.len()
                    ));
                }
                if self.scales.iter().any(|s| !s.is_finite()) {
                    return Err(format!("{what}: scales must be finite"));
                }
                Source::Sum {
                    addrs: check_values(&self.addrs, ty, what)?,
                    ty,
                    scales: self.scales.clone(),
                    lines: self
                        .lines
                        .iter()
                        .map(|p| check_line_part(p, what))
                        .collect::<Result<_, _>>()?,
                }
            }
            "ratio" => {
                let ty = ty()?;
                some_addrs(&self.addrs, "addrs")?;
                some_addrs(&self.den, "den")?;
                Source::Ratio {
                    num: check_values(&self.addrs, ty, what)?,
                    den: check_values(&self.den, ty, what)?,
                    ty,
                }
            }
            "popcount" | "digits" => {
                let addr = one_addr()?;
                let max = if self.kind == "digits" { 19 } else { 0x10000 };
                let len = self
                    .length
                    .ok_or_else(|| format!("{what}: a {:?} term needs length", self.kind))?;
                if len < 1 || len > max || addr as i64 + len > 0x10000 {
                    return Err(format!(
                        "{what}: length {len} must be 1-{max} and stay below 0x10000 from {addr:#06x}"
                    ));
                }
                if self.kind == "popcount" {
                    unused("blank", &self.blank)?;
                    Source::Popcount {
                        addr,
                        len: len as u16,
                    }
                } else {
                    let blank = match self.blank {
                        None => None,
                        Some(b) => Some(u8::try_from(b).map_err(|_| {
                            format!("{what}: blank must be a byte (0-255), got {b}")
                        })?),
                    };
                    Source::Digits {
                        addr,
                        len: len as u8,
                        blank,
                    }
                }
            }
            "visited" => {
                if self.addrs.is_empty() || self.addrs.len() > VISITED_MAX_KEY_BYTES {
                    return Err(format!(
                        "{what}: a 'visited' key is 1-{VISITED_MAX_KEY_BYTES} bytes, got {} addresses",
                        self.addrs.len()
                    ));
                }
                let addrs = self
                    .addrs
                    .iter()
                    .map(|&a| check_addr(a, what))
                    .collect::<Result<Vec<_>, _>>()?;
                let cap = self.capacity.unwrap_or(VISITED_DEFAULT_CAPACITY as i64);
                if cap < 1 || cap > VISITED_MAX_CAPACITY as i64 {
                    return Err(format!(
                        "{what}: capacity must be 1-{VISITED_MAX_CAPACITY}, got {cap}"
                    ));
                }
                capacities.push(cap as usize);
                Source::Visited {
                    addrs,
                    set: capacities.len() - 1,
                }
            }
            k => {
                return Err(format!(
                    "{what}: unknown term kind {k:?}; expected one of {TERM_KINDS:?}"
                ))
            }
        };
        Ok(Term {
            source,
            weight: self.weight,
            delta,
        })
    }
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
    pub fn holds<M: Peek + ?Sized>(&self, gb: &M) -> bool {
        self.op.holds(self.ty.read(gb, self.addr), self.value)
    }
}

/// Whether any group of conditions holds entirely (`groups`: ranges of `conds`; a lone
/// condition is a group of one).
#[inline]
pub fn any_group_holds<M: Peek + ?Sized>(conds: &[Cond], groups: &[(usize, usize)], m: &M) -> bool {
    groups
        .iter()
        .any(|&(s, e)| conds[s..e].iter().all(|c| c.holds(m)))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Mem(Vec<u8>);

    impl Peek for Mem {
        fn peek(&self, addr: u16) -> u8 {
            self.0[addr as usize]
        }
    }

    fn mem() -> Mem {
        Mem(vec![0; 0x10000])
    }

    fn spec(kind: &str, addrs: &[i64]) -> TermSpec {
        TermSpec {
            kind: kind.into(),
            addrs: addrs.to_vec(),
            ty: "u8".into(),
            weight: 1.0,
            delta: "change".into(),
            ..TermSpec::default()
        }
    }

    fn build(s: &TermSpec) -> Result<(Term, Vec<usize>), String> {
        let mut caps = Vec::new();
        s.build("reward[0]", &mut caps).map(|t| (t, caps))
    }

    #[test]
    fn popcount_counts_set_bits_of_a_range() {
        let mut m = mem();
        let t = build(&TermSpec {
            length: Some(3),
            ..spec("popcount", &[0xD747])
        })
        .unwrap()
        .0;
        let mut mm = TermMemory::new(std::slice::from_ref(&t), &[]);
        mm.reset(std::slice::from_ref(&t), &m);
        m.0[0xD747] = 0b1011;
        m.0[0xD749] = 0xFF;
        m.0[0xD74A] = 0xFF; // outside the range
        assert_eq!(t.value(&m, &mut []), 11.0);
        assert_eq!(mm.step(std::slice::from_ref(&t), &m), 11.0);
        m.0[0xD749] = 0x0F;
        assert_eq!(mm.step(std::slice::from_ref(&t), &m), -4.0);
    }

    #[test]
    fn sum_and_ratio_of_address_lists() {
        let mut m = mem();
        let s = build(&spec("sum", &[0x10, 0x20, 0x30])).unwrap().0;
        m.0[0x10] = 5;
        m.0[0x20] = 7;
        m.0[0x30] = 100;
        assert_eq!(s.value(&m, &mut []), 112.0);
        let scaled = build(&TermSpec {
            scales: vec![16.0, 1.0, 0.5],
            ..spec("sum", &[0x10, 0x20, 0x30])
        })
        .unwrap()
        .0;
        assert_eq!(scaled.value(&m, &mut []), 16.0 * 5.0 + 7.0 + 50.0);
        let r = build(&TermSpec {
            ty: "u16be".into(),
            den: vec![0x40, 0x42],
            ..spec("ratio", &[0x10, 0x12])
        })
        .unwrap()
        .0;
        assert_eq!(r.value(&m, &mut []), 0.0, "a zero denominator gives 0");
        m.0[0x41] = 40; // den 40 + 0
        m.0[0x10] = 0;
        m.0[0x11] = 10; // num 10 + 0
        assert_eq!(r.value(&m, &mut []), 0.25);
    }

    /// Memory plus one recorded register value per (line, register).
    struct LinesMem(Mem, [[u8; 4]; SCREEN_LINES]);

    impl Peek for LinesMem {
        fn peek(&self, addr: u16) -> u8 {
            self.0.peek(addr)
        }
        fn line_register(&self, line: u8, reg: u8) -> u8 {
            self.1[line as usize][reg as usize]
        }
    }

    #[test]
    fn sum_adds_line_register_parts() {
        // Super Mario Land's progress: 16 x block + x + (SCX of line 16 - 7) mod 16.
        let mut m = LinesMem(mem(), [[0; 4]; SCREEN_LINES]);
        let sml = TermSpec {
            scales: vec![16.0, 1.0],
            lines: vec![(16, "scx".into(), -7, 16, 1.0)],
            ..spec("sum", &[0x10, 0x20])
        };
        let t = build(&sml).unwrap().0;
        m.0 .0[0x10] = 3;
        m.0 .0[0x20] = 40;
        for scx in 0..=255u8 {
            m.1[16][0] = scx;
            m.1[15][0] = scx.wrapping_add(1); // other lines do not count
            let fine = (scx as i32 - 7).rem_euclid(16) as f64;
            assert_eq!(t.value(&m, &mut []), 48.0 + 40.0 + fine, "scx {scx}");
        }
        m.1[143][3] = 200;
        let wy = build(&TermSpec {
            lines: vec![(143, "wy".into(), 0, 256, 0.5)],
            ..spec("sum", &[0x10])
        })
        .unwrap()
        .0;
        assert_eq!(wy.value(&m, &mut []), 3.0 + 100.0);
        let bad = |line: LinePartSpec| {
            build(&TermSpec {
                lines: vec![line],
                ..spec("sum", &[0x10])
            })
            .unwrap_err()
        };
        assert!(bad((144, "scx".into(), 0, 16, 1.0)).contains("line 144 is outside 0-143"));
        assert!(bad((-1, "scx".into(), 0, 16, 1.0)).contains("outside"));
        assert!(bad((0, "lcdc".into(), 0, 16, 1.0)).contains("unknown line register \"lcdc\""));
        assert!(bad((0, "scx".into(), 300, 16, 1.0)).contains("add must be"));
        assert!(bad((0, "scx".into(), 0, 0, 1.0)).contains("modulo must be 1-256"));
        assert!(bad((0, "scx".into(), 0, 16, f64::NAN)).contains("finite"));
        let not_sum = TermSpec {
            lines: vec![(0, "scx".into(), 0, 16, 1.0)],
            ..spec("value", &[0x10])
        };
        assert!(build(&not_sum)
            .unwrap_err()
            .contains("lines apply to 'sum' terms only"));
    }

    #[test]
    fn digits_skip_the_blank_byte() {
        let mut m = mem();
        let t = build(&TermSpec {
            length: Some(4),
            blank: Some(47),
            ..spec("digits", &[0x9800])
        })
        .unwrap()
        .0;
        m.0[0x9800..0x9804].copy_from_slice(&[47, 47, 1, 2]);
        assert_eq!(t.value(&m, &mut []), 12.0);
        m.0[0x9800..0x9804].copy_from_slice(&[3, 0, 47, 9]);
        assert_eq!(t.value(&m, &mut []), 3009.0);
    }

    #[test]
    fn visited_counts_distinct_keys_per_episode() {
        let mut m = mem();
        let (t, caps) = build(&spec("visited", &[0xD35E, 0xD362, 0xD361])).unwrap();
        assert_eq!(caps, vec![VISITED_DEFAULT_CAPACITY]);
        let terms = [t];
        let mut mm = TermMemory::new(&terms, &caps);
        mm.reset(&terms, &m);
        // (0, 0, 0) is visited at the reset: no reward for staying there.
        assert_eq!(mm.step(&terms, &m), 0.0);
        m.0[0xD362] = 1;
        assert_eq!(mm.step(&terms, &m), 1.0);
        m.0[0xD362] = 0;
        assert_eq!(mm.step(&terms, &m), 0.0, "back to a visited key");
        m.0[0xD35E] = 1; // another map, same x/y: a new key
        assert_eq!(mm.step(&terms, &m), 1.0);
        assert_eq!(mm.visited[0].len(), 3);
        mm.reset(&terms, &m);
        assert_eq!(mm.visited[0].len(), 1, "a reset forgets the episode's keys");
        m.0[0xD35E] = 0;
        assert_eq!(mm.step(&terms, &m), 1.0);
    }

    #[test]
    fn visited_set_is_fixed_size() {
        let mut s = VisitedSet::new(100);
        let slots = s.slots.len();
        for k in 0..1000u64 {
            s.insert(k * 0x0101_0101);
        }
        assert_eq!(s.len(), 100, "keys past the capacity are not counted");
        assert_eq!(s.slots.len(), slots);
        assert!(!s.insert(0), "a known key is not new");
        s.clear();
        assert_eq!(s.len(), 0);
        assert!(s.insert((1 << 56) - 1));
    }

    #[test]
    fn delta_modes() {
        let mut m = mem();
        let mk = |d: &str| {
            build(&TermSpec {
                delta: d.into(),
                weight: 2.0,
                ..spec("value", &[0xC000])
            })
            .unwrap()
            .0
        };
        let terms = [mk("none"), mk("change"), mk("increase"), mk("new_max")];
        let mut mm = TermMemory::new(&terms, &[]);
        m.0[0xC000] = 5;
        mm.reset(&terms, &m);
        let mut rewards = Vec::new();
        for v in [7u8, 3, 6, 9] {
            m.0[0xC000] = v;
            rewards.push(
                terms
                    .iter()
                    .enumerate()
                    .map(|(i, _)| {
                        let mut one = TermMemory::new(&terms[i..=i], &[]);
                        one.prev[0] = mm.prev[i];
                        one.best[0] = mm.best[i];
                        one.step(&terms[i..=i], &m)
                    })
                    .collect::<Vec<_>>(),
            );
            mm.step(&terms, &m);
        }
        assert_eq!(
            rewards,
            vec![
                vec![14.0, 4.0, 4.0, 4.0],
                vec![6.0, -8.0, 0.0, 0.0],
                vec![12.0, 6.0, 6.0, 0.0],
                vec![18.0, 6.0, 6.0, 4.0],
            ]
        );
    }

    #[test]
    fn bad_specs_are_refused_with_clear_messages() {
        let err = |s: TermSpec| build(&s).unwrap_err();
        assert!(err(spec("nope", &[1])).contains("unknown term kind \"nope\""));
        assert!(err(spec("popcount", &[1])).contains("needs length"));
        assert!(err(TermSpec {
            length: Some(0),
            ..spec("popcount", &[1])
        })
        .contains("length 0"));
        assert!(err(TermSpec {
            length: Some(2),
            ..spec("popcount", &[0xFFFF])
        })
        .contains("stay below 0x10000"));
        assert!(err(spec("sum", &[])).contains("at least one address"));
        assert!(err(TermSpec {
            scales: vec![1.0],
            ..spec("sum", &[1, 2])
        })
        .contains("1 scales for 2 addresses"));
        assert!(err(TermSpec {
            scales: vec![1.0],
            ..spec("popcount", &[1])
        })
        .contains("scales apply to 'sum'"));
        assert!(err(spec("value", &[1, 2])).contains("one address"));
        assert!(err(spec("sum", &[0x10000])).contains("outside 0x0000-0xFFFF"));
        assert!(err(spec("visited", &[1; 8])).contains("1-7 bytes"));
        assert!(err(TermSpec {
            capacity: Some(0),
            ..spec("visited", &[1])
        })
        .contains("capacity must be"));
        assert!(err(TermSpec {
            delta: "sometimes".into(),
            ..spec("value", &[1])
        })
        .contains("unknown delta"));
        assert!(err(TermSpec {
            ty: "u12".into(),
            ..spec("sum", &[1])
        })
        .contains("unknown value type"));
        assert!(err(TermSpec {
            blank: Some(300),
            length: Some(2),
            ..spec("digits", &[1])
        })
        .contains("blank must be a byte"));
        assert!(err(TermSpec {
            capacity: Some(10),
            ..spec("sum", &[1])
        })
        .contains("capacity does not apply"));
        assert!(err(TermSpec {
            den: vec![2],
            ..spec("sum", &[1])
        })
        .contains("den applies to 'ratio'"));
        assert!(err(TermSpec {
            weight: f64::NAN,
            ..spec("sum", &[1])
        })
        .contains("finite"));
    }

    #[test]
    fn condition_groups_need_all_their_conditions() {
        let mut m = mem();
        let c = |addr: u16, v: f64| Cond {
            addr,
            ty: ValueType::parse("u8").unwrap(),
            op: Op::Eq,
            value: v,
        };
        // (lives == 1 and health == 0) or flag == 1
        let conds = [c(0xD089, 1.0), c(0xD086, 0.0), c(0xC000, 1.0)];
        let groups = [(0, 2), (2, 3)];
        m.0[0xD089] = 2;
        assert!(!any_group_holds(&conds, &groups, &m));
        m.0[0xD089] = 1;
        assert!(any_group_holds(&conds, &groups, &m));
        m.0[0xD086] = 3;
        assert!(!any_group_holds(&conds, &groups, &m));
        m.0[0xC000] = 1;
        assert!(any_group_holds(&conds, &groups, &m));
    }
}
