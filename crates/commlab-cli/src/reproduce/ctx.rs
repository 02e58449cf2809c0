//! What each study's module is given: the quick switch, the matrices and the user's `--set`.

use crate::failure::{input, Failure};
use std::path::PathBuf;

/// What a study's module is given.
pub(crate) struct Ctx {
    pub quick: bool,
    /// The studies' matrices.
    pub matrices: PathBuf,
    /// The user's `--set`, in every run before the run's own.
    pub set: Vec<String>,
}

impl Ctx {
    /// The study's values of an axis, or its reduced `--quick` ones.
    pub fn pick<T: Clone>(&self, full: &[T], quick: &[T]) -> Vec<T> {
        if self.quick { quick } else { full }.to_vec()
    }

    /// A matrix of the study by file name, checked to exist.
    pub fn matrix(&self, file: &str) -> Result<String, Failure> {
        let p = self.matrices.join(file);
        if p.is_file() {
            Ok(p.display().to_string())
        } else {
            Err(input(format!(
                "--matrices {}: no `{file}` there (the study's matrix; give the directory that holds it)",
                self.matrices.display()
            )))
        }
    }
}
