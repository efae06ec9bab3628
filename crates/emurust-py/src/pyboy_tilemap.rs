//! The base of `emurust.PyBoy`'s tile maps (`pyboy_api/tilemap.py` `TileMap` derives from it):
//! `tilemap[x, y]` with two ints 0-31 answered by a mapping slot written against CPython's C
//! API (PyBoy's two bus reads: LCDC, then the map byte), and the state that form updates
//! (`map_offset`, `signed_tile_data`) kept here as attributes. Every other form, the tile
//! objects mode and frame 0 go to the Python class's `_getitem_py`, which has PyBoy's rules.

use std::ffi::{c_int, c_long, c_void};
use std::ptr;
use std::sync::OnceLock;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::gb_box::GbSlot;
use crate::pyboy_memory::{
    alloc_instance, clear_references, exact_bank_key, fast_core, free_instance, new_type, slot,
    slow_ptr, slow_status, visit_references,
};
use crate::{busy, PyGameBoy};

#[repr(C)]
struct TileMapObject {
    ob_base: ffi::PyObject,
    /// The `GameBoy` (strong reference): keeps `core` alive.
    owner: *mut ffi::PyObject,
    core: *mut GbSlot,
    /// The `PyBoy` (strong reference): its `_frame_count`.
    pyboy: *mut ffi::PyObject,
    /// LCDC's map-select bit for this map: 0x08 (background) or 0x40 (window).
    lcdc_bit: u8,
    use_tile_objects: bool,
    signed_tile_data: bool,
    map_offset: c_long,
}

static FRAME_COUNT_ATTR: OnceLock<Py<PyString>> = OnceLock::new();

/// True when PyBoy's frame counter is not 0 (PyBoy reads LCDC on every access except in
/// frame 0; then the Python path decides).
unsafe fn past_frame_zero(pyboy: *mut ffi::PyObject) -> bool {
    let Some(name) = FRAME_COUNT_ATTR.get() else {
        return false;
    };
    let count = ffi::PyObject_GetAttr(pyboy, name.as_ptr());
    if count.is_null() {
        ffi::PyErr_Clear();
        return false;
    }
    let nonzero = ffi::PyObject_IsTrue(count);
    ffi::Py_DECREF(count);
    if nonzero < 0 {
        ffi::PyErr_Clear();
        return false;
    }
    nonzero == 1
}

unsafe extern "C" fn tilemap_subscript(
    slf: *mut ffi::PyObject,
    key: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let map = slf as *mut TileMapObject;
    if !(*map).use_tile_objects && !(*map).pyboy.is_null() {
        if let Some((x, y)) = exact_bank_key(key) {
            if x < 32 && y < 32 && past_frame_zero((*map).pyboy) {
                if let Some(gb) = fast_core((*map).core) {
                    let bit = (*map).lcdc_bit;
                    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        let lcdc = gb.read_cpu(0xFF40);
                        let base: u16 = if lcdc & bit != 0 { 0x9C00 } else { 0x9800 };
                        let signed = lcdc & 0x10 == 0;
                        let tile = gb.read_cpu(base + 32 * y as u16 + x as u16) as c_long;
                        (tile, base, signed)
                    }));
                    if let Ok((tile, base, signed)) = read {
                        (*map).map_offset = base as c_long;
                        (*map).signed_tile_data = signed;
                        let id = if signed && tile < 0x80 {
                            tile + 0x100
                        } else {
                            tile
                        };
                        return ffi::PyLong_FromLong(id);
                    }
                }
            }
        }
    }
    slow_ptr(|py| {
        let slf = Bound::from_borrowed_ptr(py, slf);
        let key = Bound::from_borrowed_ptr(py, key);
        Ok(slf.call_method1("_getitem_py", (key,))?.into_ptr())
    })
}

