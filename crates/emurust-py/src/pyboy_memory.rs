//! `PyBoy.memory` and `PyBoy.register_file` for `emurust.PyBoy`: the forms RL code calls
//! thousands of times per step (`memory[addr]`, `memory[addr] = v`, `memory[bank, addr]`,
//! `memory[a:b]`, `register_file.A`) answered here without entering Python; every other form,
//! and every form that raises, is passed to the Python view (`emurust/pyboy_api/memory.py`),
//! which has PyBoy's rules and messages. A key takes the fast path only when the Python view
//! would give the same answer without raising.
//!
//! Both types are written against CPython's C API (type slots) rather than as pyo3 classes:
//! pyo3's method trampoline (type check, borrow flag, panic and GIL bookkeeping) cost more per
//! `memory[addr]` than the read itself, more than PyBoy's Cython slot. The slots read the core
//! through the `GbSlot` of the `GameBoy` they keep alive, refuse while it is busy (a tick with
//! the GIL released), catch every panic, and take pyo3's ordinary path for the rare forms.

use std::ffi::{c_int, c_long, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicU8, Ordering};

use emurust_core::GameBoy as CoreGameBoy;
use pyo3::exceptions::{PyNotImplementedError, PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PySlice, PyTuple, PyType};

use crate::gb_box::GbSlot;
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

#[repr(C)]
struct MemoryViewObject {
    ob_base: ffi::PyObject,
    /// The `GameBoy` (strong reference): keeps `core` alive.
    owner: *mut ffi::PyObject,
    core: *mut GbSlot,
    /// The Python view (same machine, strong reference): rare forms and error messages.
    fallback: *mut ffi::PyObject,
    rom_banks: i64,
    ram_banks: i64,
}

/// The core of a live, idle `GameBoy`, or the error its pyo3 methods would raise.
///
/// # Safety
/// `core` is null (cleared by the garbage collector) or the slot of a `GameBoy` the caller keeps
/// alive; the GIL is held, and the returned reference is dropped before Python code runs.
#[inline(always)]
#[allow(clippy::mut_from_ref)]
pub(crate) unsafe fn idle_core<'a>(core: *mut GbSlot) -> PyResult<&'a mut CoreGameBoy> {
    if core.is_null() {
        return Err(PyRuntimeError::new_err("this emulator has been released"));
    }
    if (*core).is_busy() {
        return Err(busy("GameBoy"));
    }
    Ok(&mut (*core).gb)
}

/// The core when the fast path may use it (live and idle), else None (the slow path then
/// raises the matching error).
#[inline(always)]
pub(crate) unsafe fn fast_core<'a>(core: *mut GbSlot) -> Option<&'a mut CoreGameBoy> {
    if core.is_null() || (*core).is_busy() {
        None
    } else {
        Some(&mut (*core).gb)
    }
}

fn internal_error(what: &str) -> PyErr {
    PyRuntimeError::new_err(format!(
        "emurust internal error during {what}; the emulator state is no longer reliable. Please report this with the ROM and state."
    ))
}

/// Runs a slot's slow path with pyo3 (GIL token, panics caught) and returns CPython's result
/// convention: the new reference, or null with the exception set.
pub(crate) fn slow_ptr(
    f: impl FnOnce(Python<'_>) -> PyResult<*mut ffi::PyObject>,
) -> *mut ffi::PyObject {
    Python::with_gil(|py| match catch_unwind(AssertUnwindSafe(|| f(py))) {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            e.restore(py);
            ptr::null_mut()
        }
        Err(_) => {
            internal_error("a memory access").restore(py);
            ptr::null_mut()
        }
    })
}

/// `slow_ptr` for the slots that return 0 on success and -1 with an exception set.
pub(crate) fn slow_status(f: impl FnOnce(Python<'_>) -> PyResult<()>) -> c_int {
    Python::with_gil(|py| match catch_unwind(AssertUnwindSafe(|| f(py))) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            e.restore(py);
            -1
        }
        Err(_) => {
            internal_error("a memory access").restore(py);
            -1
        }
    })
}

