//! `commlab bench --baseline PATH`: another build measured side by side, with the ratio of
//! wall times and a check that both counted the same events (or the ratio of their events).

use crate::common;
use common::*;

use serde_json::Value;

fn rows(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

#[test]
fn a_build_measured_against_itself_counts_the_same_events() {
    let me = env!("CARGO_BIN_EXE_commlab");
    let out = rows(&ok(&["bench", "--only", "hotspot-32", "--repeat", "2", "--json", "--baseline", me]));
    assert_eq!(out.len(), 2, "one workload row and the summary: {out:?}");
    let (row, summary) = (&out[0], &out[1]);
    assert_eq!(row["workload"], "hotspot-32");
    assert_eq!(row["baseline_events_same"], true);
    assert_eq!(row["baseline_events"], row["events"]);
    assert_eq!(row["events_ratio"], 1.0);
    let (wall, base, ratio) = (
        row["wall_seconds"].as_f64().unwrap(),
        row["baseline_wall_seconds"].as_f64().unwrap(),
        row["wall_ratio"].as_f64().unwrap(),
    );
    assert!(wall > 0.0 && base > 0.0, "{row}");
    assert!((ratio - wall / base).abs() <= 1e-12 * ratio, "{row}");
    assert_eq!(summary["workload"], "baseline-summary");
    assert_eq!(summary["workloads"], 1);
    assert_eq!(summary["events_differ"], serde_json::json!([]));
    assert!(summary["events_ratio_geomean"].is_null(), "no workload differs: {summary}");
    assert!((summary["wall_ratio_geomean"].as_f64().unwrap() - ratio).abs() <= 1e-12 * ratio, "{summary}");
}

/// A stand-in baseline: a shell script `old-commlab` in a new directory that answers
/// `--version` as commlab does and runs `bench` as `bench_body` says.
#[cfg(unix)]
fn stand_in(bench_body: &str) -> TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("bench-baseline");
    std::fs::create_dir_all(dir.path()).unwrap();
    let script = dir.file("old-commlab");
    let text = format!("#!/bin/sh\ncase \"$1\" in\n--version) echo 'commlab 0.0.0';;\n*) {bench_body};;\nesac\n");
    std::fs::write(&script, text).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// A baseline that counts other events is named, in its row and in the summary. Given as a
/// bare name, the baseline is the file in the current directory, not one on `$PATH`.
#[cfg(unix)]
#[test]
fn a_baseline_with_other_events_is_named() {
    let dir = stand_in("echo '{\"workload\":\"hotspot-32\",\"wall_seconds\":1.0,\"events\":7}'");
    let out = commlab()
        .current_dir(dir.path())
        .args(["bench", "--only", "hotspot-32", "--repeat", "1", "--baseline", "old-commlab"])
        .output()
        .expect("run commlab");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let row = text.lines().find(|l| l.starts_with("hotspot-32")).expect("the workload's row");
    // The events column gives this build's events over the baseline's 7.
    let events: f64 = row.split_whitespace().nth(1).unwrap().parse().unwrap();
    let shown = row.split_whitespace().last().unwrap();
    assert_eq!(shown, format!("x{:.3}", events / 7.0), "{text}");
    assert!(text.contains(&format!("events differ in: hotspot-32 (events new/base {:.3}", events / 7.0)), "{text}");
}

/// A baseline that fails on a workload ends the run as a failure (exit 1: rows may already
/// be out), with the baseline's own message once, not prefixed twice.
#[cfg(unix)]
#[test]
fn a_baseline_that_fails_a_workload_is_reported_with_its_message() {
    let dir = stand_in("echo 'commlab: unknown workload `hotspot-32`' >&2; exit 2");
    let script = dir.file("old-commlab");
    let out = commlab()
        .args(["bench", "--only", "hotspot-32", "--repeat", "1", "--baseline", script.to_str().unwrap()])
        .output()
        .expect("run commlab");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("failed on workload hotspot-32: unknown workload `hotspot-32`"), "{stderr}");
    assert_eq!(stderr.matches("commlab: ").count(), 1, "{stderr}");
}

#[test]
fn a_baseline_that_is_not_a_commlab_binary_is_refused() {
    bad_input(
        &["bench", "--only", "hotspot-32", "--baseline", "/nonexistent/commlab"],
        &["--baseline", "/nonexistent/commlab", "cannot run"],
    );
    #[cfg(unix)]
    bad_input(
        &["bench", "--only", "hotspot-32", "--baseline", "/bin/true"],
        &["--baseline", "/bin/true", "not a commlab binary"],
    );
}

/// `--instructions`: each workload's host instructions under cachegrind, this build's and the
/// baseline's. A build counted against itself gives the same count to within the few dozen
/// instructions its printing of wall times varies by, and the row's per-event figure and the
/// summary's ratio follow from the counts.
#[test]
fn instructions_of_a_build_against_itself_agree() {
    let me = env!("CARGO_BIN_EXE_commlab");
    let out =
        rows(&ok(&["bench", "--only", "hotspot-32", "--repeat", "1", "--json", "--instructions", "--baseline", me]));
    assert_eq!(out.len(), 2, "one workload row and the summary: {out:?}");
    let (row, summary) = (&out[0], &out[1]);
    let (new, base) = (row["instructions"].as_u64().unwrap(), row["baseline_instructions"].as_u64().unwrap());
    // The workload's simulation alone takes over a hundred instructions per event.
    let events = row["events"].as_u64().unwrap();
    assert!(new > 100 * events, "{row}");
    assert!(new.abs_diff(base) < 1000, "the same build counted {new} and {base}: {row}");
    let per_event = row["instructions_per_event"].as_f64().unwrap();
    assert!((per_event - new as f64 / events as f64).abs() < 1e-9 * per_event, "{row}");
    let ratio = row["instructions_ratio"].as_f64().unwrap();
    assert!((ratio - new as f64 / base as f64).abs() < 1e-12, "{row}");
    assert!((summary["instructions_ratio_geomean"].as_f64().unwrap() - ratio).abs() < 1e-12, "{summary}");
}

/// Without Valgrind on PATH, `--instructions` is refused before any row, naming what is missing.
#[test]
fn instructions_without_valgrind_is_refused() {
    let empty = TempDir::new("no-valgrind");
    std::fs::create_dir_all(empty.path()).unwrap();
    let out = commlab()
        .env("PATH", empty.path())
        .args(["bench", "--only", "hotspot-32", "--repeat", "1", "--instructions"])
        .output()
        .expect("run commlab");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "no row before the refusal: {}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--instructions") && err.contains("`valgrind` is not on PATH"), "{err}");
}
