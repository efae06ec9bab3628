//! Python bindings: the `emurust._core` extension module.
//!
//! Thin by design: argument checking and conversion here, emulation in `emurust-core`.
//! Every core error becomes a Python exception; no Rust panic is allowed to reach Python
//! (calls that run emulation are guarded and report an internal error instead).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;

use emurust_core::apu::SoundOptions;
use emurust_core::gameboy::Options;
use emurust_core::joypad::{button, BUTTON_NAMES};
use emurust_core::{CoreError, GameBoy as CoreGameBoy};
use numpy::ndarray::{ArrayView2, ArrayView3, ShapeBuilder};
use numpy::{PyArray1, PyArray2, PyArray3, PyArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

mod batch;
mod vectors;

pyo3::create_exception!(
    _core,
    EmurustError,
    pyo3::exceptions::PyException,
    "Base class of emurust errors."
);
pyo3::create_exception!(
    _core,
    RomError,
    EmurustError,
    "The ROM cannot be used (bad, truncated, unsupported)."
);
pyo3::create_exception!(
    _core,
    StateError,
    EmurustError,
    "A save state is corrupt or belongs to another ROM."
);

pub(crate) fn to_py(e: CoreError) -> PyErr {
    match e {
        CoreError::Rom(_) | CoreError::BootRom(_) => RomError::new_err(e.to_string()),
        CoreError::State(_) => StateError::new_err(e.to_string()),
        CoreError::CartridgeRam(_) | CoreError::InvalidArgument(_) => {
            PyValueError::new_err(e.to_string())
        }
    }
}

fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| {
        PyRuntimeError::new_err(format!(
            "emurust internal error during {what}; the emulator state is no longer reliable. Please report this with the ROM and state."
        ))
    })
}

/// A path (str or os.PathLike) or the bytes themselves.
fn load_bytes(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = obj.extract::<Vec<u8>>() {
        if !obj.is_instance_of::<pyo3::types::PyString>() {
            return Ok(b);
        }
    }
    let path: PathBuf = obj.extract().map_err(|_| {
        PyValueError::new_err(format!(
            "{what} must be a path (str or os.PathLike) or bytes"
        ))
    })?;
    std::fs::read(&path).map_err(|e| {
        pyo3::exceptions::PyFileNotFoundError::new_err(format!(
            "cannot read {what} {}: {e}",
            path.display()
        ))
    })
}

fn button_mask(name: &str) -> PyResult<u8> {
    let lower = name.to_ascii_lowercase();
    BUTTON_NAMES
        .iter()
        .position(|n| *n == lower)
        .map(|i| 1u8 << i)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown button {name:?}; expected one of {BUTTON_NAMES:?}"
            ))
        })
}

/// One Game Boy (DMG) emulator. See `emurust.GameBoy` for the documented Python API.
#[pyclass(module = "emurust._core", name = "GameBoy", subclass)]
struct PyGameBoy {
    gb: Box<CoreGameBoy>,
}

#[pymethods]
impl PyGameBoy {
    #[new]
    #[pyo3(signature = (rom, *, boot_rom=None, sound_emulated=true, sound_sample_rate=None))]
    fn new(
        rom: &Bound<'_, PyAny>,
        boot_rom: Option<&Bound<'_, PyAny>>,
        sound_emulated: bool,
        sound_sample_rate: Option<i64>,
    ) -> PyResult<Self> {
        let options = options_from_py(sound_emulated, sound_sample_rate)?;
        let rom_bytes: Arc<[u8]> = load_bytes(rom, "ROM")?.into();
        let boot: Option<Arc<[u8]>> = match boot_rom {
            Some(b) => Some(load_bytes(b, "boot ROM")?.into()),
            None => None,
        };
        let gb = guarded("power-on", || {
            CoreGameBoy::with_options(rom_bytes, boot, options)
        })?
        .map_err(to_py)?;
        Ok(PyGameBoy { gb: Box::new(gb) })
    }

    /// Whether the sound unit is emulated (PyBoy's `sound_emulated`).
    #[getter]
    fn sound_emulated(&self) -> bool {
        self.gb.options().sound.emulated
    }

    /// The audio sample rate in Hz (PyBoy's `sound_sample_rate`).
    #[getter]
    fn sound_sample_rate(&self) -> u32 {
        self.gb.options().sound.sample_rate
    }

    #[pyo3(signature = (frames=1, render=true, sound=true))]
    fn tick(&mut self, py: Python<'_>, frames: i64, render: bool, sound: bool) -> PyResult<()> {
        if frames < 0 || frames > u32::MAX as i64 {
            return Err(PyValueError::new_err(format!(
                "frames must be between 0 and {}, got {frames}",
                u32::MAX
            )));
        }
        let gb = &mut self.gb;
        py.allow_threads(|| guarded("tick", || gb.tick(frames as u32, render, sound)))
    }