/// How exact ints and tuples are read inline: CPython's object layouts, which the limited API
/// does not promise but every supported version shares (checked once at import, by version).
/// `LAYOUT_NONE` (an unknown version) reads them through the C API instead.
const LAYOUT_NONE: u8 = 0;
/// 3.10-3.11: a long's `ob_size` (signed digit count) then its 30-bit digits.
const LAYOUT_SIZE: u8 = 1;
/// 3.12-3.14: a long's `lv_tag` (digit count << 3 | sign and flag bits) then its digits.
const LAYOUT_TAG: u8 = 2;
static LAYOUT: AtomicU8 = AtomicU8::new(LAYOUT_NONE);

/// Offsets shared by both layouts (64-bit): the word after the object header, then the first
/// digit of a long or item of a tuple.
const VAR_SIZE_OFFSET: usize = 16;
const VAR_ITEMS_OFFSET: usize = 24;

fn detect_layout(py: Python<'_>) -> u8 {
    let v = py.version_info();
    if std::mem::size_of::<usize>() != 8 || v.major != 3 {
        return LAYOUT_NONE;
    }
    match v.minor {
        10 | 11 => LAYOUT_SIZE,
        12..=14 => LAYOUT_TAG,
        _ => LAYOUT_NONE,
    }
}

/// Fills item `i` of a list just made by `PyList_New` with `item` (a new reference, stolen):
/// the list's item array directly where the layout is known (`PyList_SET_ITEM`, which the
/// limited API lacks), else `PyList_SetItem`.
///
/// # Safety
/// `list` is a new list of more than `i` items whose item `i` is still empty.
#[inline(always)]
pub(crate) unsafe fn list_fill_item(list: *mut ffi::PyObject, i: usize, item: *mut ffi::PyObject) {
    if LAYOUT.load(Ordering::Relaxed) == LAYOUT_NONE {
        ffi::PyList_SetItem(list, i as ffi::Py_ssize_t, item);
    } else {
        let items = *((list as *const u8).add(VAR_ITEMS_OFFSET) as *const *mut *mut ffi::PyObject);
        *items.add(i) = item;
    }
}