/// `_attach(gb, pyboy, lcdc_bit)`: called once by the Python class's `__init__`.
unsafe extern "C" fn tilemap_attach(
    slf: *mut ffi::PyObject,
    args: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let map = slf as *mut TileMapObject;
    slow_ptr(|py| {
        let args = Bound::from_borrowed_ptr(py, args);
        let (gb, pyboy, lcdc_bit): (Bound<'_, PyGameBoy>, PyObject, u8) = args.extract()?;
        if !(*map).owner.is_null() {
            return Err(PyTypeError::new_err("this tile map is already attached"));
        }
        let core = gb.try_borrow().map_err(|_| busy("GameBoy"))?.gb.slot_ptr();
        (*map).owner = gb.into_ptr();
        (*map).core = core;
        (*map).pyboy = pyboy.into_ptr();
        (*map).lcdc_bit = lcdc_bit;
        Ok(py.None().into_ptr())
    })
}

unsafe extern "C" fn tilemap_new(
    subtype: *mut ffi::PyTypeObject,
    _args: *mut ffi::PyObject,
    _kwds: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    slow_ptr(|py| alloc_instance(py, subtype))
}

unsafe extern "C" fn tilemap_traverse(
    slf: *mut ffi::PyObject,
    visit: ffi::visitproc,
    arg: *mut c_void,
) -> c_int {
    let map = slf as *mut TileMapObject;
    visit_references([(*map).owner, (*map).pyboy], visit, arg)
}

unsafe extern "C" fn tilemap_clear(slf: *mut ffi::PyObject) -> c_int {
    let map = slf as *mut TileMapObject;
    (*map).core = ptr::null_mut();
    clear_references([
        ptr::addr_of_mut!((*map).owner),
        ptr::addr_of_mut!((*map).pyboy),
    ]);
    0
}

unsafe extern "C" fn tilemap_dealloc(slf: *mut ffi::PyObject) {
    ffi::PyObject_GC_UnTrack(slf as *mut c_void);
    tilemap_clear(slf);
    free_instance(slf);
}

unsafe extern "C" fn get_map_offset(slf: *mut ffi::PyObject, _: *mut c_void) -> *mut ffi::PyObject {
    ffi::PyLong_FromLong((*(slf as *mut TileMapObject)).map_offset)
}

unsafe extern "C" fn set_map_offset(
    slf: *mut ffi::PyObject,
    value: *mut ffi::PyObject,
    _: *mut c_void,
) -> c_int {
    slow_status(|py| {
        if value.is_null() {
            return Err(PyTypeError::new_err("map_offset cannot be deleted"));
        }
        let v: c_long = Bound::from_borrowed_ptr(py, value).extract()?;
        (*(slf as *mut TileMapObject)).map_offset = v;
        Ok(())
    })
}

unsafe extern "C" fn get_bool(slf: *mut ffi::PyObject, which: *mut c_void) -> *mut ffi::PyObject {
    let map = slf as *mut TileMapObject;
    let v = if which.is_null() {
        (*map).signed_tile_data
    } else {
        (*map).use_tile_objects
    };
    ffi::PyBool_FromLong(v as c_long)
}

unsafe extern "C" fn set_bool(
    slf: *mut ffi::PyObject,
    value: *mut ffi::PyObject,
    which: *mut c_void,
) -> c_int {
    let map = slf as *mut TileMapObject;
    if value.is_null() {
        return slow_status(|_| Err(PyTypeError::new_err("this attribute cannot be deleted")));
    }
    let truth = ffi::PyObject_IsTrue(value);
    if truth < 0 {
        return -1;
    }
    if which.is_null() {
        (*map).signed_tile_data = truth == 1;
    } else {
        (*map).use_tile_objects = truth == 1;
    }
    0
}

static mut TILEMAP_METHODS: [ffi::PyMethodDef; 2] = [
    ffi::PyMethodDef {
        ml_name: c"_attach".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunction: tilemap_attach,
        },
        ml_flags: ffi::METH_VARARGS,
        ml_doc: c"_attach(gb, pyboy, lcdc_bit): the emulator this tile map reads.".as_ptr(),
    },
    ffi::PyMethodDef::zeroed(),
];

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let _ = FRAME_COUNT_ATTR.set(PyString::intern(py, "_frame_count").unbind());
    let getset: Vec<ffi::PyGetSetDef> = vec![
        ffi::PyGetSetDef {
            name: c"map_offset".as_ptr(),
            get: Some(get_map_offset),
            set: Some(set_map_offset),
            doc: c"The tile map's address (0x9800 or 0x9C00) at the last LCDC read.".as_ptr(),
            closure: ptr::null_mut(),
        },
        ffi::PyGetSetDef {
            name: c"signed_tile_data".as_ptr(),
            get: Some(get_bool),
            set: Some(set_bool),
            doc: c"Whether tile numbers were signed (LCDC bit 4 clear) at the last LCDC read."
                .as_ptr(),
            closure: ptr::null_mut(),
        },
        ffi::PyGetSetDef {
            name: c"_use_tile_objects".as_ptr(),
            get: Some(get_bool),
            set: Some(set_bool),
            doc: ptr::null(),
            // Non-null: the tag that selects `use_tile_objects` in get_bool/set_bool.
            closure: ptr::dangling_mut::<c_void>(),
        },
        ffi::PyGetSetDef {
            name: ptr::null(),
            get: None,
            set: None,
            doc: ptr::null(),
            closure: ptr::null_mut(),
        },
    ];
    let getset: &'static mut [ffi::PyGetSetDef] = Box::leak(getset.into_boxed_slice());
    let tp = new_type(
        py,
        c"emurust._core.TileMapBase",
        std::mem::size_of::<TileMapObject>(),
        (ffi::Py_TPFLAGS_DEFAULT | ffi::Py_TPFLAGS_HAVE_GC | ffi::Py_TPFLAGS_BASETYPE)
            as std::ffi::c_uint,
        vec![
            slot(ffi::Py_mp_subscript, tilemap_subscript as *mut c_void),
            slot(ffi::Py_tp_getset, getset.as_mut_ptr() as *mut c_void),
            // The table is static and never written.
            slot(
                ffi::Py_tp_methods,
                ptr::addr_of_mut!(TILEMAP_METHODS) as *mut c_void,
            ),
            slot(ffi::Py_tp_new, tilemap_new as *mut c_void),
            slot(ffi::Py_tp_traverse, tilemap_traverse as *mut c_void),
            slot(ffi::Py_tp_clear, tilemap_clear as *mut c_void),
            slot(ffi::Py_tp_dealloc, tilemap_dealloc as *mut c_void),
        ],
    )?;
    m.add("TileMapBase", tp)
}
