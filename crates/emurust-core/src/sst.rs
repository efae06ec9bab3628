//! STUB of the single-step vector runner (the CPU helper replaces this file).
use std::path::Path;

pub struct CaseFailure {
    pub file: String,
    pub name: String,
    pub diffs: Vec<String>,
}

#[derive(Default)]
pub struct FileResult {
    pub passed: usize,
    pub failed: usize,
    pub failures: Vec<CaseFailure>,
}

pub fn run_file(path: &Path) -> Result<FileResult, String> {
    Err(format!("vector runner not built yet: {}", path.display()))
}
