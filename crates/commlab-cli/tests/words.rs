//! Regression (issue 36, item 9): words that disagreed with behaviour. `run --variant` took no
//! list where sweep and experiment did; `--jobs` defaulted to the cores for run, 1 for sweep
//! and 2 for experiment; the top-level help's experiment list lacked four; validate's table
//! had no units; `sweep --machine host` said "unknown machine"; `characterize --quick` said
//! "about a minute" (3 s).

use crate::common;
use common::*;

use serde_json::Value;

#[test]
fn run_takes_a_list_of_variants_as_sweep_does() {
    let out = ok(&["run", "am-latency", "--variant", "mp-poll,mp-int", "--json"]);
    let variants: Vec<String> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["variant"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(variants, ["mp-int", "mp-poll"], "in the app's order, each once");
    bad_input(&["run", "am-latency", "--variant", "mp-int,warp"], &["warp"]);
}

#[test]
fn jobs_default_to_the_cores_everywhere() {
    for cmd in ["run", "sweep", "experiment", "reproduce"] {
        let help = ok(&[cmd, "--help"]);
        let jobs = help.split("      --jobs <").nth(1).unwrap_or_else(|| panic!("{cmd}: no --jobs"));
        let jobs: String = jobs.split("\n\n").next().unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(jobs.contains("[default: the"), "{cmd} --jobs: {jobs}");
        assert!(jobs.contains("cores"), "{cmd} --jobs: {jobs}");
        assert!(!jobs.contains("[default: 1]") && !jobs.contains("[default: 2]"), "{cmd} --jobs: {jobs}");
    }
}

#[test]
fn the_top_level_help_lists_every_experiment() {
    let help = ok(&["--help"]);
    let line = help.lines().find(|l| l.trim_start().starts_with("experiment")).expect("an experiment line");
    for name in [
        "bisection",
        "latency",
        "overhead",
        "aggregation",
        "volume",
        "grain",
        "memcpy",
        "copy-transfer",
        "fft2d",
        "blizzard",
    ] {
        assert!(line.contains(name), "{name} missing: {line}");
    }
}

#[test]
fn validate_text_gives_each_rows_unit() {
    let out = ok(&["validate"]);
    let header = out.lines().next().unwrap();
    assert!(header.contains(" unit "), "{header}");
    let row = out.lines().nth(1).unwrap();
    assert!(row.contains(" cycles "), "{row}");
}

#[test]
fn host_is_refused_by_simulating_commands_as_not_supported() {
    let dir = TempDir::new("words-host");
    bad_input(
        &["sweep", "am-latency", "--machine", "host", "--vary", "rounds=2,3", "--out", dir.arg()],
        &["--machine host is not supported here", "only `commlab run`"],
    );
    bad_input(&["validate", "--machine", "host"], &["not supported here"]);
}

#[test]
fn characterize_quick_says_seconds() {
    let help = ok(&["characterize", "--help"]);
    assert!(!help.contains("about a minute"), "{help}");
}
