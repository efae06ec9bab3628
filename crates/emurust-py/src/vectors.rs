//! `emurust.verify cpu`: SM83 single-step vectors, run in Rust.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Run one SingleStepTests-format file (`.json` or `.json.gz`).
/// Returns {"passed": int, "failed": int, "failures": [{"name", "diffs": [str]}...]}, at most
/// `max_failures` failures listed.
#[pyfunction]
#[pyo3(signature = (path, max_failures=10))]
fn run_vector_file<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    max_failures: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let path = crate::files::user_path(path, "vector file")?;
    let raw = crate::files::read_user_file(py, &path, "vector file")?;
    let label = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let result = py
        .allow_threads(|| {
            emurust_core::sst::parse_bytes(&raw)
                .and_then(|json| emurust_core::sst::run_cases(&json, &label))
        })
        .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
    let d = PyDict::new(py);
    d.set_item("passed", result.passed)?;
    d.set_item("failed", result.failed)?;
    let failures = pyo3::types::PyList::empty(py);
    for f in result.failures.iter().take(max_failures) {
        let fd = PyDict::new(py);
        fd.set_item("file", &f.file)?;
        fd.set_item("name", &f.name)?;
        fd.set_item("diffs", &f.diffs)?;
        failures.append(fd)?;
    }
    d.set_item("failures", failures)?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_vector_file, m)?)?;
    Ok(())
}
