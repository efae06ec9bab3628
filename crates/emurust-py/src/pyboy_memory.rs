//! `PyBoy.memory` for `emurust.PyBoy`: the forms RL code calls thousands of times per step
//! (`memory[addr]`, `memory[addr] = v`, `memory[bank, addr]`, `memory[a:b]`) answered here
//! without entering Python; every other form, and every form that raises, is passed to the
//! Python view (`emurust/pyboy_api/memory.py`), which has PyBoy's rules and messages. A key
//! takes the fast path only when the Python view would give the same answer without raising.

use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PySlice, PyTuple};

use crate::{busy, guarded, PyGameBoy};

const C_INT_MIN: i64 = i32::MIN as i64;
const C_INT_MAX: i64 = i32::MAX as i64;

/// An int key or value as i64 (bool included, as Python's `isinstance(x, int)`), else None.
fn small_int(obj: &Bound<'_, PyAny>) -> Option<i64> {
    obj.downcast::<PyInt>().ok()?.extract::<i64>().ok()
}

/// A byte value the Python view's `_u8` accepts unchanged (an int 0-255).
fn byte_value(obj: &Bound<'_, PyAny>) -> Option<u8> {
    small_int(obj).and_then(|v| u8::try_from(v).ok())
}

/// Where a banked single address lives, for the cases that cannot raise.
enum Banked {
    Rom(usize, u16),
    Vram(usize),
    CartRam(usize, usize),
    Wram(usize),
}

#[pyclass(module = "emurust._core", name = "PyBoyMemoryView", frozen)]
pub(crate) struct PyBoyMemoryView {
    gb: Py<PyGameBoy>,
    /// The Python view (same machine): rare forms and error messages.
    fallback: PyObject,
    rom_banks: i64,
    ram_banks: i64,
}

impl PyBoyMemoryView {
    /// `memory[bank, addr]` on PyBoy's DMG/CGB bank-0 paths and real ROM/RAM banks; None for
    /// everything the Python view decides (boot ROM, CGB banks, phantom RAM, errors).
    fn banked(&self, bank: i64, addr: i64) -> Option<Banked> {
        match addr {
            0..=0x7FFF => {
                let offset = if addr >= 0x4000 { addr - 0x4000 } else { addr };
                (0..self.rom_banks)
                    .contains(&bank)
                    .then_some(Banked::Rom(bank as usize, offset as u16))
            }
            0x8000..=0x9FFF => (bank == 0).then_some(Banked::Vram((addr - 0x8000) as usize)),
            0xA000..=0xBFFF => (0..self.ram_banks)
                .contains(&bank)
                .then_some(Banked::CartRam(bank as usize, (addr - 0xA000) as usize)),
            0xC000..=0xDFFF => {
                (bank == 0).then_some(Banked::Wram(((addr - 0xC000) & 0x0FFF) as usize))
            }
            _ => None,
        }
    }

    /// A `(bank, addr)` key of two small ints that `banked` places; None for every other tuple.
    fn banked_key(&self, tuple: &Bound<'_, PyTuple>) -> PyResult<Option<Banked>> {
        if tuple.len() != 2 {
            return Ok(None);
        }
        let (Some(bank), Some(addr)) = (
            small_int(&tuple.get_item(0)?),
            small_int(&tuple.get_item(1)?),
        ) else {
            return Ok(None);
        };
        Ok(self.banked(bank, addr))
    }