    #[getter]
    fn frame_count(&self) -> u64 {
        self.gb.frames
    }

    /// Instructions executed since this emulator was created (statistics only).
    #[getter]
    fn instructions(&self) -> u64 {
        self.gb.instructions
    }

    #[getter]
    fn cycles(&self) -> u64 {
        self.gb.bus.cycles
    }

    /// CPU registers and interrupt state as a dict.
    fn registers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.gb.cpu.r;
        let d = PyDict::new(py);
        for (k, v) in [
            ("a", r.a),
            ("f", r.f),
            ("b", r.b),
            ("c", r.c),
            ("d", r.d),
            ("e", r.e),
            ("h", r.h),
            ("l", r.l),
        ] {
            d.set_item(k, v)?;
        }
        d.set_item("hl", u16::from_be_bytes([r.h, r.l]))?;
        d.set_item("sp", r.sp)?;
        d.set_item("pc", r.pc)?;
        d.set_item("ime", self.gb.cpu.ime)?;
        d.set_item("halted", self.gb.cpu.halted)?;
        Ok(d)
    }

    /// Set one CPU register by name.
    fn set_register(&mut self, name: &str, value: u32) -> PyResult<()> {
        let r = &mut self.gb.cpu.r;
        let byte = || -> PyResult<u8> {
            u8::try_from(value).map_err(|_| {
                PyValueError::new_err(format!("register {name} takes 0-255, got {value}"))
            })
        };
        let word = || -> PyResult<u16> {
            u16::try_from(value).map_err(|_| {
                PyValueError::new_err(format!("register {name} takes 0-65535, got {value}"))
            })
        };
        match name.to_ascii_lowercase().as_str() {
            "a" => r.a = byte()?,
            "f" => r.f = byte()? & 0xF0,
            "b" => r.b = byte()?,
            "c" => r.c = byte()?,
            "d" => r.d = byte()?,
            "e" => r.e = byte()?,
            "h" => r.h = byte()?,
            "l" => r.l = byte()?,
            "hl" => [r.h, r.l] = word()?.to_be_bytes(),
            "sp" => r.sp = word()?,
            "pc" => r.pc = word()?,
            _ => return Err(PyValueError::new_err(format!("unknown register {name:?}"))),
        }
        Ok(())
    }

    /// Read `length` bytes from `addr` without side effects.
    #[pyo3(signature = (addr, length=None))]
    fn read<'py>(&self, py: Python<'py>, addr: i64, length: Option<i64>) -> PyResult<PyObject> {
        check_addr(addr)?;
        match length {
            None => Ok(self
                .gb
                .bus
                .peek(addr as u16)
                .into_pyobject(py)?
                .into_any()
                .unbind()),
            Some(n) => {
                if n < 0 || addr + n > 0x10000 {
                    return Err(PyValueError::new_err(format!(
                        "range {addr:#06x}+{n} leaves the 64 KiB address space"
                    )));
                }
                let v: Vec<u8> = (addr..addr + n)
                    .map(|a| self.gb.bus.peek(a as u16))
                    .collect();
                Ok(PyBytes::new(py, &v).into_any().unbind())
            }
        }
    }

    /// Write a byte as the CPU would (MBC registers and I/O react).
    fn write(&mut self, addr: i64, value: i64) -> PyResult<()> {
        check_addr(addr)?;
        if !(0..=255).contains(&value) {
            return Err(PyValueError::new_err(format!(
                "a byte is 0-255, got {value}"
            )));
        }
        guarded("write", || self.gb.bus.poke(addr as u16, value as u8))
    }

    /// Read from a specific ROM bank (addr 0x0000-0x7FFF, taken modulo 16 KiB).
    fn read_rom_bank(&self, bank: usize, addr: u16) -> PyResult<u8> {
        self.gb.bus.cart.read_rom_banked(bank, addr).ok_or_else(|| {
            PyValueError::new_err(format!("ROM bank {bank} does not exist on this cartridge"))
        })
    }

    /// Read one byte of a given bank, as PyBoy's `memory[bank, addr]`: ROM banks at 0x0000-0x7FFF
    /// (the offset within the bank is addr & 0x3FFF) and cartridge RAM banks at 0xA000-0xBFFF.
    fn read_banked(&self, bank: usize, addr: u16) -> PyResult<u8> {
        match addr {
            0x0000..=0x7FFF => self.read_rom_bank(bank, addr),
            0xA000..=0xBFFF => {
                let ram = self.gb.bus.cart.ram();
                ram.get(bank * 0x2000 + (addr as usize - 0xA000)).copied().ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "cartridge RAM bank {bank} does not exist (this cartridge has {} banks)",
                        ram.len() / 0x2000
                    ))
                })
            }
            _ => Err(PyValueError::new_err(format!(
                "banked reads cover ROM (0x0000-0x7FFF) and cartridge RAM (0xA000-0xBFFF), not {addr:#06x}"
            ))),
        }
    }

    /// Bytes written to the serial port so far (test ROMs report here).
    fn serial_output<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.gb.bus.serial.sent())
    }

    fn clear_serial_output(&mut self) {
        self.gb.bus.serial.clear_sent();
    }

    fn button_press(&mut self, name: &str) -> PyResult<()> {
        let m = button_mask(name)?;
        let p = self.gb.bus.joypad.pressed();
        self.gb.set_buttons(p | m);
        Ok(())
    }

    fn button_release(&mut self, name: &str) -> PyResult<()> {
        let m = button_mask(name)?;
        let p = self.gb.bus.joypad.pressed();
        self.gb.set_buttons(p & !m);
        Ok(())
    }

    /// Held buttons as a bit mask (bit 0 right, 1 left, 2 up, 3 down, 4 a, 5 b, 6 select, 7 start).
    #[getter]
    fn buttons(&self) -> u8 {
        self.gb.bus.joypad.pressed()
    }

    #[setter]
    fn set_buttons(&mut self, mask: u8) {
        self.gb.set_buttons(mask);
    }

    fn save_state<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.gb.save_state())
    }

    fn load_state(&mut self, data: &[u8]) -> PyResult<()> {
        guarded("load_state", || self.gb.load_state(data))?.map_err(to_py)
    }

    /// The machine as a PyBoy 2.8.1 save state (what `PyBoy.save_state` writes).
    fn save_pyboy_state<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.gb.save_pyboy_state())
    }

    /// Load a PyBoy 2.8.1 save state (bytes, or a path to a `.state` file) of this ROM.
    fn load_pyboy_state(&mut self, state: &Bound<'_, PyAny>) -> PyResult<()> {
        let data = load_bytes(state, "PyBoy state")?;
        guarded("load_pyboy_state", || self.gb.load_pyboy_state(&data))?.map_err(to_py)
    }

    /// All external cartridge RAM (every bank).
    fn cartridge_ram<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.gb.bus.cart.ram())
    }

    fn set_cartridge_ram(&mut self, data: &[u8]) -> PyResult<()> {
        let ram = self.gb.bus.cart.ram_mut();
        if ram.len() != data.len() {
            return Err(PyValueError::new_err(format!(
                "this cartridge has {} bytes of RAM, got {} bytes",
                ram.len(),
                data.len()
            )));
        }
        ram.copy_from_slice(data);
        Ok(())
    }

    /// What a battery keeps (cartridge RAM, plus the RTC for MBC3+TIMER), or None.
    fn battery_save<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.gb.bus.cart.battery_ram().map(|b| PyBytes::new(py, &b))
    }

    fn load_battery_save(&mut self, data: &[u8]) -> PyResult<()> {
        self.gb.bus.cart.load_battery_ram(data).map_err(to_py)
    }

    /// The screen, zero-copy: a read-only (144, 160, 4) uint8 RGBA view of the emulator's own
    /// picture buffer (PyBoy's `screen.ndarray` layout and colours). It changes as frames are
    /// drawn; copy it to keep a frame.
    #[getter]
    fn screen<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyArray3<u8>>> {
        let arr = {
            let this = slf.borrow();
            let view = ArrayView3::from_shape((144, 160, 4), this.gb.bus.lcd.screen_rgba())
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            // SAFETY: the buffer lives in the boxed emulator owned by `slf`, which the array keeps
            // alive as its base; it is never reallocated (state loads copy into it).
            unsafe { PyArray3::borrow_from_array(&view, slf.clone().into_any()) }
        };
        arr.getattr("flags")?.setattr("writeable", false)?;
        Ok(arr)
    }

    /// Zero-copy read-only (144, 160) uint8 8-bit grey view: the red channel of `screen` (the
    /// DMG palette is grey, so R = G = B).
    #[getter]
    fn screen_grey<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let arr = {
            let this = slf.borrow();
            let data = this.gb.bus.lcd.screen_rgba();
            let view = ArrayView2::from_shape((144, 160).strides((160 * 4, 4)), data)
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            // SAFETY: as for `screen`.
            unsafe { PyArray2::borrow_from_array(&view, slf.clone().into_any()) }
        };
        arr.getattr("flags")?.setattr("writeable", false)?;
        Ok(arr)
    }

    /// Zero-copy read-only (144, 160) uint8 view of the shade indices 0-3 after palette mapping.
    #[getter]
    fn screen_shade<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let arr = {
            let this = slf.borrow();
            let view = ArrayView2::from_shape((144, 160), this.gb.bus.lcd.screen_shades())
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            // SAFETY: as for `screen`.
            unsafe { PyArray2::borrow_from_array(&view, slf.clone().into_any()) }
        };
        arr.getattr("flags")?.setattr("writeable", false)?;
        Ok(arr)
    }

    /// The screen as a (144, 160, 4) uint8 RGBA array (PyBoy's `screen.ndarray` layout).
    fn screen_rgba<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<u8>>> {
        let flat = PyArray1::from_slice(py, self.gb.bus.lcd.screen_rgba());
        flat.reshape([144, 160, 4])
    }

    /// The screen as (144, 160) shade indices 0-3.
    fn screen_shades<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let flat = PyArray1::from_slice(py, self.gb.bus.lcd.screen_shades());
        flat.reshape([144, 160])
    }

    /// Development aid: run the boot ROM until it unmaps itself (mid-frame). See the core docs.
    fn _run_until_boot_rom_unmapped(&mut self, max_frames: u32) -> PyResult<bool> {
        let gb = &mut self.gb;
        guarded("boot", || gb.run_until_boot_rom_unmapped(max_frames))
    }

    /// Audio samples of the last sampled frame: int8 stereo interleaved, as PyBoy's
    /// `sound.ndarray` (flattened).
    fn sound_samples<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i8>>> {
        if !self.gb.options().sound.emulated {
            // As PyBoy's `sound.ndarray` (PyBoyFeatureDisabledError).
            return Err(EmurustError::new_err(
                "sound is not emulated (the emulator was created with sound_emulated=False)",
            ));
        }
        let s = self.gb.bus.apu.samples();
        PyArray1::from_slice(py, s).reshape([s.len() / 2, 2])
    }

    /// Addresses of the last 32 instructions executed, oldest first.
    fn pc_trace(&self) -> Vec<u16> {
        self.gb.pc_trace()
    }

    #[getter]
    fn title(&self) -> String {
        self.gb.bus.cart.header().title.clone()
    }
}

