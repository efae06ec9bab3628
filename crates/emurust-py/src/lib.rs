//! Python bindings: the `emurust._core` extension module.
//!
//! Thin by design: argument checking and conversion here, emulation in `emurust-core`.
//! Every core error becomes a Python exception; no Rust panic is allowed to reach Python
//! (calls that run emulation are guarded and report an internal error instead).

use std::panic::{catch_unwind, AssertUnwindSafe};
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

/// Lines of the screen (PyBoy's `tilemap_position_list` has one entry per line).
const SCREEN_ROWS: usize = 144;

mod batch;
mod files;
mod gang;
mod gb_box;
mod host;
mod pong;
mod pyboy_input;
mod pyboy_memory;
mod pyboy_tilemap;
mod vectors;

use files::load_bytes;
use gb_box::GbBox;

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
    gb: GbBox,
}

#[pymethods]
impl PyGameBoy {
    #[new]
    #[pyo3(signature = (rom, *, boot_rom=None, cgb=None, sound_emulated=true, sound_sample_rate=None))]
    fn new(
        rom: &Bound<'_, PyAny>,
        boot_rom: Option<&Bound<'_, PyAny>>,
        cgb: Option<bool>,
        sound_emulated: bool,
        sound_sample_rate: Option<i64>,
    ) -> PyResult<Self> {
        let options = options_from_py(cgb, sound_emulated, sound_sample_rate)?;
        let rom_bytes: Arc<[u8]> = load_bytes(rom, "ROM")?.into();
        let boot: Option<Arc<[u8]>> = match boot_rom {
            Some(b) => Some(load_bytes(b, "boot ROM")?.into()),
            None => None,
        };
        let gb = guarded("power-on", || {
            CoreGameBoy::with_options(rom_bytes, boot, options)
        })?
        .map_err(to_py)?;
        Ok(PyGameBoy { gb: GbBox::new(gb) })
    }
    /// True on Game Boy Color hardware (chosen as PyBoy chooses it: see `GameBoy`).
    #[getter]
    fn cgb(slf: &Bound<'_, Self>) -> PyResult<bool> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(Self::impl_cgb(&this))
    }

    /// True in Game Boy Color mode (CGB hardware running a CGB cartridge; PyBoy's `cgb_mode`).
    #[getter]
    fn cgb_mode(slf: &Bound<'_, Self>) -> PyResult<bool> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(Self::impl_cgb_mode(&this))
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
    fn tick(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        frames: i64,
        render: bool,
        sound: bool,
    ) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_tick(&mut this, py, frames, render, sound)
    }

    #[getter]
    fn frame_count(slf: &Bound<'_, Self>) -> PyResult<u64> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(Self::impl_frame_count(&this))
    }

    /// Instructions executed since this emulator was created (statistics only).
    #[getter]
    fn instructions(slf: &Bound<'_, Self>) -> PyResult<u64> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(Self::impl_instructions(&this))
    }

    /// The idle-loop fast-forward switch (on by default; results are the same either way:
    /// for measurements).
    #[getter]
    fn get_idle_loop_fast_forward(slf: &Bound<'_, Self>) -> PyResult<bool> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(this.gb.idle_loop_fast_forward)
    }

    #[setter]
    fn set_idle_loop_fast_forward(slf: &Bound<'_, Self>, on: bool) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        this.gb.idle_loop_fast_forward = on;
        Ok(())
    }

    /// The switch of every wait-loop fast path (the idle- and busy-loop fast-forwards, the
    /// polling, OAM DMA wait and short delay/fill/copy loops); on by default, results the same
    /// either way: for measurements and tests.
    #[getter]
    fn get_wait_loop_fast_paths(slf: &Bound<'_, Self>) -> PyResult<bool> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(this.gb.wait_loop_fast_paths)
    }

    #[setter]
    fn set_wait_loop_fast_paths(slf: &Bound<'_, Self>, on: bool) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        this.gb.wait_loop_fast_paths = on;
        Ok(())
    }

