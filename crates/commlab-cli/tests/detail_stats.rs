//! Issue 19, defect 10: `commlab run --stats per-node=FILE --stats per-link=FILE` writes the
//! statistics behind the means, and they agree with them.

mod common;

use common::{bad_input, json_lines, ok, TempDir};
use serde_json::Value;

#[test]
fn per_node_and_per_link_statistics_agree_with_the_run() {
    let d = TempDir::new("stats");
    std::fs::create_dir_all(d.path()).unwrap();
    let (nodes, links) = (d.file("nodes.jsonl"), d.file("links.csv"));
    let out = ok(&[
        "run",
        "em3d",
        "--variant",
        "mp-int",
        "--procs",
        "8",
        "--param",
        "nodes=400",
        "--param",
        "iterations=2",
        "--json",
        "--stats",
        &format!("per-node={}", nodes.display()),
        "--stats",
        &format!("per-link={}", links.display()),
    ]);
    let run: Value = serde_json::from_str(out.trim()).unwrap();
    let rows = json_lines(&nodes);
    assert_eq!(rows.len(), 8, "one row per processor");
    for cat in ["compute", "memory_ni_wait", "message_overhead", "synchronization"] {
        let mean = rows.iter().map(|r| r[cat].as_f64().unwrap()).sum::<f64>() / 8.0;
        let want = run["breakdown"][cat].as_f64().unwrap();
        assert!((mean - want).abs() <= 1e-6 * want.max(1.0), "{cat}: rows mean {mean}, run {want}");
    }
    let sent: u64 = rows.iter().map(|r| r["messages_sent"].as_u64().unwrap()).sum();
    let received: u64 = rows.iter().map(|r| r["messages_received"].as_u64().unwrap()).sum();
    assert_eq!(sent as f64, run["counters"]["messages"].as_f64().unwrap());
    assert_eq!(sent, received, "every message sent is received");

    let text = std::fs::read_to_string(&links).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("app,variant,link,kind,from,to,utilization,bytes"));
    let total: u64 = run["volume_bytes"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    let injected: u64 = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| c[3] == "injection")
        .map(|c| c[7].parse::<u64>().unwrap())
        .sum();
    assert!(injected > 0 && injected <= total, "{injected} bytes injected after timing began, {total} counted");
}

#[test]
fn a_bad_stats_request_is_one_line() {
    bad_input(
        &["run", "am-latency", "--stats", "per-router=x.jsonl"],
        &["--stats `per-router`", "per-node", "per-link"],
    );
    bad_input(&["run", "am-latency", "--stats", "nodes.jsonl"], &["per-node=FILE"]);
}

#[test]
fn two_outputs_on_one_file_are_refused_before_the_run() {
    // Regression (issue 36): `--json --out same.jsonl --stats per-node=same.jsonl` exited 0
    // with the per-node rows only; the run records were lost.
    let d = TempDir::new("same-file");
    std::fs::create_dir_all(d.path()).unwrap();
    let same = d.file("same.jsonl");
    let same = same.to_str().unwrap();
    let other = d.file("./sub/../same.jsonl");
    let other = other.to_str().unwrap();
    for args in [
        vec!["run", "am-latency", "--json", "--out", same, "--stats", &format!("per-node={same}")],
        vec!["run", "am-latency", "--csv", "--out", same, "--stats", &format!("per-link={other}")],
        vec!["run", "am-latency", "--stats", &format!("per-node={same}"), "--stats", &format!("per-link={same}")],
    ] {
        bad_input(&args, &["same file", same]);
        assert!(!d.file("same.jsonl").exists(), "nothing written: {args:?}");
    }
}

#[test]
fn an_unwritable_stats_or_out_file_is_found_before_the_run() {
    // Regression (issue 36): an unwritable --stats path was found after the run; `--out
    // /proc/version` said "Input/output error" without naming the file.
    let started = std::time::Instant::now();
    bad_input(
        &["run", "em3d", "--param", "iterations=200", "--stats", "per-node=/proc/version"],
        &["--stats per-node", "/proc/version"],
    );
    bad_input(&["run", "am-latency", "--json", "--out", "/proc/version"], &["--out", "/proc/version"]);
    bad_input(
        &["run", "am-latency", "--stats", "per-link=/proc/no/such.csv"],
        &["--stats per-link", "/proc/no/such.csv"],
    );
    assert!(started.elapsed().as_secs() < 10, "refused before running the 200 iterations");
}