/// Development aid for tools/gen_postboot.py: the machine part of the post-boot state, from
/// running `boot_rom` until it unmaps itself.
#[pyfunction]
fn _postboot_snapshot<'py>(
    py: Python<'py>,
    boot_rom: Vec<u8>,
) -> PyResult<(Bound<'py, PyBytes>, u64)> {
    let (snap, frame_start) =
        guarded("boot", || CoreGameBoy::postboot_snapshot(boot_rom.into()))?.map_err(to_py)?;
    Ok((PyBytes::new(py, &snap), frame_start))
}

/// The core's options from the keyword arguments `sound_emulated` and `sound_sample_rate`
/// (None: PyBoy's default, 48000 Hz), checked.
pub(crate) fn options_from_py(
    sound_emulated: bool,
    sound_sample_rate: Option<i64>,
) -> PyResult<Options> {
    let rate = sound_sample_rate.unwrap_or(SoundOptions::default().sample_rate as i64);
    let sound = SoundOptions {
        emulated: sound_emulated,
        sample_rate: u32::try_from(rate).unwrap_or(0),
    };
    if sound.validate().is_err() {
        return Err(PyValueError::new_err(format!(
            "sound_sample_rate must be between 1 and {} Hz, got {rate}",
            emurust_core::apu::MAX_SAMPLE_RATE
        )));
    }
    Ok(Options { sound })
}

fn check_addr(addr: i64) -> PyResult<()> {
    if !(0..=0xFFFF).contains(&addr) {
        return Err(PyValueError::new_err(format!(
            "address {addr} is outside 0x0000-0xFFFF"
        )));
    }
    Ok(())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("EmurustError", m.py().get_type::<EmurustError>())?;
    m.add("RomError", m.py().get_type::<RomError>())?;
    m.add("StateError", m.py().get_type::<StateError>())?;
    m.add("BUTTONS", BUTTON_NAMES.to_vec())?;
    let _ = button::A;
    m.add_class::<PyGameBoy>()?;
    m.add_function(wrap_pyfunction!(_postboot_snapshot, m)?)?;
    vectors::register(m)?;
    batch::register(m)?;
    Ok(())
}
