//! `emurust._core.Host`: the hooks that verification and the PyBoy-compatible API use on an
//! emulator (CPU reads with side effects, breakpoints, direct VRAM/WRAM/cartridge RAM access, ROM
//! patches, PyBoy's internal layouts), kept off the user's `GameBoy` as PyBoy keeps its
//! internals apart from its API. `Host(gb)` reaches the same emulator as `gb`.

use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::pyboy_memory::list_fill_item;
use crate::{busy, guarded, PyGameBoy, SCREEN_ROWS};

#[pyclass(module = "emurust._core", name = "Host", frozen)]
pub(crate) struct PyHost {
    gb: Py<PyGameBoy>,
}

#[pymethods]
impl PyHost {
    #[new]
    fn new(gb: Bound<'_, PyGameBoy>) -> Self {
        PyHost { gb: gb.unbind() }
    }

    /// The emulator this host reaches.
    #[getter]
    fn gameboy(&self, py: Python<'_>) -> Py<PyGameBoy> {
        self.gb.clone_ref(py)
    }

    /// Write VRAM byte `i` (0-0x1FFF) of `bank` (0, or 1 on Game Boy Color hardware) directly,
    /// whatever bank the CPU sees: PyBoy's `memory[bank, 0x8000 + i] = value`.
    fn set_vram_bank_byte(&self, py: Python<'_>, bank: i64, i: usize, value: u8) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_set_vram_bank_byte(&mut this, bank, i, value)
    }

