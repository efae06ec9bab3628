//! `PyBoy.send_input(event)` for `emurust.PyBoy`: a method descriptor of the class, with
//! CPython's fast calling convention (no Python frame, no pyo3 trampoline). The common call
//! (one event number of PyBoy's, no delay) appends the shared event object to the instance's
//! `_events` list here; every other form calls the Python method `_send_input_py`, which has
//! PyBoy's rules.

use std::ptr;
use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};

use crate::pyboy_memory::{exact_int_in, slow_ptr};

/// PyBoy's shared event objects by number, and the interned attribute names used here.
struct Shared {
    events: Vec<Py<PyAny>>,
    events_attr: Py<PyString>,
}

static SHARED: OnceLock<Shared> = OnceLock::new();

/// The fast path: one positional exact int naming a known event, with `_events` a list.
unsafe fn append_event(slf: *mut ffi::PyObject, event: *mut ffi::PyObject) -> bool {
    let Some(shared) = SHARED.get() else {
        return false;
    };
    let Some(n) = exact_int_in(event, 0, shared.events.len() as std::ffi::c_long - 1) else {
        return false;
    };
    let events = ffi::PyObject_GetAttr(slf, shared.events_attr.as_ptr());
    if events.is_null() {
        ffi::PyErr_Clear();
        return false;
    }
    let ok = ffi::Py_TYPE(events) == ptr::addr_of_mut!(ffi::PyList_Type)
        && ffi::PyList_Append(events, shared.events[n as usize].as_ptr()) == 0;
    ffi::Py_DECREF(events);
    if !ok {
        ffi::PyErr_Clear();
    }
    ok
}

unsafe extern "C" fn send_input(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    if nargs == 1 && kwnames.is_null() && append_event(slf, *args) {
        let none = ffi::Py_None();
        ffi::Py_INCREF(none);
        return none;
    }
    slow_ptr(|py| {
        let slf = Bound::from_borrowed_ptr(py, slf);
        let positional: Vec<Bound<'_, PyAny>> = (0..nargs as usize)
            .map(|i| Bound::from_borrowed_ptr(py, *args.add(i)))
            .collect();
        let kwargs = PyDict::new(py);
        if !kwnames.is_null() {
            let names = Bound::from_borrowed_ptr(py, kwnames);
            for (i, name) in names.downcast::<PyTuple>()?.iter().enumerate() {
                kwargs.set_item(
                    name,
                    Bound::from_borrowed_ptr(py, *args.add(nargs as usize + i)),
                )?;
            }
        }
        Ok(slf
            .getattr("_send_input_py")?
            .call(PyTuple::new(py, positional)?, Some(&kwargs))?
            .into_ptr())
    })
}

static mut SEND_INPUT_DEF: ffi::PyMethodDef = ffi::PyMethodDef {
    ml_name: c"send_input".as_ptr(),
    ml_meth: ffi::PyMethodDefPointer {
        PyCFunctionFastWithKeywords: send_input,
    },
    ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
    ml_doc: c"send_input($self, event, delay=0)\n--\n\nQueue a WindowEvent for the next frame, or `delay` frames later."
        .as_ptr(),
};

/// `_send_input_method(cls, event_objects)`: the `send_input` method descriptor for `cls`
/// (instances of which have an `_events` list and a `_send_input_py` method);
/// `event_objects[n]` is the object queued for event number `n`.
#[pyfunction]
fn _send_input_method<'py>(
    py: Python<'py>,
    cls: Bound<'py, PyType>,
    event_objects: Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyAny>> {
    let events: Vec<Py<PyAny>> = event_objects.iter().map(|e| e.unbind()).collect();
    let _ = SHARED.set(Shared {
        events,
        events_attr: PyString::intern(py, "_events").unbind(),
    });
    // SAFETY: the method definition is static and never written; the descriptor keeps `cls`.
    unsafe {
        let d = ffi::PyDescr_NewMethod(
            cls.as_ptr() as *mut ffi::PyTypeObject,
            ptr::addr_of_mut!(SEND_INPUT_DEF),
        );
        if d.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, d))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_send_input_method, m)?)
}
