//! Regression (issue 36, item 10): off a terminal, sweep and experiment printed "point N/M
//! done" with no elapsed time or ETA, a slow point printed nothing until it finished, and
//! nothing said how long a command took. Progress and the closing line go to stderr; stdout
//! stays the command's output.

use crate::common;
use common::*;

/// `commlab args` with `COMMLAB_PROGRESS_EVERY_S=every`, expecting success: (stdout, stderr).
fn with_every(every: &str, args: &[&str]) -> (String, String) {
    let out = commlab().env("COMMLAB_PROGRESS_EVERY_S", every).args(args).output().expect("run commlab");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "commlab {args:?}: {stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

#[test]
fn sweep_lines_have_elapsed_and_eta_and_the_command_its_time() {
    let dir = TempDir::new("progress-sweep");
    let args = ["sweep", "am-latency", "--vary", "network.router_latency_ns=10:100:3", "--out", dir.arg()];
    let (_, err) = with_every("0", &args);
    let lines: Vec<&str> = err.lines().collect();
    let runs: Vec<&&str> = lines.iter().filter(|l| l.contains(" runs, ")).collect();
    assert_eq!(runs.len(), 6, "a line per run with no interval:\n{err}");
    for l in &runs {
        assert!(l.contains(" elapsed, ETA ") && l.contains("cycles)"), "{l}");
    }
    assert!(runs[5].starts_with("sweep am-latency: 6/6 runs, "), "{err}");
    assert!(lines.last().unwrap().starts_with("commlab sweep: done in "), "{err}");
    // At the default interval (10 s) a short sweep says when it is done; no line per run, and
    // no closing line for a command of under 3 s.
    let dir = TempDir::new("progress-sweep-default");
    let args = ["sweep", "am-latency", "--vary", "network.router_latency_ns=10:100:3", "--out", dir.arg()];
    let out = commlab().env_remove("COMMLAB_PROGRESS_EVERY_S").args(args).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    let runs = err.lines().filter(|l| l.contains(" runs, ")).count();
    assert!((1..=2).contains(&runs), "{err}");
    assert!(err.contains("sweep am-latency: 6/6 runs, "), "{err}");
}

#[test]
fn a_slow_run_is_not_silent() {
    // One run of a few hundred milliseconds: the ticker reports it before it finishes.
    let dir = TempDir::new("progress-ticker");
    let args = ["sweep", "em3d", "--variant", "sm", "--vary", "iterations=4", "--out", dir.arg()];
    let (_, err) = with_every("0.02", &args);
    assert!(err.contains("sweep em3d: 0/1 runs, ") && err.contains("ETA unknown"), "{err}");
    assert!(err.contains("sweep em3d: 1/1 runs, "), "{err}");
}

#[test]
fn a_long_run_reports_off_a_terminal() {
    let (_, err) = with_every("0.02", &["run", "em3d", "--variant", "sm", "--param", "iterations=4", "--json"]);
    let line = err.lines().find(|l| l.starts_with("run em3d: simulated cycle ")).unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains(" events, ") && line.contains(" elapsed"), "{line}");
}

#[test]
fn experiment_variants_report_progress() {
    let dir = TempDir::new("progress-experiment");
    let (_, err) = with_every("0", &["experiment", "volume", "am-latency", "--out", dir.arg()]);
    assert!(err.contains("experiment volume am-latency: 2/2 runs, ") && err.contains(" elapsed, ETA "), "{err}");
    assert!(err.contains("commlab experiment: done in "), "{err}");
    // A variant that refuses its input is the one line of bad input (found by every_command.rs;
    // a first line "2 runs to do" came before it), and so is a sweep's run.
    let out = commlab()
        .env("COMMLAB_PROGRESS_EVERY_S", "0")
        .args(["experiment", "volume", "am-latency", "--procs", "1", "--out", &format!("{}/small", dir.arg())])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.lines().count() == 1 && err.starts_with("commlab: "), "{err}");
    let small = format!("{}/sweep", dir.arg());
    let out = commlab()
        .env("COMMLAB_PROGRESS_EVERY_S", "0")
        .args(["sweep", "am-latency", "--procs", "1", "--vary", "rounds=1,2", "--jobs", "1", "--out", &small])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.lines().count() == 1 && err.starts_with("commlab: "), "{err}");
}

#[test]
fn the_closing_line_is_on_stderr_and_failures_stay_one_line() {
    let (out, err) = with_every("0", &["run", "am-latency", "--variant", "mp-int", "--json"]);
    let last = err.lines().last().unwrap_or_default();
    assert!(last.starts_with("commlab run: done in "), "{err}");
    assert!(err.lines().all(|l| l == last || l.starts_with("run am-latency: simulated cycle ")), "{err}");
    serde_json::from_str::<serde_json::Value>(out.trim()).expect("stdout is the record alone");
    // A quick command at the default interval says nothing more.
    let out = commlab().env_remove("COMMLAB_PROGRESS_EVERY_S").args(["apps"]).output().unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    // Bad input stays the one `commlab: ` line.
    let out = commlab().env("COMMLAB_PROGRESS_EVERY_S", "0").args(["run", "no-such-app"]).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(err.lines().count() == 1 && err.starts_with("commlab: "), "{err}");
}
