//! Runner for the SingleStepTests SM83 vectors ("sm83" JSON format, one file per opcode).
//!
//! Each case gives an initial CPU state and memory contents, runs exactly one instruction
//! on a flat 64 KiB bus, and checks the final registers, the listed memory bytes and the
//! M-cycle bus log (`[address, data, "r-m" | "-wm" | "---"]` per M-cycle).
//!
//! Conventions of the vector files (as observed in them):
//! - An internal cycle ("---") repeats the address and data of the previous bus cycle, so
//!   [`FlatBus`] remembers the last address/data it put on the bus. A `null` address or
//!   data in an expected cycle is treated as "don't care".
//! - `initial.ie` is the IE register, which lives at 0xFFFF on the flat bus: it is written
//!   there first, and then the `ram` list (which may itself name 0xFFFF) is applied, so an
//!   explicit RAM entry wins. `final.ie`, if present, is checked against 0xFFFF.
//! - `final.ei == 1` means an EI enable is still pending (our `ei_delay > 0`); its absence
//!   means none is. `initial.ei == 1`, if present, starts with the enable pending.
//! - HALT and STOP show the opcode fetch plus two internal cycles, PC advanced by one.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use crate::cpu::{Bus, Cpu};

/// What one M-cycle did on the bus, as the vectors spell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CycleKind {
    /// Opcode/operand fetch or data read: "r-m".
    Read,
    /// Data write: "-wm".
    Write,
    /// Internal cycle: "---".
    Idle,
}

impl CycleKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CycleKind::Read => "r-m",
            CycleKind::Write => "-wm",
            CycleKind::Idle => "---",
        }
    }
}

/// One logged M-cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusCycle {
    pub addr: u16,
    pub data: u8,
    pub kind: CycleKind,
}

/// A flat 64 KiB RAM bus that logs every M-cycle.
pub struct FlatBus {
    pub mem: Box<[u8; 0x10000]>,
    pub log: Vec<BusCycle>,
    /// What is left on the address and data buses by the last access; an internal cycle
    /// shows these again.
    pub last_addr: u16,
    pub last_data: u8,
}

impl Default for FlatBus {
    fn default() -> Self {
        Self::new()
    }
}

impl FlatBus {
    pub fn new() -> Self {
        let mem: Box<[u8; 0x10000]> = vec![0u8; 0x10000]
            .into_boxed_slice()
            .try_into()
            .expect("64 KiB");
        FlatBus {
            mem,
            log: Vec::with_capacity(8),
            last_addr: 0,
            last_data: 0,
        }
    }

    #[inline]
    fn record(&mut self, addr: u16, data: u8, kind: CycleKind) {
        self.last_addr = addr;
        self.last_data = data;
        self.log.push(BusCycle { addr, data, kind });
    }
}

impl Bus for FlatBus {
    #[inline]
    fn fetch(&mut self, addr: u16) -> u8 {
        let v = self.mem[addr as usize];
        self.record(addr, v, CycleKind::Read);
        v
    }
    #[inline]
    fn read(&mut self, addr: u16) -> u8 {
        let v = self.mem[addr as usize];
        self.record(addr, v, CycleKind::Read);
        v
    }
    #[inline]
    fn write(&mut self, addr: u16, value: u8) {
        self.mem[addr as usize] = value;
        self.record(addr, value, CycleKind::Write);
    }
    #[inline]
    fn idle(&mut self) {
        let (a, d) = (self.last_addr, self.last_data);
        self.record(a, d, CycleKind::Idle);
    }
}

/// One failing case and what differed.
#[derive(Clone, Debug)]
pub struct CaseFailure {
    pub file: String,
    pub name: String,
    /// Human-readable lines such as `register a: expected 0x12, got 0x13`.
    pub diffs: Vec<String>,
}

/// Result of one vector file.
#[derive(Clone, Debug, Default)]
pub struct FileResult {
    pub file: String,
    pub passed: usize,
    pub failed: usize,
    pub failures: Vec<CaseFailure>,
}