    fn fast_get(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<PyObject>> {
        if let Some(addr) = small_int(key) {
            if !(C_INT_MIN..=C_INT_MAX).contains(&addr) {
                return Ok(None);
            }
            let mut this = self
                .gb
                .bind(py)
                .try_borrow_mut()
                .map_err(|_| busy("GameBoy"))?;
            let gb = &mut this.gb;
            let v = guarded("read", || gb.read_cpu(addr as u16))?;
            return Ok(Some(v.into_pyobject(py)?.into_any().unbind()));
        }
        if let Ok(tuple) = key.downcast::<PyTuple>() {
            let Some(place) = self.banked_key(tuple)? else {
                return Ok(None);
            };
            let this = self.gb.bind(py).try_borrow().map_err(|_| busy("GameBoy"))?;
            let bus = &this.gb.bus;
            let v = match place {
                Banked::Rom(bank, offset) => bus.cart.read_rom_banked(bank, offset),
                Banked::Vram(i) => bus.lcd.vram.get(i).copied(),
                Banked::CartRam(bank, offset) => {
                    bus.cart.ram().get(bank * 0x2000 + offset).copied()
                }
                Banked::Wram(i) => bus.wram.get(i).copied(),
            };
            return Ok(match v {
                Some(v) => Some(v.into_pyobject(py)?.into_any().unbind()),
                None => None,
            });
        }
        if let Ok(slice) = key.downcast::<PySlice>() {
            let (Some(start), Some(stop)) = (
                small_int(&slice.getattr("start")?),
                small_int(&slice.getattr("stop")?),
            ) else {
                return Ok(None);
            };
            let step_obj = slice.getattr("step")?;
            let step = if step_obj.is_none() {
                1
            } else {
                small_int(&step_obj).unwrap_or(0)
            };
            if step <= 0 || !(0..=0xFFFF).contains(&start) || !(start < stop && stop <= 0x10000) {
                return Ok(None);
            }
            let mut this = self
                .gb
                .bind(py)
                .try_borrow_mut()
                .map_err(|_| busy("GameBoy"))?;
            let gb = &mut this.gb;
            let bytes: Vec<u8> = guarded("read", || {
                (start..stop)
                    .step_by(step as usize)
                    .map(|a| gb.read_cpu(a as u16))
                    .collect()
            })?;
            return Ok(Some(PyList::new(py, bytes)?.into_any().unbind()));
        }
        Ok(None)
    }

    fn fast_set(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let Some(value) = byte_value(value) else {
            return Ok(false);
        };
        if let Some(addr) = small_int(key) {
            if !(C_INT_MIN..=C_INT_MAX).contains(&addr) {
                return Ok(false);
            }
            let mut this = self
                .gb
                .bind(py)
                .try_borrow_mut()
                .map_err(|_| busy("GameBoy"))?;
            let gb = &mut this.gb;
            guarded("write", || gb.bus.poke(addr as u16, value))?;
            return Ok(true);
        }
        if let Ok(tuple) = key.downcast::<PyTuple>() {
            let Some(place) = self.banked_key(tuple)? else {
                return Ok(false);
            };
            let mut this = self
                .gb
                .bind(py)
                .try_borrow_mut()
                .map_err(|_| busy("GameBoy"))?;
            let bus = &mut this.gb.bus;
            let slot = match place {
                Banked::Rom(bank, offset) => {
                    return Ok(bus.cart.override_rom(bank, offset as usize, value))
                }
                Banked::Vram(i) => bus.lcd.vram.get_mut(i),
                Banked::CartRam(bank, offset) => bus.cart.ram_mut().get_mut(bank * 0x2000 + offset),
                Banked::Wram(i) => bus.wram.get_mut(i),
            };
            return Ok(match slot {
                Some(slot) => {
                    *slot = value;
                    true
                }
                None => false,
            });
        }
        Ok(false)
    }
}

#[pymethods]
impl PyBoyMemoryView {
    #[new]
    fn new(
        py: Python<'_>,
        gb: Py<PyGameBoy>,
        fallback: PyObject,
        rom_banks: i64,
        ram_banks: i64,
    ) -> Self {
        let _ = py;
        PyBoyMemoryView {
            gb,
            fallback,
            rom_banks,
            ram_banks,
        }
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        match self.fast_get(py, key)? {
            Some(v) => Ok(v),
            None => self.fallback.call_method1(py, "__getitem__", (key,)),
        }
    }

    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        if !self.fast_set(py, key, value)? {
            self.fallback
                .call_method1(py, "__setitem__", (key, value))?;
        }
        Ok(())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.fallback.call_method0(py, "__len__")?.extract(py)
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<PyObject> {
        self.fallback.call_method0(py, "__iter__")
    }
}