/// An exact int's value when it has at most one 30-bit digit (0 to 2**30-1, and the negatives
/// with one digit), from its layout; None for other values or an unknown layout.
#[inline(always)]
unsafe fn one_digit_value(obj: *mut ffi::PyObject) -> Option<c_long> {
    let word = *((obj as *const u8).add(VAR_SIZE_OFFSET) as *const isize);
    let digit = *((obj as *const u8).add(VAR_ITEMS_OFFSET) as *const u32) as c_long;
    match LAYOUT.load(Ordering::Relaxed) {
        LAYOUT_SIZE => match word {
            0 => Some(0),
            1 => Some(digit),
            -1 => Some(-digit),
            _ => None,
        },
        LAYOUT_TAG => {
            let (digits, sign) = (word as usize >> 3, word & 3);
            match (digits, sign) {
                (0, _) => Some(0),
                (1, 0) => Some(digit),
                (1, 2) => Some(-digit),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `key` as a C long when it is exactly an int within `lo..=hi`, else None (no error left set).
#[inline(always)]
pub(crate) unsafe fn exact_int_in(
    key: *mut ffi::PyObject,
    lo: c_long,
    hi: c_long,
) -> Option<c_long> {
    if ffi::Py_TYPE(key) != ptr::addr_of_mut!(ffi::PyLong_Type) {
        return None;
    }
    let v = match one_digit_value(key) {
        Some(v) => v,
        None => {
            let v = ffi::PyLong_AsLong(key);
            if v == -1 && !ffi::PyErr_Occurred().is_null() {
                ffi::PyErr_Clear();
                return None;
            }
            v
        }
    };
    (lo..=hi).contains(&v).then_some(v)
}

/// A `(bank, addr)` key that is exactly a tuple of two exact ints, as C longs.
#[inline(always)]
pub(crate) unsafe fn exact_bank_key(key: *mut ffi::PyObject) -> Option<(c_long, c_long)> {
    if ffi::Py_TYPE(key) != ptr::addr_of_mut!(ffi::PyTuple_Type) {
        return None;
    }
    let (len, bank, addr) = if LAYOUT.load(Ordering::Relaxed) == LAYOUT_NONE {
        (
            ffi::PyTuple_Size(key),
            ffi::PyTuple_GetItem(key, 0),
            ffi::PyTuple_GetItem(key, 1),
        )
    } else {
        let items = (key as *const u8).add(VAR_ITEMS_OFFSET) as *const *mut ffi::PyObject;
        let len = *((key as *const u8).add(VAR_SIZE_OFFSET) as *const ffi::Py_ssize_t);
        if len != 2 {
            return None;
        }
        (len, *items, *items.add(1))
    };
    if len != 2 {
        ffi::PyErr_Clear();
        return None;
    }
    let bank = exact_int_in(bank, 0, 0xFFFF)?;
    let addr = exact_int_in(addr, 0, 0xFFFF)?;
    Some((bank, addr))
}

/// Where a banked single address lives, for the cases that cannot raise.
enum Banked {
    Rom(usize, u16),
    Vram(usize),
    CartRam(usize, usize),
    Wram(usize),
}

impl MemoryViewObject {
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

    fn read_banked(gb: &CoreGameBoy, place: Banked) -> Option<u8> {
        let bus = &gb.bus;
        match place {
            Banked::Rom(bank, offset) => bus.cart.read_rom_banked(bank, offset),
            Banked::Vram(i) => bus.lcd.vram.get(i).copied(),
            Banked::CartRam(bank, offset) => bus.cart.ram().get(bank * 0x2000 + offset).copied(),
            Banked::Wram(i) => bus.wram.get(i).copied(),
        }
    }

    /// Writes `value` where `place` says; false where the Python view decides instead.
    fn write_banked(gb: &mut CoreGameBoy, place: Banked, value: u8) -> bool {
        let bus = &mut gb.bus;
        let slot = match place {
            Banked::Rom(bank, offset) => {
                return bus.cart.override_rom(bank, offset as usize, value)
            }
            Banked::Vram(i) => bus.lcd.vram.get_mut(i),
            Banked::CartRam(bank, offset) => bus.cart.ram_mut().get_mut(bank * 0x2000 + offset),
            Banked::Wram(i) => bus.wram.get_mut(i),
        };
        match slot {
            Some(slot) => {
                *slot = value;
                true
            }
            None => false,
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

    /// Every form the slot's inline path did not answer: ints and bools of any range, tuples,
    /// slices (None when the Python view must decide).
    unsafe fn slow_get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<Option<PyObject>> {
        if let Some(addr) = small_int(key) {
            if !(C_INT_MIN..=C_INT_MAX).contains(&addr) {
                return Ok(None);
            }
            let gb = idle_core(self.core)?;
            let v = guarded("read", || gb.read_cpu(addr as u16))?;
            return Ok(Some(v.into_pyobject(py)?.into_any().unbind()));
        }
        if let Ok(tuple) = key.downcast::<PyTuple>() {
            let Some(place) = self.banked_key(tuple)? else {
                return Ok(None);
            };
            let gb = idle_core(self.core)?;
            return Ok(match Self::read_banked(gb, place) {
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
            let gb = idle_core(self.core)?;
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

    /// `slow_get` for writes: true when written, false when the Python view must decide.
    unsafe fn slow_set(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Some(value) = byte_value(value) else {
            return Ok(false);
        };
        if let Some(addr) = small_int(key) {
            if !(C_INT_MIN..=C_INT_MAX).contains(&addr) {
                return Ok(false);
            }
            let gb = idle_core(self.core)?;
            guarded("write", || gb.bus.poke(addr as u16, value))?;
            return Ok(true);
        }
        if let Ok(tuple) = key.downcast::<PyTuple>() {
            let Some(place) = self.banked_key(tuple)? else {
                return Ok(false);
            };
            let gb = idle_core(self.core)?;
            return Ok(Self::write_banked(gb, place, value));
        }
        Ok(false)
    }

    unsafe fn fallback<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if self.fallback.is_null() {
            return Err(PyRuntimeError::new_err("this emulator has been released"));
        }
        Ok(Bound::from_borrowed_ptr(py, self.fallback))
    }
}

/// `memory[key]`: exact ints 0-0xFFFF and `(bank, addr)` tuples inline; the rest in `slow_get`
/// or the Python view.
unsafe extern "C" fn memory_subscript(
    slf: *mut ffi::PyObject,
    key: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let view = &*(slf as *const MemoryViewObject);
    if let Some(addr) = exact_int_in(key, 0, 0xFFFF) {
        if let Some(gb) = fast_core(view.core) {
            if let Ok(v) = catch_unwind(AssertUnwindSafe(|| gb.read_cpu(addr as u16))) {
                return ffi::PyLong_FromLong(v as c_long);
            }
            return slow_ptr(|_| Err(internal_error("read")));
        }
    } else if let Some((bank, addr)) = exact_bank_key(key) {
        if let (Some(place), Some(gb)) = (view.banked(bank, addr), fast_core(view.core)) {
            if let Some(v) = MemoryViewObject::read_banked(gb, place) {
                return ffi::PyLong_FromLong(v as c_long);
            }
        }
    }
    slow_ptr(|py| {
        let key = Bound::from_borrowed_ptr(py, key);
        match view.slow_get(py, &key)? {
            Some(v) => Ok(v.into_ptr()),
            None => Ok(view
                .fallback(py)?
                .call_method1("__getitem__", (key,))?
                .into_ptr()),
        }
    })
}

/// `memory[key] = value` (`value` null: `del memory[key]`, which PyBoy does not support).
unsafe extern "C" fn memory_ass_subscript(
    slf: *mut ffi::PyObject,
    key: *mut ffi::PyObject,
    value: *mut ffi::PyObject,
) -> c_int {
    let view = &*(slf as *const MemoryViewObject);
    if value.is_null() {
        return slow_status(|_| {
            Err(PyNotImplementedError::new_err(
                "Subscript deletion not supported by emurust PyBoyMemoryView",
            ))
        });
    }
    if let Some(byte) = exact_int_in(value, 0, 0xFF) {
        if let Some(addr) = exact_int_in(key, 0, 0xFFFF) {
            if let Some(gb) = fast_core(view.core) {
                let wrote = catch_unwind(AssertUnwindSafe(|| gb.bus.poke(addr as u16, byte as u8)));
                return match wrote {
                    Ok(()) => 0,
                    Err(_) => slow_status(|_| Err(internal_error("write"))),
                };
            }
        } else if let Some((bank, addr)) = exact_bank_key(key) {
            if let (Some(place), Some(gb)) = (view.banked(bank, addr), fast_core(view.core)) {
                if MemoryViewObject::write_banked(gb, place, byte as u8) {
                    return 0;
                }
            }
        }
    }
    slow_status(|py| {
        let key = Bound::from_borrowed_ptr(py, key);
        let value = Bound::from_borrowed_ptr(py, value);
        if !view.slow_set(&key, &value)? {
            view.fallback(py)?
                .call_method1("__setitem__", (key, value))?;
        }
        Ok(())
    })
}

unsafe extern "C" fn memory_length(slf: *mut ffi::PyObject) -> ffi::Py_ssize_t {
    let view = &*(slf as *const MemoryViewObject);
    let mut n: ffi::Py_ssize_t = -1;
    let status = slow_status(|py| {
        n = view.fallback(py)?.call_method0("__len__")?.extract()?;
        Ok(())
    });
    if status == 0 {
        n
    } else {
        -1
    }
}

unsafe extern "C" fn memory_iter(slf: *mut ffi::PyObject) -> *mut ffi::PyObject {
    let view = &*(slf as *const MemoryViewObject);
    slow_ptr(|py| Ok(view.fallback(py)?.call_method0("__iter__")?.into_ptr()))
}

/// `PyBoyMemoryView(gb, fallback, rom_banks, ram_banks)`.
unsafe extern "C" fn memory_new(
    subtype: *mut ffi::PyTypeObject,
    args: *mut ffi::PyObject,
    kwds: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    slow_ptr(|py| {
        reject_keywords(kwds, "PyBoyMemoryView")?;
        let args = Bound::from_borrowed_ptr(py, args);
        let (gb, fallback, rom_banks, ram_banks): (Bound<'_, PyGameBoy>, PyObject, i64, i64) =
            args.extract()?;
        let core = gb.try_borrow().map_err(|_| busy("GameBoy"))?.gb.slot_ptr();
        let obj = alloc_instance(py, subtype)?;
        let view = obj as *mut MemoryViewObject;
        (*view).owner = gb.into_ptr();
        (*view).core = core;
        (*view).fallback = fallback.into_ptr();
        (*view).rom_banks = rom_banks;
        (*view).ram_banks = ram_banks;
        Ok(obj)
    })
}

/// A zeroed instance of `subtype` from its own allocator (tracked by the GC when it has GC).
pub(crate) unsafe fn alloc_instance(
    py: Python<'_>,
    subtype: *mut ffi::PyTypeObject,
) -> PyResult<*mut ffi::PyObject> {
    let alloc = ffi::PyType_GetSlot(subtype, ffi::Py_tp_alloc);
    let alloc: ffi::allocfunc = if alloc.is_null() {
        ffi::PyType_GenericAlloc
    } else {
        std::mem::transmute::<*mut c_void, ffi::allocfunc>(alloc)
    };
    let obj = alloc(subtype, 0);
    if obj.is_null() {
        return Err(PyErr::fetch(py));
    }
    Ok(obj)
}

unsafe extern "C" fn memory_traverse(
    slf: *mut ffi::PyObject,
    visit: ffi::visitproc,
    arg: *mut c_void,
) -> c_int {
    let view = &*(slf as *const MemoryViewObject);
    visit_references([view.owner, view.fallback], visit, arg)
}

unsafe extern "C" fn memory_clear(slf: *mut ffi::PyObject) -> c_int {
    let view = slf as *mut MemoryViewObject;
    (*view).core = ptr::null_mut();
    clear_references([
        ptr::addr_of_mut!((*view).owner),
        ptr::addr_of_mut!((*view).fallback),
    ]);
    0
}

unsafe extern "C" fn memory_dealloc(slf: *mut ffi::PyObject) {
    ffi::PyObject_GC_UnTrack(slf as *mut c_void);
    memory_clear(slf);
    free_instance(slf);
}

/// A `tp_traverse` body: visit each object reference an instance holds (null ones skipped).
pub(crate) unsafe fn visit_references<const N: usize>(
    objs: [*mut ffi::PyObject; N],
    visit: ffi::visitproc,
    arg: *mut c_void,
) -> c_int {
    for obj in objs {
        if !obj.is_null() {
            let r = visit(obj, arg);
            if r != 0 {
                return r;
            }
        }
    }
    0
}

/// A `tp_clear` body: null each reference field, then drop what it held.
pub(crate) unsafe fn clear_references<const N: usize>(fields: [*mut *mut ffi::PyObject; N]) {
    for field in fields {
        let obj = std::mem::replace(&mut *field, ptr::null_mut());
        if !obj.is_null() {
            ffi::Py_DECREF(obj);
        }
    }
}

/// `tp_new`'s refusal of keyword arguments, with CPython's message.
pub(crate) unsafe fn reject_keywords(kwds: *mut ffi::PyObject, type_name: &str) -> PyResult<()> {
    if !kwds.is_null() && ffi::PyDict_Size(kwds) != 0 {
        return Err(PyTypeError::new_err(format!(
            "{type_name}() takes no keyword arguments"
        )));
    }
    Ok(())
}

/// Frees an instance with its type's `tp_free` and drops the instance's reference to its
/// (heap) type.
pub(crate) unsafe fn free_instance(slf: *mut ffi::PyObject) {
    let tp = ffi::Py_TYPE(slf);
    let free = ffi::PyType_GetSlot(tp, ffi::Py_tp_free);
    if !free.is_null() {
        std::mem::transmute::<*mut c_void, ffi::freefunc>(free)(slf as *mut c_void);
    }
    ffi::Py_DECREF(tp as *mut ffi::PyObject);
}

// ------------------------------------------------------------------------------ register file

#[repr(C)]
struct RegisterFileObject {
    ob_base: ffi::PyObject,
    /// The `GameBoy` (strong reference): keeps `core` alive.
    owner: *mut ffi::PyObject,
    core: *mut GbSlot,
}

/// PyBoy's register attributes, in `REGISTER_NAMES` order, with the mask a write applies.
const REGISTER_NAMES: [&CStr; 9] = [c"A", c"F", c"B", c"C", c"D", c"E", c"HL", c"SP", c"PC"];
const REGISTER_MASKS: [c_long; 9] = [0xFF, 0xF0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFFFF, 0xFFFF, 0xFFFF];

fn read_register(gb: &CoreGameBoy, index: usize) -> u16 {
    let r = &gb.cpu.r;
    match index {
        0 => r.a as u16,
        1 => r.f as u16,
        2 => r.b as u16,
        3 => r.c as u16,
        4 => r.d as u16,
        5 => r.e as u16,
        6 => r.hl(),
        7 => r.sp,
        _ => r.pc,
    }
}

/// Sets register `index` to `value`, already masked to the register's width.
fn write_register(gb: &mut CoreGameBoy, index: usize, value: u16) {
    let r = &mut gb.cpu.r;
    match index {
        0 => r.a = value as u8,
        1 => r.f = value as u8,
        2 => r.b = value as u8,
        3 => r.c = value as u8,
        4 => r.d = value as u8,
        5 => r.e = value as u8,
        6 => [r.h, r.l] = value.to_be_bytes(),
        7 => r.sp = value,
        _ => r.pc = value,
    }
}

unsafe extern "C" fn register_get(
    slf: *mut ffi::PyObject,
    closure: *mut c_void,
) -> *mut ffi::PyObject {
    let rf = &*(slf as *const RegisterFileObject);
    let index = closure as usize;
    match fast_core(rf.core) {
        Some(gb) => ffi::PyLong_FromLong(read_register(gb, index) as c_long),
        None => slow_ptr(|_| {
            idle_core(rf.core)?;
            Err(internal_error("a register read"))
        }),
    }
}

/// `register_file.X = value`: `value & mask` with Python's `&` (so a negative int wraps and a
/// non-int raises Python's TypeError, as on PyBoy).
unsafe extern "C" fn register_set(
    slf: *mut ffi::PyObject,
    value: *mut ffi::PyObject,
    closure: *mut c_void,
) -> c_int {
    let rf = &*(slf as *const RegisterFileObject);
    let index = closure as usize;
    let mask = REGISTER_MASKS[index];
    if !value.is_null() {
        if let (Some(v), Some(gb)) = (
            exact_int_in(value, c_long::MIN, c_long::MAX),
            fast_core(rf.core),
        ) {
            write_register(gb, index, (v & mask) as u16);
            return 0;
        }
    }
    slow_status(|py| {
        if value.is_null() {
            // PyBoy's compiled register file has no deleters.
            return Err(PyNotImplementedError::new_err("__del__"));
        }
        let value = Bound::from_borrowed_ptr(py, value);
        let masked: u16 = value.bitand(mask)?.extract()?;
        let gb = idle_core(rf.core)?;
        write_register(gb, index, masked);
        Ok(())
    })
}

/// `PyBoyRegisterFile(gb)`: `gb` is the `GameBoy`, or an object (the `PyBoy`) whose `_gb` is.
unsafe extern "C" fn register_file_new(
    subtype: *mut ffi::PyTypeObject,
    args: *mut ffi::PyObject,
    kwds: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    slow_ptr(|py| {
        reject_keywords(kwds, "PyBoyRegisterFile")?;
        let args = Bound::from_borrowed_ptr(py, args);
        let (arg,): (Bound<'_, PyAny>,) = args.extract()?;
        let gb = match arg.downcast::<PyGameBoy>() {
            Ok(gb) => gb.clone(),
            Err(_) => arg.getattr("_gb")?.downcast_into::<PyGameBoy>()?,
        };
        let core = gb.try_borrow().map_err(|_| busy("GameBoy"))?.gb.slot_ptr();
        let obj = alloc_instance(py, subtype)?;
        let rf = obj as *mut RegisterFileObject;
        (*rf).owner = gb.into_ptr();
        (*rf).core = core;
        Ok(obj)
    })
}

unsafe extern "C" fn register_file_dealloc(slf: *mut ffi::PyObject) {
    let rf = slf as *mut RegisterFileObject;
    (*rf).core = ptr::null_mut();
    let owner = std::mem::replace(&mut (*rf).owner, ptr::null_mut());
    if !owner.is_null() {
        ffi::Py_DECREF(owner);
    }
    free_instance(slf);
}

// ------------------------------------------------------------------------------ the types

pub(crate) fn slot(slot: c_int, pfunc: *mut c_void) -> ffi::PyType_Slot {
    ffi::PyType_Slot { slot, pfunc }
}

/// Creates a heap type from `slots` (a terminator is added).
pub(crate) fn new_type<'py>(
    py: Python<'py>,
    name: &'static CStr,
    basicsize: usize,
    flags: std::ffi::c_uint,
    mut slots: Vec<ffi::PyType_Slot>,
) -> PyResult<Bound<'py, PyType>> {
    slots.push(slot(0, ptr::null_mut()));
    let mut spec = ffi::PyType_Spec {
        name: name.as_ptr(),
        basicsize: basicsize as c_int,
        itemsize: 0,
        flags,
        slots: slots.as_mut_ptr(),
    };
    // SAFETY: the spec and slots are valid for the call (CPython copies what it keeps; the name
    // is static).
    unsafe {
        let tp = ffi::PyType_FromSpec(&mut spec);
        if tp.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, tp).downcast_into_unchecked())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    LAYOUT.store(detect_layout(py), Ordering::Relaxed);
    let memory = new_type(
        py,
        c"emurust._core.PyBoyMemoryView",
        std::mem::size_of::<MemoryViewObject>(),
        (ffi::Py_TPFLAGS_DEFAULT | ffi::Py_TPFLAGS_HAVE_GC) as std::ffi::c_uint,
        vec![
            slot(ffi::Py_mp_subscript, memory_subscript as *mut c_void),
            slot(ffi::Py_mp_ass_subscript, memory_ass_subscript as *mut c_void),
            slot(ffi::Py_mp_length, memory_length as *mut c_void),
            slot(ffi::Py_tp_iter, memory_iter as *mut c_void),
            slot(ffi::Py_tp_new, memory_new as *mut c_void),
            slot(ffi::Py_tp_traverse, memory_traverse as *mut c_void),
            slot(ffi::Py_tp_clear, memory_clear as *mut c_void),
            slot(ffi::Py_tp_dealloc, memory_dealloc as *mut c_void),
            slot(
                ffi::Py_tp_doc,
                c"PyBoy's `memory` for emurust.PyBoy: PyBoyMemoryView(gb, fallback, rom_banks, ram_banks)."
                    .as_ptr() as *mut c_void,
            ),
        ],
    )?;
    m.add("PyBoyMemoryView", memory)?;

    // The getset table must outlive the type: built once, leaked.
    let mut getset: Vec<ffi::PyGetSetDef> = REGISTER_NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| ffi::PyGetSetDef {
            name: name.as_ptr(),
            get: Some(register_get),
            set: Some(register_set),
            doc: ptr::null(),
            closure: i as *mut c_void,
        })
        .collect();
    getset.push(ffi::PyGetSetDef {
        name: ptr::null(),
        get: None,
        set: None,
        doc: ptr::null(),
        closure: ptr::null_mut(),
    });
    let getset: &'static mut [ffi::PyGetSetDef] = Box::leak(getset.into_boxed_slice());
    let registers = new_type(
        py,
        c"emurust._core.PyBoyRegisterFile",
        std::mem::size_of::<RegisterFileObject>(),
        ffi::Py_TPFLAGS_DEFAULT as std::ffi::c_uint,
        vec![
            slot(ffi::Py_tp_getset, getset.as_mut_ptr() as *mut c_void),
            slot(ffi::Py_tp_new, register_file_new as *mut c_void),
            slot(ffi::Py_tp_dealloc, register_file_dealloc as *mut c_void),
            slot(
                ffi::Py_tp_doc,
                c"CPU registers A, F, B, C, D, E, HL, SP, PC. Writes are masked to the register's width (F keeps its upper four bits)."
                    .as_ptr() as *mut c_void,
            ),
        ],
    )?;
    m.add("PyBoyRegisterFile", registers)?;
    Ok(())
}
