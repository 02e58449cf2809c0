//! Host instructions a command executes, counted by Valgrind's cachegrind (`commlab bench
//! --instructions`). Wall time on a shared machine varies by a third from run to run, so a
//! step of a few percent in the simulator's cost shows only in a count that does not: the
//! instructions of one run are the same every time for the same binary and input, but for a
//! few dozen (printing the wall time it measured takes more or fewer digits), so a ratio of
//! two builds' counts is good to about one part in ten million.
//!
//! Cachegrind runs the program about fifty times slower; it is asked to count instructions
//! only (`--cache-sim=no`), and its summary line gives the total.

use crate::failure::{failed, input, Failure};
use std::path::Path;
use std::process::Command;

/// The program that counts: refused before any row is printed when it is not installed.
pub fn check_valgrind() -> Result<(), Failure> {
    let out = Command::new("valgrind").arg("--version").output();
    match out {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err(input(
            "--instructions counts with Valgrind's cachegrind, and `valgrind` is not on PATH \
             (Debian: apt-get install valgrind)",
        )),
    }
}

/// The instructions `exe args...` executes, under cachegrind; its output is discarded. `what`
/// names the run in an error.
pub fn count(exe: &Path, args: &[&str], what: &str) -> Result<u64, Failure> {
    let out_file = tempfile::NamedTempFile::new().map_err(|e| failed(format!("{what}: a temporary file: {e}")))?;
    let out = Command::new("valgrind")
        .args(["--tool=cachegrind", "--cache-sim=no", "--quiet"])
        .arg(format!("--cachegrind-out-file={}", out_file.path().display()))
        .arg(exe)
        .args(args)
        .output()
        .map_err(|e| failed(format!("{what}: cannot run valgrind: {e}")))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no message");
        return Err(failed(format!("{what} under valgrind failed ({}): {last}", out.status)));
    }
    let text = std::fs::read_to_string(out_file.path())
        .map_err(|e| failed(format!("{what}: reading cachegrind's output: {e}")))?;
    summary(&text).ok_or_else(|| failed(format!("{what}: cachegrind's output has no `summary:` line")))
}

/// The total of a cachegrind output file: its `summary:` line (instructions only, as
/// `--cache-sim=no` records).
fn summary(text: &str) -> Option<u64> {
    text.lines().find_map(|l| l.strip_prefix("summary:")).and_then(|v| v.split_whitespace().next()?.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn the_summary_line_gives_the_total() {
        let text = "desc: I1 cache: none\ncmd: x\nevents: Ir\nfl=a.rs\n12 5\nsummary: 11625130441\n";
        assert_eq!(summary(text), Some(11_625_130_441));
        assert_eq!(summary("events: Ir\nsummary: \n"), None);
        assert_eq!(summary("events: Ir\n"), None);
    }
}