    /// How often each wait-loop fast path ran (statistics), as a dict of counters.
    fn wait_loop_stats<'py>(
        slf: &Bound<'_, Self>,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        let s = this.gb.wait_loop_stats;
        let d = PyDict::new(py);
        for (k, v) in [
            ("idle_looks", s.idle_looks),
            ("poll_loops", s.poll_loops),
            ("dma_wait_loops", s.dma_wait_loops),
            ("idle_skips", s.idle_skips),
            ("idle_div_skips", s.idle_div_skips),
            ("idle_joypad_skips", s.idle_joypad_skips),
            ("idle_resumes", s.idle_resumes),
            ("idle_skipped_instructions", s.idle_skipped_instructions),
            ("poll_skipped_instructions", s.poll_skipped_instructions),
            ("busy_proofs", s.busy_proofs),
            ("busy_loops", s.busy_loops),
            ("busy_skips", s.busy_skips),
            ("busy_skipped_instructions", s.busy_skipped_instructions),
            ("busy_counter_skips", s.busy_counter_skips),
            ("short_loops", s.short_loops),
            ("short_loop_instructions", s.short_loop_instructions),
        ] {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    #[getter]
    fn cycles(slf: &Bound<'_, Self>) -> PyResult<u64> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(Self::impl_cycles(&this))
    }

    /// CPU registers and interrupt state as a dict.
    fn registers<'py>(slf: &Bound<'_, Self>, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Self::impl_registers(&this, py)
    }

    /// Set one CPU register by name.
    fn set_register(slf: &Bound<'_, Self>, name: &str, value: u32) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_set_register(&mut this, name, value)
    }

