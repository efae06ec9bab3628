//! Reading the user's files (ROMs, boot ROMs, save states) from Python arguments.
//!
//! A path argument may name anything: a directory, `/dev/zero`, a FIFO nobody writes to, a file on
//! a failing disk, a name that the file system cannot encode. Each gives a Python exception the
//! user can act on, and nothing blocks or grows without bound: FIFOs and devices are opened without
//! blocking and read in bounded chunks with Ctrl-C honoured between them, and no file is read past
//! [`MAX_FILE_BYTES`].

use std::ffi::OsString;
use std::io::{ErrorKind, Read};
use std::path::PathBuf;
use std::time::Duration;

use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// Larger than any Game Boy ROM (8 MiB), boot ROM or save state; a file past it is refused
/// rather than read into memory (the size of `/dev/zero` is unbounded).
pub(crate) const MAX_FILE_BYTES: usize = 64 << 20;

/// How long one wait for data from a FIFO or device lasts before Ctrl-C is checked again.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// A path (str or os.PathLike) or the bytes themselves.
pub(crate) fn load_bytes(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if !obj.is_instance_of::<PyString>() {
        if let Ok(b) = obj.extract::<Vec<u8>>() {
            return Ok(b);
        }
    }
    let path = user_path(obj, what)?;
    read_user_file(obj.py(), &path, what)
}

/// A str or os.PathLike as a path, encoded as Python's `open()` encodes it: a name the file system
/// cannot encode (a lone surrogate, say) raises `UnicodeEncodeError`, as it does in Python.
pub(crate) fn user_path(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<PathBuf> {
    let py = obj.py();
    let encoded = py
        .import("os")?
        .getattr("fsencode")?
        .call1((obj,))
        .map_err(|e| {
            if e.is_instance_of::<PyTypeError>(py) {
                PyValueError::new_err(format!(
                    "{what} must be a path (str or os.PathLike) or bytes"
                ))
            } else {
                e
            }
        })?;
    let bytes: Vec<u8> = encoded.extract()?;
    Ok(path_from_bytes(bytes))
}

#[cfg(unix)]
fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(OsString::from_vec(bytes))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(OsString::from(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The OSError subclass Python itself would raise for `e` (FileNotFoundError, IsADirectoryError,
/// PermissionError, ...: OSError's constructor picks it from the errno), naming the file.
fn os_error(e: &std::io::Error, what: &str, path: &std::path::Path) -> PyErr {
    let reason = match e.kind() {
        ErrorKind::OutOfMemory => "out of memory".to_string(),
        // io::Error's text ends in " (os error N)"; OSError shows the number already.
        _ => {
            let text = e.to_string();
            match text.find(" (os error ") {
                Some(cut) => text[..cut].to_string(),
                None => text,
            }
        }
    };
    let message = format!("cannot read {what}: {reason}");
    match e.raw_os_error() {
        Some(errno) => PyOSError::new_err((errno, message, path.display().to_string())),
        None => PyOSError::new_err(format!("{message}: {}", path.display())),
    }
}

fn too_large(what: &str, path: &std::path::Path) -> PyErr {
    PyValueError::new_err(format!(
        "{what} {} is larger than {} MiB: not a Game Boy ROM or save state",
        path.display(),
        MAX_FILE_BYTES >> 20
    ))
}

/// Reads a whole file the user named, within [`MAX_FILE_BYTES`], never blocking uninterruptibly.
pub(crate) fn read_user_file(
    py: Python<'_>,
    path: &std::path::Path,
    what: &str,
) -> PyResult<Vec<u8>> {
    let mut file = open_without_blocking(path).map_err(|e| os_error(&e, what, path))?;
    let meta = file.metadata().map_err(|e| os_error(&e, what, path))?;
    if meta.is_dir() {
        let e = std::io::Error::from_raw_os_error(EISDIR);
        return Err(os_error(&e, what, path));
    }
    let mut data = Vec::new();
    if meta.is_file() {
        if meta.len() > MAX_FILE_BYTES as u64 {
            return Err(too_large(what, path));
        }
        data.try_reserve_exact(meta.len() as usize).map_err(|_| {
            pyo3::exceptions::PyMemoryError::new_err(format!("no memory to read {what}"))
        })?;
        // A regular file can still grow while read: take at most one byte past the limit.
        (&mut file)
            .take(MAX_FILE_BYTES as u64 + 1)
            .read_to_end(&mut data)
            .map_err(|e| os_error(&e, what, path))?;
        if data.len() > MAX_FILE_BYTES {
            return Err(too_large(what, path));
        }
        return Ok(data);
    }
    read_stream(py, &mut file, path, what)
}

/// A FIFO, character device or socket: read in chunks until end of file, waiting at most
/// [`SIGNAL_POLL`] at a time so that Ctrl-C raises KeyboardInterrupt.
fn read_stream(
    py: Python<'_>,
    file: &mut std::fs::File,
    path: &std::path::Path,
    what: &str,
) -> PyResult<Vec<u8>> {
    let mut data = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        py.check_signals()?;
        // The GIL is let go while waiting: the writer may be a thread of this same process.
        match py.allow_threads(|| file.read(&mut chunk)) {
            Ok(0) => return Ok(data),
            Ok(n) => {
                if data.len() + n > MAX_FILE_BYTES {
                    return Err(too_large(what, path));
                }
                data.extend_from_slice(&chunk[..n]);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => py.allow_threads(|| wait_readable(file)),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(os_error(&e, what, path)),
        }
    }
}

#[cfg(unix)]
const EISDIR: i32 = libc::EISDIR;
#[cfg(not(unix))]
const EISDIR: i32 = 21;

#[cfg(unix)]
fn open_without_blocking(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO that has no writer would otherwise block in open() itself,
    // where no signal can be checked.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_without_blocking(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(unix)]
fn wait_readable(file: &std::fs::File) {
    use std::os::unix::io::AsRawFd;
    let mut fds = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, for a descriptor `file` keeps open during the call.
    unsafe {
        libc::poll(&mut fds, 1, SIGNAL_POLL.as_millis() as libc::c_int);
    }
}

#[cfg(not(unix))]
fn wait_readable(_file: &std::fs::File) {
    std::thread::sleep(SIGNAL_POLL);
}

/// `read_user_file(path, what)`: the whole file, read as the emulator reads ROMs and states (for
/// the Python side: the PyBoy-compatible API and the environments read through it too).
#[pyfunction]
#[pyo3(name = "read_user_file", signature = (path, what="file"))]
fn py_read_user_file<'py>(path: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, PyBytes>> {
    let py = path.py();
    let path = user_path(path, what)?;
    let data = read_user_file(py, &path, what)?;
    Ok(PyBytes::new(py, &data))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(py_read_user_file, m)?)?;
    Ok(())
}
