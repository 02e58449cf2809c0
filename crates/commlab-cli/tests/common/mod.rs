//! Helpers shared by the black-box tests of the `commlab` binary: running it, the bad-input
//! contract (exit status 2, exactly one `commlab: ` line on stderr naming the input), temporary
//! directories, and reading JSON Lines results.

// Each test file uses a subset.
#![allow(dead_code)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub fn commlab() -> Command {
    Command::cargo_bin("commlab").expect("the commlab binary is built")
}

/// Run `commlab args` expecting success (and no panic); return stdout.
pub fn ok(args: &[&str]) -> String {
    let out = commlab().args(args).output().expect("run commlab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "commlab {args:?} failed ({:?}):\n{stderr}", out.status.code());
    assert!(!stderr.contains("panicked"), "commlab {args:?} panicked:\n{stderr}");
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// Run `commlab args` expecting the bad-input contract; check that the single stderr line
/// contains every one of `needles`; return that line.
pub fn bad_input(args: &[&str], needles: &[&str]) -> String {
    let out = commlab().args(args).output().expect("run commlab");
    let stderr = String::from_utf8(out.stderr).expect("stderr is UTF-8");
    let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    assert!(!stderr.contains("panicked"), "commlab {args:?} panicked:\n{stderr}");
    assert_eq!(out.status.code(), Some(2), "commlab {args:?}: exit status; stderr:\n{stderr}");
    assert!(stdout.is_empty(), "commlab {args:?}: nothing expected on stdout, got:\n{stdout}");
    assert!(stderr.ends_with('\n'), "commlab {args:?}: stderr line not terminated: {stderr:?}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "commlab {args:?}: expected exactly one stderr line, got:\n{stderr}");
    let line = lines[0];
    assert!(line.starts_with("commlab: "), "commlab {args:?}: stderr line must start with `commlab: `: {line}");
    for n in needles {
        assert!(line.contains(n), "commlab {args:?}: stderr line should mention `{n}`: {line}");
    }
    line.to_string()
}

/// A path under the system temp directory, unique to this process and call (not created);
/// removed with its contents when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        TempDir(std::env::temp_dir().join(format!("commlab-test-{}-{n}-{name}", std::process::id())))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn arg(&self) -> &str {
        self.0.to_str().expect("temp path is UTF-8")
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Every line of a JSON Lines file, parsed.
pub fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l:?}: {e}")))
        .collect()
}

/// The contents of an SVG's `<text>` elements, trimmed, with `&amp;`, `&lt;` and `&gt;` decoded.
pub fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..t.find("</text>")?];
            Some(body.trim().replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
        })
        .collect()
}
