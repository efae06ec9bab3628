//! Runs every SingleStepTests SM83 vector file and requires all cases to pass.
//!
//! Vectors are read from `$SM83_VECTORS` if set, else from
//! `<crate>/../../../shared/data/sm83-dev` (or `<repo>/shared/data/sm83-dev` when only that
//! exists). A missing directory fails the test.

use std::path::PathBuf;

use emurust_core::sst::run_dir;

fn vector_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SM83_VECTORS") {
        return PathBuf::from(dir);
    }
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let default = crate_dir.join("../../../shared/data/sm83-dev");
    // A checkout may also carry the data set inside the repository (shared/ at its root).
    let in_repo = crate_dir.join("../../shared/data/sm83-dev");
    if !default.is_dir() && in_repo.is_dir() {
        return in_repo;
    }
    default
}

#[test]
fn sm83_single_step_vectors() {
    let dir = vector_dir();
    let result = run_dir(&dir, None).unwrap_or_else(|e| {
        panic!(
            "SM83 vectors unavailable ({e}); put the SingleStepTests sm83 files at {} \
             or point SM83_VECTORS at them",
            dir.display()
        )
    });
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
    assert!(total > 0, "no cases found in {}", dir.display());
    assert_eq!(
        result.failed, 0,
        "{} of {} cases failed",
        result.failed, total
    );
}