    /// Read `length` bytes from `addr` without side effects.
    #[pyo3(signature = (addr, length=None))]
    fn read<'py>(
        slf: &Bound<'_, Self>,
        py: Python<'py>,
        addr: i64,
        length: Option<i64>,
    ) -> PyResult<PyObject> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Self::impl_read(&this, py, addr, length)
    }

    /// Write a byte as the CPU would (MBC registers and I/O react).
    fn write(slf: &Bound<'_, Self>, addr: i64, value: i64) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_write(&mut this, addr, value)
    }

    /// Read from a specific ROM bank (addr 0x0000-0x7FFF, taken modulo 16 KiB).
    fn read_rom_bank(slf: &Bound<'_, Self>, bank: i64, addr: i64) -> PyResult<u8> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Self::impl_read_rom_bank(&this, bank, addr)
    }

    /// Read one byte of a given bank, as PyBoy's `memory[bank, addr]`: ROM banks at 0x0000-0x7FFF
    /// (the offset within the bank is addr & 0x3FFF) and cartridge RAM banks at 0xA000-0xBFFF.
    fn read_banked(slf: &Bound<'_, Self>, bank: i64, addr: i64) -> PyResult<u8> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Self::impl_read_banked(&this, bank, addr)
    }

    /// Game Boy Color: VRAM bank 1 (8 KiB), whatever bank the CPU sees.
    fn vram_bank1<'py>(slf: &Bound<'_, Self>, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Self::impl_vram_bank1(&this, py)
    }

    /// Game Boy Color: all 32 KiB of work RAM in bank order (bank 0 first), whatever bank the
    /// CPU sees.
    fn wram_banks<'py>(slf: &Bound<'_, Self>, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Self::impl_wram_banks(&this, py)
    }

    /// Bytes written to the serial port so far (test ROMs report here).
    fn serial_output<'py>(slf: &Bound<'_, Self>, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(Self::impl_serial_output(&this, py))
    }

    fn clear_serial_output(slf: &Bound<'_, Self>) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_clear_serial_output(&mut this);
        Ok(())
    }

    fn button_press(slf: &Bound<'_, Self>, name: &str) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_button_press(&mut this, name)
    }

    fn button_release(slf: &Bound<'_, Self>, name: &str) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_button_release(&mut this, name)
    }

    /// Held buttons as a bit mask (bit 0 right, 1 left, 2 up, 3 down, 4 a, 5 b, 6 select, 7 start).
    #[getter]
    fn buttons(slf: &Bound<'_, Self>) -> PyResult<u8> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(Self::impl_buttons(&this))
    }

    #[setter]
    fn set_buttons(slf: &Bound<'_, Self>, mask: u8) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_set_buttons(&mut this, mask);
        Ok(())
    }

    fn save_state<'py>(slf: &Bound<'_, Self>, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(Self::impl_save_state(&this, py))
    }

    fn load_state(slf: &Bound<'_, Self>, data: &[u8]) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_load_state(&mut this, data)
    }

    /// The machine as a PyBoy 2.8.1 save state (what `PyBoy.save_state` writes).
    fn save_pyboy_state<'py>(
        slf: &Bound<'_, Self>,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(Self::impl_save_pyboy_state(&this, py))
    }

    /// Load a PyBoy 2.8.1 save state (bytes, or a path to a `.state` file) of this ROM.
    fn load_pyboy_state(slf: &Bound<'_, Self>, state: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_load_pyboy_state(&mut this, state)
    }

    /// Become what `PyBoy(rom)` followed by `load_state(state)` is (bytes or a path): this
    /// ROM and options, from a freshly created PyBoy's running instance (what older format
    /// versions lack comes from it). Used by `GameBoy.from_pyboy_state`.
    fn _become_pyboy_state(slf: &Bound<'_, Self>, state: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_become_pyboy_state(&mut this, state)
    }

    /// All external cartridge RAM (every bank).
    fn cartridge_ram<'py>(slf: &Bound<'_, Self>, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(Self::impl_cartridge_ram(&this, py))
    }

    fn set_cartridge_ram(slf: &Bound<'_, Self>, data: &[u8]) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_set_cartridge_ram(&mut this, data)
    }

    /// What a battery keeps (cartridge RAM, plus the RTC for MBC3+TIMER), or None.
    fn battery_save<'py>(
        slf: &Bound<'_, Self>,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(Self::impl_battery_save(&this, py))
    }

    fn load_battery_save(slf: &Bound<'_, Self>, data: &[u8]) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_load_battery_save(&mut this, data)
    }

    /// The screen, zero-copy: a read-only (144, 160, 4) uint8 RGBA view of the emulator's own
    /// picture buffer (PyBoy's `screen.ndarray` layout and colours). It changes as frames are
    /// drawn; copy it to keep a frame.
    #[getter]
    fn screen<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyArray3<u8>>> {
        let arr = {
            let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
            let view = ArrayView3::from_shape((144, 160, 4), this.gb.bus.lcd.screen_rgba())
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            // SAFETY: the buffer lives in the boxed emulator owned by `slf`, which the array keeps
            // alive as its base; it is never reallocated (state loads copy into it).
            unsafe { PyArray3::borrow_from_array(&view, slf.clone().into_any()) }
        };
        arr.getattr("flags")?.setattr("writeable", false)?;
        Ok(arr)
    }
    /// Zero-copy read-only (144, 160) uint8 8-bit grey view: on the DMG the red channel of
    /// `screen` (the DMG palette is grey, so R = G = B); on Game Boy Color hardware the grey
    /// level PIL's `Image.convert("L")` gives each pixel (ITU-R 601-2 luma), i.e. exactly
    /// `numpy.asarray(pyboy.screen.image.convert("L"))`.
    #[getter]
    fn screen_grey<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let arr = {
            let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
            let view = if this.gb.is_cgb() {
                // Game Boy Color: the grey copy the renderer keeps (PIL's convert("L")).
                ArrayView2::from_shape((144, 160), this.gb.bus.lcd.screen_grey())
            } else {
                let data = this.gb.bus.lcd.screen_rgba();
                ArrayView2::from_shape((144, 160).strides((160 * 4, 4)), data)
            }
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
            let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
            let view = ArrayView2::from_shape((144, 160), this.gb.bus.lcd.screen_shades())
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            // SAFETY: as for `screen`.
            unsafe { PyArray2::borrow_from_array(&view, slf.clone().into_any()) }
        };
        arr.getattr("flags")?.setattr("writeable", false)?;
        Ok(arr)
    }
    /// The screen as a (144, 160, 4) uint8 RGBA array (PyBoy's `screen.ndarray` layout).
    fn screen_rgba<'py>(
        slf: &Bound<'_, Self>,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, PyArray3<u8>>> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Self::impl_screen_rgba(&this, py)
    }

    /// The screen as (144, 160) shade indices 0-3.
    fn screen_shades<'py>(
        slf: &Bound<'_, Self>,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Self::impl_screen_shades(&this, py)
    }

    /// Development aid: run the boot ROM until it unmaps itself (mid-frame). See the core docs.
    fn _run_until_boot_rom_unmapped(slf: &Bound<'_, Self>, max_frames: u32) -> PyResult<bool> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        Self::impl_run_until_boot_rom_unmapped(&mut this, max_frames)
    }

    /// Audio samples of the last sampled frame: int8 stereo interleaved, as PyBoy's
    /// `sound.ndarray` (flattened).
    fn sound_samples<'py>(
        slf: &Bound<'_, Self>,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, PyArray2<i8>>> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Self::impl_sound_samples(&this, py)
    }

    #[getter]
    fn title(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(Self::impl_title(&this))
    }
}

