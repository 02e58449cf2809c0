//! Regression (issue 19, defect 3): `commlab apps | head -1` and `commlab machine show
//! alewife | head -2` panicked with a backtrace (exit 101). Every command now ends quietly
//! when the reader of its output goes away.

use std::process::{Command, Stdio};

fn closed_early(args: &[&str]) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_commlab"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the pipe before the command writes anything, as `commlab apps | true` does.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert_ne!(out.status.code(), Some(101), "{args:?}: {stderr}");
}

#[test]
fn every_listing_command_ends_quietly_on_a_closed_pipe() {
    for args in [
        &["apps"][..],
        &["counters"],
        &["machines"],
        &["machine", "show", "alewife"],
        &["validate"],
        &["run", "barrier", "--variant", "all", "--csv"],
    ] {
        closed_early(args);
    }
    let dir = std::env::temp_dir().join(format!("commlab-broken-pipe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let matrices = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/matrices");
    closed_early(&["reproduce", "alewife", "--quick", "--matrices", matrices, "--out", dir.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
}