    /// Write work RAM byte `i` (0-0xFFF) of `bank` (0, or 1-7 on Game Boy Color hardware)
    /// directly, whatever bank the CPU sees: PyBoy's `memory[bank, 0xD000 + i] = value`.
    fn set_wram_bank_byte(&self, py: Python<'_>, bank: i64, i: usize, value: u8) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        if i >= 0x1000 {
            return Err(PyValueError::new_err(
                "work RAM index (0-0xFFF within a bank)",
            ));
        }
        match bank {
            0 => this.gb.bus.wram[i] = value,
            1..=7 if this.gb.is_cgb() => this.gb.bus.set_wram_banked(bank as usize, i, value),
            1 => this.gb.bus.wram[0x1000 + i] = value,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "work RAM bank {bank} does not exist on this hardware"
                )))
            }
        }
        Ok(())
    }

    /// Trace the address of every instruction from now on (for `pc_trace`), or stop. Off by
    /// default: the trace costs 1-2% of the emulator's time on a busy game.
    fn set_pc_trace(&self, py: Python<'_>, on: bool) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        this.gb.set_pc_trace(on);
        Ok(())
    }

    /// Addresses of the last instructions executed (at most 32, all traced since
    /// `set_pc_trace(True)`), oldest first; ValueError while the trace is off.
    fn pc_trace(&self, py: Python<'_>) -> PyResult<Vec<u16>> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_pc_trace(&this)
    }

    /// LD B,B (opcode 0x40), the breakpoint of emulator test ROMs: None if none executed yet,
    /// else {"count": executions so far, "pc": address of the first, and the registers
    /// "a".."l", "sp" when the first executed}. Not part of save states.
    fn ld_b_b<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_ld_b_b(&this, py)
    }

    // ------------------------------------------------------------------------------------
    // Host access used by `emurust.PyBoy` (PyBoy 2.8.1's API). Each reproduces what one
    // PyBoy internal does; see `emurust/pyboy_api/` for how they combine.
    /// One CPU register by name (a, f, b, c, d, e, h, l, hl, sp, pc).
    fn register(&self, py: Python<'_>, name: &str) -> PyResult<u16> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_register(&this, name)
    }

    /// Read `addr` as PyBoy's `memory[addr]` does: a CPU read now, with its side effects.
    fn read_cpu(&self, py: Python<'_>, addr: i64) -> PyResult<u8> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_read_cpu(&mut this, addr)
    }

    /// `read_cpu` for every address of `range(start, stop, step)`, in order.
    fn read_cpu_range(
        &self,
        py: Python<'_>,
        start: i64,
        stop: i64,
        step: i64,
    ) -> PyResult<Vec<u8>> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_read_cpu_range(&mut this, start, stop, step)
    }

    /// PyBoy's tile-map reads for rows `ys` x columns `xs` (one list per row): before each
    /// tile, when `refresh`, LCDC is read (selecting the map with `lcdc_map_bit`, 0x08 for the
    /// background or 0x40 for the window, and signed tile numbers when bit 4 is clear); then
    /// the map byte is read and turned into PyBoy's tile identifier. Returns the identifiers
    /// and the map base and signedness in effect at the end. Coordinates must be 0-31.
    #[allow(clippy::too_many_arguments)]
    fn tilemap_read(
        &self,
        py: Python<'_>,
        lcdc_map_bit: u8,
        xs: Vec<u16>,
        ys: Vec<u16>,
        refresh: bool,
        map_offset: u16,
        signed: bool,
    ) -> PyResult<(Vec<Vec<u16>>, u16, bool)> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_tilemap_read(&mut this, lcdc_map_bit, xs, ys, refresh, map_offset, signed)
    }

    /// OAM (160 bytes) and LCDC as PyBoy's sprite objects read them (bus reads, now).
    fn oam_read<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyBytes>, u8)> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_oam_read(&mut this, py)
    }

    /// Enable 0xDB as PyBoy's breakpoint opcode (only while hooks are registered; `tick`
    /// must not be used then, see `run_to_break`).
    fn set_breakpoints_enabled(&self, py: Python<'_>, on: bool) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_set_breakpoints_enabled(&mut this, on);
        Ok(())
    }

    /// Start a frame (what PyBoy does before running one): render and sound flags.
    fn begin_frame(&self, py: Python<'_>, render: bool, sound: bool) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_begin_frame(&mut this, render, sound);
        Ok(())
    }

    /// Run the frame until it ends (True) or a breakpoint stops it (False).
    fn run_to_break(&self, py: Python<'_>) -> PyResult<bool> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_run_to_break(&mut this, py)
    }

    /// PyBoy's single step after a hook (one 4-cycle slice); True if it hit a breakpoint.
    fn single_step(&self, py: Python<'_>) -> PyResult<bool> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_single_step(&mut this)
    }

    #[getter]
    fn frame_done(&self, py: Python<'_>) -> PyResult<bool> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(PyGameBoy::impl_frame_done(&this))
    }

    /// Count a frame that ended during `single_step`.
    fn count_frame(&self, py: Python<'_>) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_count_frame(&mut this);
        Ok(())
    }

    /// The boot ROM's byte (None without a boot ROM or past its end).
    fn boot_rom_byte(&self, py: Python<'_>, i: usize) -> PyResult<Option<u8>> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(PyGameBoy::impl_boot_rom_byte(&this, i))
    }

    fn set_boot_rom_byte(&self, py: Python<'_>, i: usize, value: u8) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_set_boot_rom_byte(&mut this, i, value)
    }

    #[getter]
    fn boot_rom_mapped(&self, py: Python<'_>) -> PyResult<bool> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(PyGameBoy::impl_boot_rom_mapped(&this))
    }

    /// Overwrite a ROM byte of a bank (offset 0-0x3FFF); not part of save states.
    fn override_rom(&self, py: Python<'_>, bank: usize, offset: usize, value: u8) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_override_rom(&mut this, bank, offset, value)
    }

    /// VRAM byte `i` (0-0x1FFF), directly.
    fn vram_byte(&self, py: Python<'_>, i: usize) -> PyResult<u8> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_vram_byte(&this, i)
    }

    fn set_vram_byte(&self, py: Python<'_>, i: usize, value: u8) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_set_vram_byte(&mut this, i, value)
    }

    /// Work RAM byte `i` (0-0x1FFF), directly.
    fn wram_byte(&self, py: Python<'_>, i: usize) -> PyResult<u8> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_wram_byte(&this, i)
    }

    fn set_wram_byte(&self, py: Python<'_>, i: usize, value: u8) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_set_wram_byte(&mut this, i, value)
    }

    /// Cartridge RAM byte `offset` (0-0x1FFF) of `bank`, directly (None past the end).
    fn cart_ram_byte(&self, py: Python<'_>, bank: usize, offset: usize) -> PyResult<Option<u8>> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(PyGameBoy::impl_cart_ram_byte(&this, bank, offset))
    }

    fn set_cart_ram_byte(
        &self,
        py: Python<'_>,
        bank: usize,
        offset: usize,
        value: u8,
    ) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_set_cart_ram_byte(&mut this, bank, offset, value)
    }

    /// Lock the MBC3 clock (PyBoy's `rtc_lock_experimental`): it stands still, writes to its
    /// registers are ignored and a latch reads zeros. Raises without a clock on the cartridge.
    fn set_rtc_lock(&self, py: Python<'_>, locked: bool) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        match this.gb.bus.cart.rtc_mut() {
            Some(rtc) => {
                rtc.set_locked(locked);
                Ok(())
            }
            None => Err(PyValueError::new_err(
                "this cartridge has no real-time clock",
            )),
        }
    }

    /// Static cartridge facts: rom_banks, ram_banks, battery, rtc, cgb_flag (byte 0x143).
    fn cartridge_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_cartridge_info(&this, py)
    }

    /// (ROM bank at 4000-7FFF, selected RAM bank or RTC register): PyBoy's
    /// `rombank_selected`, `rambank_selected`.
    fn selected_banks(&self, py: Python<'_>) -> PyResult<(usize, usize)> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(PyGameBoy::impl_selected_banks(&this))
    }

    /// Set DIV keeping the counter's low byte (PyBoy game wrappers' `timer_div`).
    fn set_div(&self, py: Python<'_>, value: u8) -> PyResult<()> {
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        PyGameBoy::impl_set_div(&mut this, value);
        Ok(())
    }

    /// Per screen line: [SCX, SCY, WX, WY] as drawn.
    fn line_parameters(&self, py: Python<'_>) -> PyResult<Vec<[u8; 4]>> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(PyGameBoy::impl_line_parameters(&this))
    }

    /// PyBoy's reads for `tilemap[x, y]` after frame 0: LCDC (choosing the map with
    /// `lcdc_map_bit` and the signedness from bit 4), then the map byte; returns the tile
    /// identifier, the map base and the signedness. `x` and `y` must be 0-31.
    fn tilemap_tile(
        &self,
        py: Python<'_>,
        lcdc_map_bit: u8,
        x: u16,
        y: u16,
    ) -> PyResult<(u16, u16, bool)> {
        if x >= 32 || y >= 32 {
            return Err(PyValueError::new_err("tile map coordinates are 0-31"));
        }
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        let gb = &mut this.gb;
        guarded("read", || {
            let lcdc = gb.read_cpu(0xFF40);
            let base = if lcdc & lcdc_map_bit != 0 {
                0x9C00
            } else {
                0x9800
            };
            let signed = lcdc & 0x10 == 0;
            let tile = gb.read_cpu(base + 32 * y + x) as u16;
            let id = if signed && tile < 0x80 {
                tile + 0x100
            } else {
                tile
            };
            (id, base, signed)
        })
    }

    /// PyBoy's reads for `get_sprite(index)`: the four OAM bytes of the entry, then LCDC.
    fn oam_entry(&self, py: Python<'_>, index: u16) -> PyResult<(u8, u8, u8, u8, u8)> {
        if index >= 40 {
            return Err(PyValueError::new_err("sprite index is 0-39"));
        }
        let slf = self.gb.bind(py);
        let mut this = slf.try_borrow_mut().map_err(|_| busy("GameBoy"))?;
        let gb = &mut this.gb;
        let base = 0xFE00 + 4 * index;
        guarded("read", || {
            (
                gb.read_cpu(base),
                gb.read_cpu(base + 1),
                gb.read_cpu(base + 2),
                gb.read_cpu(base + 3),
                gb.read_cpu(0xFF40),
            )
        })
    }

    /// PyBoy's `screen.tilemap_position_list`: per screen line `[SCX, SCY, WX - 7, WY]` as
    /// the line was drawn (all zeros while the LCD is off), built here in one call.
    fn tilemap_position_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        let on = this.gb.bus.peek(0xFF40) & 0x80 != 0;
        let lines = this.gb.bus.lcd.line_parameters();
        // Built with the C API directly: pyo3's generic conversion costs twice PyBoy's time here.
        // The values (0-255, and WX - 7 down to -7) come from a table of int objects made
        // once, which saves creating (or looking up) 576 ints per call.
        let ints = position_ints(py);
        // SAFETY: each list is created with its final length and every slot is filled once
        // with an owned reference (list_fill_item steals it: the table's objects are
        // increfed first) before the list is returned; every allocation is checked.
        unsafe {
            let outer =
                Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(SCREEN_ROWS as isize))?;
            for (i, p) in lines.iter().take(SCREEN_ROWS).enumerate() {
                let row = if on {
                    [p[0] as i32, p[1] as i32, p[2] as i32 - 7, p[3] as i32]
                } else {
                    [0; 4]
                };
                let inner = Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(4))?;
                for (j, v) in row.iter().enumerate() {
                    let item = ints[(v + POSITION_INT_MIN_NEG) as usize].as_ptr();
                    pyo3::ffi::Py_INCREF(item);
                    list_fill_item(inner.as_ptr(), j, item);
                }
                list_fill_item(outer.as_ptr(), i, inner.into_ptr());
            }
            Ok(outer)
        }
    }

    /// The whole sound sample buffer (int8, interleaved stereo) and the number of valid values.
    fn sound_buffer<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyArray1<i8>>, usize)> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(PyGameBoy::impl_sound_buffer(&this, py))
    }

    /// Length of a PyBoy 2.8.1 state of this cartridge, and the renderer section's offset.
    fn pyboy_state_layout(&self, py: Python<'_>) -> PyResult<(usize, usize)> {
        let slf = self.gb.bind(py);
        let this = slf.try_borrow().map_err(|_| busy("GameBoy"))?;
        Ok(PyGameBoy::impl_pyboy_state_layout(&this))
    }
}

/// `tilemap_position_list` values run from -7 (WX - 7) to 255.
const POSITION_INT_MIN_NEG: i32 = 7;

/// Int objects for -7..=255, index `v + 7`, made once.
fn position_ints(py: Python<'_>) -> &'static [Py<PyAny>] {
    static INTS: std::sync::OnceLock<Vec<Py<PyAny>>> = std::sync::OnceLock::new();
    INTS.get_or_init(|| {
        (-POSITION_INT_MIN_NEG..=255)
            .map(|v| {
                v.into_pyobject(py)
                    .expect("a small int")
                    .into_any()
                    .unbind()
            })
            .collect()
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyHost>()
}