impl PyGameBoy {
    #[allow(clippy::too_many_arguments)]
    fn impl_cgb(&self) -> bool {
        self.gb.is_cgb()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_cgb_mode(&self) -> bool {
        self.gb.is_cgb_mode()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_tick(
        &mut self,
        py: Python<'_>,
        frames: i64,
        render: bool,
        sound: bool,
    ) -> PyResult<()> {
        if frames < 0 || frames > u32::MAX as i64 {
            return Err(PyValueError::new_err(format!(
                "frames must be between 0 and {}, got {frames}",
                u32::MAX
            )));
        }
        // Frames run with the GIL released, in slices of about `SIGNAL_SLICE`; between slices
        // pending signals are handled (Ctrl-C raises KeyboardInterrupt here), so a long call
        // stops within a slice and leaves the emulator at a frame boundary. Running frame by
        // frame is exactly `tick(frames)`: only the call's last frame is drawn and sampled.
        let mut left = frames as u32;
        let _busy = self.gb.busy_guard();
        let gb = &mut self.gb;
        while left > 0 {
            let deadline = std::time::Instant::now() + SIGNAL_SLICE;
            let ran = py.allow_threads(|| {
                guarded("tick", || {
                    let mut n = 0;
                    while n < left {
                        let last = n + 1 == left;
                        gb.tick(1, render && last, sound && last);
                        n += 1;
                        if std::time::Instant::now() >= deadline {
                            break;
                        }
                    }
                    n
                })
            })?;
            left -= ran;
            if left > 0 {
                py.check_signals()?;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_frame_count(&self) -> u64 {
        self.gb.frames
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_instructions(&self) -> u64 {
        self.gb.instructions()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_cycles(&self) -> u64 {
        self.gb.bus.cycles
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_registers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
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

    #[allow(clippy::too_many_arguments)]
    fn impl_set_register(&mut self, name: &str, value: u32) -> PyResult<()> {
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

    #[allow(clippy::too_many_arguments)]
    fn impl_read<'py>(
        &self,
        py: Python<'py>,
        addr: i64,
        length: Option<i64>,
    ) -> PyResult<PyObject> {
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
                if n < 0 || n > 0x10000 - addr {
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

    #[allow(clippy::too_many_arguments)]
    fn impl_write(&mut self, addr: i64, value: i64) -> PyResult<()> {
        check_addr(addr)?;
        if !(0..=255).contains(&value) {
            return Err(PyValueError::new_err(format!(
                "a byte is 0-255, got {value}"
            )));
        }
        guarded("write", || self.gb.bus.poke(addr as u16, value as u8))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_read_rom_bank(&self, bank: i64, addr: i64) -> PyResult<u8> {
        check_addr(addr)?;
        let addr = addr as u16;
        let bank = check_bank(bank)?;
        self.gb.bus.cart.read_rom_banked(bank, addr).ok_or_else(|| {
            PyValueError::new_err(format!("ROM bank {bank} does not exist on this cartridge"))
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_read_banked(&self, bank: i64, addr: i64) -> PyResult<u8> {
        check_addr(addr)?;
        let addr = addr as u16;
        let bank = check_bank(bank)?;
        match addr {
            0x0000..=0x7FFF => self.impl_read_rom_bank(bank as i64, addr as i64),
            0xA000..=0xBFFF => {
                let ram = self.gb.bus.cart.ram();
                bank.checked_mul(0x2000)
                    .and_then(|b| ram.get(b + (addr as usize - 0xA000)))
                    .copied()
                    .ok_or_else(|| {
                        PyValueError::new_err(format!(
                        "cartridge RAM bank {bank} does not exist (this cartridge has {} banks)",
                        ram.len() / 0x2000
                    ))
                    })
            }
            0x8000..=0x9FFF => match bank {
                0 => Ok(self.gb.bus.lcd.vram[addr as usize - 0x8000]),
                1 if self.gb.is_cgb() => Ok(self.gb.bus.lcd.cgb.vram1[addr as usize - 0x8000]),
                _ => Err(PyValueError::new_err(format!(
                    "VRAM bank {bank} does not exist on this hardware"
                ))),
            },
            0xC000..=0xDFFF => {
                let off = (addr as usize - 0xC000) & 0xFFF;
                match bank {
                    0 => Ok(self.gb.bus.wram[off]),
                    1..=7 if self.gb.is_cgb() => Ok(self.gb.bus.wram_all()[bank * 0x1000 + off]),
                    _ => Err(PyValueError::new_err(format!(
                        "work RAM bank {bank} does not exist on this hardware"
                    ))),
                }
            }
            _ => Err(PyValueError::new_err(format!(
                "banked reads cover ROM (0x0000-0x7FFF), VRAM (0x8000-0x9FFF), cartridge RAM \
                 (0xA000-0xBFFF) and work RAM (0xC000-0xDFFF), not {addr:#06x}"
            ))),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_vram_bank1<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        if !self.gb.is_cgb() {
            return Err(PyValueError::new_err(
                "VRAM bank 1 exists on Game Boy Color hardware only",
            ));
        }
        Ok(PyBytes::new(py, &self.gb.bus.lcd.cgb.vram1))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_wram_banks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        if !self.gb.is_cgb() {
            return Err(PyValueError::new_err(
                "work RAM banks exist on Game Boy Color hardware only",
            ));
        }
        Ok(PyBytes::new(py, &self.gb.bus.wram_all()))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_serial_output<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.gb.bus.serial.sent())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_clear_serial_output(&mut self) {
        self.gb.bus.serial.clear_sent();
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_button_press(&mut self, name: &str) -> PyResult<()> {
        let m = button_mask(name)?;
        let p = self.gb.bus.joypad.pressed();
        self.gb.set_buttons(p | m);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_button_release(&mut self, name: &str) -> PyResult<()> {
        let m = button_mask(name)?;
        let p = self.gb.bus.joypad.pressed();
        self.gb.set_buttons(p & !m);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_buttons(&self) -> u8 {
        self.gb.bus.joypad.pressed()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_set_buttons(&mut self, mask: u8) {
        self.gb.set_buttons(mask);
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_save_state<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.gb.save_state())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_load_state(&mut self, data: &[u8]) -> PyResult<()> {
        guarded("load_state", || self.gb.load_state(data))?.map_err(to_py)
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_save_pyboy_state<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.gb.save_pyboy_state())
    }

    /// Become what `PyBoy(rom)` followed by `load_state(state)` is (see `_become_pyboy_state`).
    #[allow(clippy::too_many_arguments)]
    fn impl_become_pyboy_state(&mut self, state: &Bound<'_, PyAny>) -> PyResult<()> {
        let data = load_bytes(state, "PyBoy state")?;
        let rom = self.gb.bus.cart.rom().clone();
        let options = self.gb.options();
        let mut gb = guarded("load_pyboy_state", || {
            CoreGameBoy::from_pyboy_state(rom, options, &data)
        })?
        .map_err(to_py)?;
        // Zero-copy screen views point at this emulator's picture buffers: keep them.
        gb.bus.lcd.keep_picture_buffers(&mut self.gb.bus.lcd);
        *self.gb = gb;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_load_pyboy_state(&mut self, state: &Bound<'_, PyAny>) -> PyResult<()> {
        let data = load_bytes(state, "PyBoy state")?;
        guarded("load_pyboy_state", || self.gb.load_pyboy_state(&data))?.map_err(to_py)
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_cartridge_ram<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.gb.bus.cart.ram())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_set_cartridge_ram(&mut self, data: &[u8]) -> PyResult<()> {
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

    #[allow(clippy::too_many_arguments)]
    fn impl_battery_save<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.gb.bus.cart.battery_ram().map(|b| PyBytes::new(py, &b))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_load_battery_save(&mut self, data: &[u8]) -> PyResult<()> {
        self.gb.bus.cart.load_battery_ram(data).map_err(to_py)
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_screen_rgba<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<u8>>> {
        let flat = PyArray1::from_slice(py, self.gb.bus.lcd.screen_rgba());
        flat.reshape([144, 160, 4])
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_screen_shades<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let flat = PyArray1::from_slice(py, self.gb.bus.lcd.screen_shades());
        flat.reshape([144, 160])
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_run_until_boot_rom_unmapped(&mut self, max_frames: u32) -> PyResult<bool> {
        let gb = &mut self.gb;
        guarded("boot", || gb.run_until_boot_rom_unmapped(max_frames))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_sound_samples<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i8>>> {
        if !self.gb.options().sound.emulated {
            // As PyBoy's `sound.ndarray` (PyBoyFeatureDisabledError).
            return Err(EmurustError::new_err(
                "sound is not emulated (the emulator was created with sound_emulated=False)",
            ));
        }
        let s = self.gb.bus.apu.samples();
        PyArray1::from_slice(py, s).reshape([s.len() / 2, 2])
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_pc_trace(&self) -> PyResult<Vec<u16>> {
        self.gb.pc_trace().ok_or_else(|| {
            PyValueError::new_err("the PC trace is off: call Host(gb).set_pc_trace(True) first")
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_ld_b_b<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let seen = self.gb.cpu.ld_b_b;
        let Some((pc, r)) = seen.first else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("count", seen.count)?;
        d.set_item("pc", pc)?;
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
        d.set_item("sp", r.sp)?;
        Ok(Some(d))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_title(&self) -> String {
        self.gb.bus.cart.header().title.clone()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_register(&self, name: &str) -> PyResult<u16> {
        let r = &self.gb.cpu.r;
        Ok(match name.to_ascii_lowercase().as_str() {
            "a" => r.a as u16,
            "f" => r.f as u16,
            "b" => r.b as u16,
            "c" => r.c as u16,
            "d" => r.d as u16,
            "e" => r.e as u16,
            "h" => r.h as u16,
            "l" => r.l as u16,
            "hl" => r.hl(),
            "sp" => r.sp,
            "pc" => r.pc,
            _ => return Err(PyValueError::new_err(format!("unknown register {name:?}"))),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_read_cpu(&mut self, addr: i64) -> PyResult<u8> {
        check_addr(addr)?;
        let gb = &mut self.gb;
        guarded("read", || gb.read_cpu(addr as u16))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_read_cpu_range(&mut self, start: i64, stop: i64, step: i64) -> PyResult<Vec<u8>> {
        if step <= 0 || start < 0 || stop > 0x10000 {
            return Err(PyValueError::new_err("bad address range"));
        }
        let gb = &mut self.gb;
        guarded("read", || {
            (start..stop)
                .step_by(step as usize)
                .map(|a| gb.read_cpu(a as u16))
                .collect()
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_tilemap_read(
        &mut self,
        lcdc_map_bit: u8,
        xs: Vec<u16>,
        ys: Vec<u16>,
        refresh: bool,
        mut map_offset: u16,
        mut signed: bool,
    ) -> PyResult<(Vec<Vec<u16>>, u16, bool)> {
        if xs.iter().chain(ys.iter()).any(|&v| v >= 32) {
            return Err(PyValueError::new_err("tile map coordinates are 0-31"));
        }
        let gb = &mut self.gb;
        let rows = guarded("read", || {
            ys.iter()
                .map(|&y| {
                    xs.iter()
                        .map(|&x| {
                            if refresh {
                                let lcdc = gb.read_cpu(0xFF40);
                                map_offset = if lcdc & lcdc_map_bit != 0 {
                                    0x9C00
                                } else {
                                    0x9800
                                };
                                signed = lcdc & 0x10 == 0;
                            }
                            let tile = gb.read_cpu(map_offset + 32 * y + x) as u16;
                            if signed && tile < 0x80 {
                                tile + 0x100
                            } else {
                                tile
                            }
                        })
                        .collect()
                })
                .collect()
        })?;
        Ok((rows, map_offset, signed))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_oam_read<'py>(&mut self, py: Python<'py>) -> PyResult<(Bound<'py, PyBytes>, u8)> {
        let gb = &mut self.gb;
        let (oam, lcdc) = guarded("read", || {
            let oam: Vec<u8> = (0xFE00u16..0xFEA0).map(|a| gb.read_cpu(a)).collect();
            (oam, gb.read_cpu(0xFF40))
        })?;
        Ok((PyBytes::new(py, &oam), lcdc))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_set_breakpoints_enabled(&mut self, on: bool) {
        self.gb.set_breakpoints_enabled(on);
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_begin_frame(&mut self, render: bool, sound: bool) {
        self.gb.begin_frame(render, sound);
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_run_to_break(&mut self, py: Python<'_>) -> PyResult<bool> {
        let _busy = self.gb.busy_guard();
        let gb = &mut self.gb;
        py.allow_threads(|| guarded("tick", || gb.run_to_break()))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_single_step(&mut self) -> PyResult<bool> {
        let gb = &mut self.gb;
        guarded("tick", || gb.single_step())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_frame_done(&self) -> bool {
        self.gb.frame_done()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_count_frame(&mut self) {
        self.gb.count_frame();
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_boot_rom_byte(&self, i: usize) -> Option<u8> {
        self.gb.boot_rom_byte(i)
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_set_boot_rom_byte(&mut self, i: usize, value: u8) -> PyResult<()> {
        if self.gb.set_boot_rom_byte(i, value) {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!("no boot ROM byte {i}")))
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_boot_rom_mapped(&self) -> bool {
        self.gb.boot_rom_mapped()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_override_rom(&mut self, bank: usize, offset: usize, value: u8) -> PyResult<()> {
        if self.gb.bus.cart.override_rom(bank, offset, value) {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!(
                "ROM bank {bank} offset {offset:#x} does not exist"
            )))
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_vram_byte(&self, i: usize) -> PyResult<u8> {
        self.gb
            .bus
            .lcd
            .vram
            .get(i)
            .copied()
            .ok_or_else(|| PyValueError::new_err("VRAM index"))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_set_vram_byte(&mut self, i: usize, value: u8) -> PyResult<()> {
        let v = self
            .gb
            .bus
            .lcd
            .vram
            .get_mut(i)
            .ok_or_else(|| PyValueError::new_err("VRAM index"))?;
        *v = value;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_set_vram_bank_byte(&mut self, bank: i64, i: usize, value: u8) -> PyResult<()> {
        let cgb = self.gb.is_cgb();
        let lcd = &mut self.gb.bus.lcd;
        let vram = match bank {
            0 => &mut lcd.vram[..],
            1 if cgb => &mut lcd.cgb.vram1[..],
            _ => {
                return Err(PyValueError::new_err(format!(
                    "VRAM bank {bank} does not exist on this hardware"
                )))
            }
        };
        let v = vram
            .get_mut(i)
            .ok_or_else(|| PyValueError::new_err("VRAM index"))?;
        *v = value;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_wram_byte(&self, i: usize) -> PyResult<u8> {
        self.gb
            .bus
            .wram
            .get(i)
            .copied()
            .ok_or_else(|| PyValueError::new_err("WRAM index"))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_set_wram_byte(&mut self, i: usize, value: u8) -> PyResult<()> {
        let v = self
            .gb
            .bus
            .wram
            .get_mut(i)
            .ok_or_else(|| PyValueError::new_err("WRAM index"))?;
        *v = value;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_cart_ram_byte(&self, bank: usize, offset: usize) -> Option<u8> {
        if offset >= 0x2000 {
            return None;
        }
        let i = bank.checked_mul(0x2000)? + offset;
        self.gb.bus.cart.ram().get(i).copied()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_set_cart_ram_byte(&mut self, bank: usize, offset: usize, value: u8) -> PyResult<()> {
        if offset >= 0x2000 {
            return Err(PyValueError::new_err("cartridge RAM offset"));
        }
        let v = self
            .gb
            .bus
            .cart
            .ram_mut()
            .get_mut(bank.saturating_mul(0x2000).saturating_add(offset))
            .ok_or_else(|| PyValueError::new_err("cartridge RAM bank"))?;
        *v = value;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_cartridge_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = &self.gb.bus.cart;
        let h = c.header();
        let d = PyDict::new(py);
        d.set_item("rom_banks", c.rom_bank_count())?;
        d.set_item("ram_banks", c.ram_bank_count())?;
        d.set_item("battery", h.has_battery)?;
        d.set_item("rtc", h.has_rtc)?;
        d.set_item("cgb_flag", c.rom()[0x143])?;
        d.set_item("cartridge_type", h.cartridge_type)?;
        Ok(d)
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_selected_banks(&self) -> (usize, usize) {
        let c = &self.gb.bus.cart;
        (c.rom_bank_high(), c.ram_bank())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_set_div(&mut self, value: u8) {
        self.gb.set_div(value);
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_line_parameters(&self) -> Vec<[u8; 4]> {
        self.gb
            .bus
            .lcd
            .line_parameters()
            .iter()
            .map(|p| [p[0], p[1], p[2], p[3]])
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_sound_buffer<'py>(&self, py: Python<'py>) -> (Bound<'py, PyArray1<i8>>, usize) {
        let apu = &self.gb.bus.apu;
        (
            PyArray1::from_slice(py, apu.sample_buffer()),
            apu.samples().len(),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_pyboy_state_layout(&self) -> (usize, usize) {
        (self.gb.pyboy_state_len(), self.gb.pyboy_renderer_offset())
    }
}

/// Development aid for tools/gen_postboot.py: the machine part of the post-boot state, from
/// running `boot_rom` until it unmaps itself. `cgb`: None for the DMG, True/False for Game Boy
/// Color hardware with a CGB / a DMG cartridge.
#[pyfunction]
#[pyo3(signature = (boot_rom, cgb=None))]
fn _postboot_snapshot<'py>(
    py: Python<'py>,
    boot_rom: Vec<u8>,
    cgb: Option<bool>,
) -> PyResult<(Bound<'py, PyBytes>, u64)> {
    let (snap, frame_start) = guarded("boot", || {
        CoreGameBoy::postboot_snapshot_for(boot_rom.into(), cgb)
    })?
    .map_err(to_py)?;
    Ok((PyBytes::new(py, &snap), frame_start))
}

/// The core's options from the keyword arguments `cgb`, `sound_emulated` and
/// `sound_sample_rate` (None: PyBoy's default, 48000 Hz), checked.
pub(crate) fn options_from_py(
    cgb: Option<bool>,
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
    Ok(Options { cgb, sound })
}

/// How long a long call runs with the GIL released before it checks for signals (Ctrl-C).
pub(crate) const SIGNAL_SLICE: std::time::Duration = std::time::Duration::from_millis(50);

/// The error for an object used from another thread while one of its calls runs.
pub(crate) fn busy(what: &str) -> PyErr {
    PyRuntimeError::new_err(format!(
        "this {what} is in use by another thread (e.g. inside tick/step); one emulator must not \
         be used from two threads at once"
    ))
}

fn check_bank(bank: i64) -> PyResult<usize> {
    if !(0..=0xFFFF).contains(&bank) {
        return Err(PyValueError::new_err(format!(
            "bank {bank} does not exist (banks are numbered 0-65535 at most)"
        )));
    }
    Ok(bank as usize)
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
    pyboy_memory::register(m)?;
    pyboy_input::register(m)?;
    pyboy_tilemap::register(m)?;
    m.add_function(wrap_pyfunction!(_postboot_snapshot, m)?)?;
    vectors::register(m)?;
    files::register(m)?;
    host::register(m)?;
    batch::register(m)?;
    pong::register(m)?;
    Ok(())
}