/// Result of a directory of vector files.
#[derive(Clone, Debug, Default)]
pub struct DirResult {
    pub files: Vec<FileResult>,
    pub passed: usize,
    pub failed: usize,
}

impl DirResult {
    /// All failures, file by file.
    pub fn failures(&self) -> impl Iterator<Item = &CaseFailure> {
        self.files.iter().flat_map(|f| f.failures.iter())
    }
}

/// Larger than any vector file unpacked (the biggest upstream opcode file is ~30 MiB of JSON);
/// a gzip stream that unpacks past it is refused rather than grown into memory.
const MAX_UNPACKED_BYTES: u64 = 512 << 20;

/// Read a `.json` or `.json.gz` vector file into JSON.
pub fn load_file(path: &Path) -> Result<Value, String> {
    let raw = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_bytes(&raw).map_err(|e| format!("{}: {e}", path.display()))
}

/// A vector file's bytes (`.json`, or gzip-compressed JSON) as JSON.
pub fn parse_bytes(raw: &[u8]) -> Result<Value, String> {
    let text = if raw.starts_with(&[0x1F, 0x8B]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw)
            .take(MAX_UNPACKED_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("gzip: {e}"))?;
        if out.len() as u64 > MAX_UNPACKED_BYTES {
            return Err(format!(
                "gzip: unpacks to more than {} MiB",
                MAX_UNPACKED_BYTES >> 20
            ));
        }
        out
    } else {
        raw.to_vec()
    };
    serde_json::from_slice(&text).map_err(|e| format!("json: {e}"))
}

/// Run every case of one vector file.
pub fn run_file(path: &Path) -> Result<FileResult, String> {
    let json = load_file(path)?;
    let label = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    run_cases(&json, &label)
}

/// Run the cases of an already-parsed vector file (a JSON array of cases).
pub fn run_cases(json: &Value, label: &str) -> Result<FileResult, String> {
    let cases = json
        .as_array()
        .ok_or_else(|| format!("{label}: top level is not an array of cases"))?;
    let mut bus = FlatBus::new();
    let mut result = FileResult {
        file: label.to_string(),
        ..Default::default()
    };
    for (i, case) in cases.iter().enumerate() {
        let name = case
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("#{i}"));
        let diffs = run_case(&mut bus, case).map_err(|e| format!("{label}: case {name}: {e}"))?;
        if diffs.is_empty() {
            result.passed += 1;
        } else {
            result.failed += 1;
            result.failures.push(CaseFailure {
                file: label.to_string(),
                name,
                diffs,
            });
        }
    }
    Ok(result)
}

/// Run every `.json` / `.json.gz` file of `dir` (sorted by name) whose file name contains
/// `filter` (all files if `None`). A missing directory or one without vector files is an
/// error, so a misplaced data set can't pass silently.
pub fn run_dir(dir: &Path, filter: Option<&str>) -> Result<DirResult, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("vector dir {}: {e}", dir.display()))?;
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            (name.ends_with(".json") || name.ends_with(".json.gz"))
                && filter.is_none_or(|f| name.contains(f))
        })
        .collect();
    if paths.is_empty() {
        return Err(format!(
            "vector dir {}: no .json/.json.gz files",
            dir.display()
        ));
    }
    paths.sort();
    let mut out = DirResult::default();
    for p in paths {
        let r = run_file(&p)?;
        out.passed += r.passed;
        out.failed += r.failed;
        out.files.push(r);
    }
    Ok(out)
}

fn num(obj: &Value, key: &str) -> Result<u64, String> {
    obj.get(key)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("missing or non-numeric `{key}`"))
}

fn byte(obj: &Value, key: &str) -> Result<u8, String> {
    let v = num(obj, key)?;
    u8::try_from(v).map_err(|_| format!("`{key}` = {v} is not a byte"))
}

