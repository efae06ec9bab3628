//! Runs every SingleStepTests SM83 vector file and requires all cases to pass.
//!
//! Vectors are read from `$SM83_VECTORS` if set, else from the repository's `tests/data/sm83`
//! (100 cases per opcode, MIT, see its README). A missing directory fails the test with a
//! one-line message naming the setting.

use std::path::PathBuf;

use emurust_core::sst::run_dir;

/// The vector directory and where that choice came from (for the error message).
fn vector_dir() -> (PathBuf, &'static str) {
    match std::env::var_os("SM83_VECTORS") {
        Some(dir) if !dir.is_empty() => (PathBuf::from(dir), "SM83_VECTORS"),
        _ => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/sm83"),
            "the default (set SM83_VECTORS to use another directory)",
        ),
    }
}

#[test]
fn sm83_single_step_vectors() -> Result<(), String> {
    let (dir, origin) = vector_dir();
    if !dir.is_dir() {
        return Err(format!(
            "SM83 vectors not found: {} is not a directory ({origin})",
            dir.display()
        ));
    }
    let result = run_dir(&dir, None).map_err(|e| {
        format!(
            "SM83 vectors in {} unreadable: {e} ({origin})",
            dir.display()
        )
    })?;
    let total = result.passed + result.failed;
    println!(
        "SM83 vectors: {} files, {}/{} cases passed",
        result.files.len(),
        result.passed,
        total
    );
    if result.failed > 0 {
        let failing_files: Vec<_> = result
            .files
            .iter()
            .filter(|f| f.failed > 0)
            .map(|f| format!("{} ({} failed)", f.file, f.failed))
            .collect();
        eprintln!("failing files: {}", failing_files.join(", "));
        for f in result.failures().take(10) {
            eprintln!("{} / {}:", f.file, f.name);
            for d in &f.diffs {
                eprintln!("    {d}");
            }
        }
    }
    if total == 0 {
        return Err(format!(
            "no vector cases found in {} ({origin})",
            dir.display()
        ));
    }
    if result.failed > 0 {
        return Err(format!("{} of {} cases failed", result.failed, total));
    }
    Ok(())
}