fn word(obj: &Value, key: &str) -> Result<u16, String> {
    let v = num(obj, key)?;
    u16::try_from(v).map_err(|_| format!("`{key}` = {v} is not a 16-bit value"))
}

/// `[[addr, value], ...]`
fn ram_list(state: &Value) -> Result<Vec<(u16, u8)>, String> {
    let Some(list) = state.get("ram") else {
        return Ok(Vec::new());
    };
    let list = list.as_array().ok_or("`ram` is not an array")?;
    list.iter()
        .map(|pair| {
            let a = pair.get(0).and_then(Value::as_u64);
            let v = pair.get(1).and_then(Value::as_u64);
            match (a, v) {
                (Some(a), Some(v)) if a <= 0xFFFF && v <= 0xFF => Ok((a as u16, v as u8)),
                _ => Err(format!("bad ram entry {pair}")),
            }
        })
        .collect()
}

/// Run one case on `bus` (which is cleared of the previous case's bytes first).
/// Returns the list of differences (empty when the case passes).
pub fn run_case(bus: &mut FlatBus, case: &Value) -> Result<Vec<String>, String> {
    let init = case.get("initial").ok_or("missing `initial`")?;
    let fin = case.get("final").ok_or("missing `final`")?;

    bus.mem.fill(0);
    bus.log.clear();

    let mut cpu = Cpu::new();
    cpu.r.a = byte(init, "a")?;
    cpu.r.b = byte(init, "b")?;
    cpu.r.c = byte(init, "c")?;
    cpu.r.d = byte(init, "d")?;
    cpu.r.e = byte(init, "e")?;
    cpu.r.f = byte(init, "f")?;
    cpu.r.h = byte(init, "h")?;
    cpu.r.l = byte(init, "l")?;
    cpu.r.pc = word(init, "pc")?;
    cpu.r.sp = word(init, "sp")?;
    cpu.ime = init.get("ime").and_then(Value::as_u64).unwrap_or(0) != 0;
    if init.get("ei").and_then(Value::as_u64).unwrap_or(0) != 0 {
        // An enable is pending: it lands after the next instruction.
        cpu.ei_delay = 1;
    }
    if let Some(ie) = init.get("ie").and_then(Value::as_u64) {
        bus.mem[0xFFFF] = ie as u8;
    }
    for (a, v) in ram_list(init)? {
        bus.mem[a as usize] = v;
    }
    bus.last_addr = cpu.r.pc;
    bus.last_data = bus.mem[cpu.r.pc as usize];

    cpu.step(bus);

    let mut diffs = Vec::new();
    let regs8: [(&str, u8); 8] = [
        ("a", cpu.r.a),
        ("b", cpu.r.b),
        ("c", cpu.r.c),
        ("d", cpu.r.d),
        ("e", cpu.r.e),
        ("f", cpu.r.f),
        ("h", cpu.r.h),
        ("l", cpu.r.l),
    ];
    for (name, got) in regs8 {
        let want = byte(fin, name)?;
        if want != got {
            diffs.push(format!(
                "register {name}: expected 0x{want:02X}, got 0x{got:02X}"
            ));
        }
    }
    for (name, got) in [("pc", cpu.r.pc), ("sp", cpu.r.sp)] {
        let want = word(fin, name)?;
        if want != got {
            diffs.push(format!(
                "register {name}: expected 0x{want:04X}, got 0x{got:04X}"
            ));
        }
    }
    if let Some(want) = fin.get("ime").and_then(Value::as_u64) {
        let got = cpu.ime as u64;
        if want != got {
            diffs.push(format!("ime: expected {want}, got {got}"));
        }
    }
    let want_ei = fin.get("ei").and_then(Value::as_u64).unwrap_or(0) != 0;
    let got_ei = cpu.ei_delay > 0;
    if want_ei != got_ei {
        diffs.push(format!(
            "ei pending: expected {}, got {} (ei_delay={})",
            want_ei as u8, got_ei as u8, cpu.ei_delay
        ));
    }
    if let Some(want) = fin.get("ie").and_then(Value::as_u64) {
        let got = bus.mem[0xFFFF] as u64;
        if want != got {
            diffs.push(format!(
                "ie (0xFFFF): expected 0x{want:02X}, got 0x{got:02X}"
            ));
        }
    }
    for (a, want) in ram_list(fin)? {
        let got = bus.mem[a as usize];
        if want != got {
            diffs.push(format!(
                "ram[0x{a:04X}]: expected 0x{want:02X}, got 0x{got:02X}"
            ));
        }
    }

    let cycles = match case.get("cycles") {
        Some(Value::Array(c)) => c.as_slice(),
        Some(Value::Null) | None => &[],
        Some(_) => return Err("`cycles` is not an array".into()),
    };
    let n = cycles.len().max(bus.log.len());
    for i in 0..n {
        let got = bus.log.get(i);
        match (cycles.get(i), got) {
            (Some(want), Some(got)) => {
                let wa = want.get(0).and_then(Value::as_u64);
                let wd = want.get(1).and_then(Value::as_u64);
                let wk = want.get(2).and_then(Value::as_str);
                let ok = wa.is_none_or(|a| a == got.addr as u64)
                    && wd.is_none_or(|d| d == got.data as u64)
                    && wk.is_none_or(|k| k == got.kind.as_str());
                if !ok {
                    diffs.push(format!(
                        "cycle {i}: expected {}, got {}",
                        fmt_expected(want),
                        fmt_got(got)
                    ));
                }
            }
            (Some(want), None) => diffs.push(format!(
                "cycle {i}: expected {}, got none",
                fmt_expected(want)
            )),
            (None, Some(got)) => {
                diffs.push(format!("cycle {i}: expected none, got {}", fmt_got(got)))
            }
            (None, None) => {}
        }
    }
    Ok(diffs)
}

fn fmt_got(c: &BusCycle) -> String {
    format!("[0x{:04X}, 0x{:02X}, {}]", c.addr, c.data, c.kind.as_str())
}

fn fmt_expected(v: &Value) -> String {
    let a = match v.get(0).and_then(Value::as_u64) {
        Some(a) => format!("0x{a:04X}"),
        None => "null".into(),
    };
    let d = match v.get(1).and_then(Value::as_u64) {
        Some(d) => format!("0x{d:02X}"),
        None => "null".into(),
    };
    let k = v.get(2).and_then(Value::as_str).unwrap_or("null");
    format!("[{a}, {d}, {k}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_register_ram_and_cycle_differences() {
        // NOP at 0x0100 but the expectation claims A changed, a byte changed and a write.
        let case: Value = serde_json::from_str(
            r#"{"name":"x","initial":{"pc":256,"sp":0,"a":1,"b":0,"c":0,"d":0,"e":0,"f":0,
            "h":0,"l":0,"ime":0,"ie":0,"ram":[[256,0]]},
            "final":{"pc":257,"sp":0,"a":2,"b":0,"c":0,"d":0,"e":0,"f":0,"h":0,"l":0,
            "ime":0,"ram":[[256,1]]},
            "cycles":[[256,0,"r-m"],[257,5,"-wm"]]}"#,
        )
        .unwrap();
        let mut bus = FlatBus::new();
        let diffs = run_case(&mut bus, &case).unwrap();
        assert_eq!(
            diffs,
            vec![
                "register a: expected 0x02, got 0x01".to_string(),
                "ram[0x0100]: expected 0x01, got 0x00".to_string(),
                "cycle 1: expected [0x0101, 0x05, -wm], got none".to_string(),
            ]
        );
    }

    #[test]
    fn missing_dir_is_an_error() {
        assert!(run_dir(Path::new("/nonexistent/sm83"), None).is_err());
    }
}
