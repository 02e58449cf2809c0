//! The machine presets of the communication-mechanisms table (issue 5) and `commlab machines
//! --table`: every preset loads and runs EM3D with a correct answer, the table lists every preset
//! with normalised columns consistent with the raw ones, and each machine's figures are near the
//! published table (bisection and 24-byte latency within 10%, misses within 25%).

use crate::common;
use common::*;

use serde_json::Value;

/// One published row: (preset, bisection bytes/cycle, one-way 24-byte latency in cycles, remote
/// miss, local miss, in cycles); None where the table gives n/a or ?.
type Published = (&'static str, Option<f64>, Option<f64>, Option<f64>, f64);

/// The published table.
const TABLE: &[Published] = &[
    ("alewife", Some(18.0), Some(15.0), Some(50.0), 11.0),
    ("cm5", Some(19.4), Some(50.0), None, 16.0),
    ("ksr2", Some(50.0), None, Some(126.0), 18.0),
    ("jmachine", Some(256.0), Some(7.0), None, 7.0),
    ("mmachine", Some(128.0), Some(10.0), Some(154.0), 21.0),
    ("delta", Some(5.4), Some(15.0), None, 10.0),
    ("paragon", Some(56.0), Some(12.0), None, 10.0),
    ("dash", Some(14.5), Some(31.0), Some(120.0), 30.0),
    ("flash", Some(16.0), Some(62.0), Some(352.0), 40.0),
    ("t0", None, Some(200.0), Some(1461.0), 40.0),
    ("t1", None, Some(200.0), Some(401.0), 40.0),
    ("t3d", Some(32.0), Some(15.0), Some(100.0), 23.0),
    // Published as 300-600: the midpoint.
    ("t3e", Some(64.0), Some(110.0), Some(450.0), 80.0),
    ("origin", Some(54.0), Some(60.0), Some(150.0), 61.0),
];

/// Figures the presets cannot reach, with the reason; each is asserted to still be out of
/// tolerance, so that fixing one forces this list to be updated.
const KNOWN_UNMET: &[(&str, &str, &str)] = &[
    (
        "delta",
        "net_latency_cycles",
        "at the published 5.4 bytes/cycle over a 4x8 mesh's 8 cut links, serializing 24 bytes alone takes 36 cycles",
    ),
    (
        "origin",
        "remote_miss_cycles",
        "the bisection over a 5-cube's 32 cut links gives 1.69 bytes/cycle links: a 128-byte line takes 80 cycles",
    ),
];

fn table_rows() -> Vec<Value> {
    let out = commlab().args(["machines", "--table", "--json"]).output().expect("run commlab");
    assert!(out.status.success(), "machines --table --json failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is a JSON object"))
        .collect()
}

fn row<'a>(rows: &'a [Value], name: &str) -> &'a Value {
    rows.iter().find(|r| r["machine"] == name).unwrap_or_else(|| panic!("machine {name} missing from the table"))
}

#[test]
fn every_table_machine_runs_em3d_with_a_correct_answer() {
    for (name, ..) in TABLE {
        let out = commlab()
            .args(["run", "em3d", "--machine", name, "--param", "nodes=640", "--param", "iterations=1", "--json"])
            .output()
            .expect("run commlab");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "em3d on {name}: exit {:?}: {stderr}", out.status.code());
        let stdout = String::from_utf8(out.stdout).expect("UTF-8");
        let runs: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
        assert!(!runs.is_empty(), "em3d on {name}: no results");
        for r in &runs {
            assert_eq!(r["check"]["ok"], true, "em3d {} on {name}: check failed: {}", r["variant"], r["check"]);
            assert_eq!(r["procs"], 32, "{name} is a 32-processor machine");
        }
    }
}

#[test]
fn machine_table_lists_every_preset_with_consistent_normalised_columns() {
    let rows = table_rows();
    let listing = commlab().arg("machines").output().expect("run commlab");
    let names: Vec<String> = String::from_utf8(listing.stdout)
        .expect("UTF-8")
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().expect("a name").to_string())
        .collect();
    let table_names: Vec<&str> = rows.iter().map(|r| r["machine"].as_str().expect("name")).collect();
    assert_eq!(table_names, names, "one table row per preset, in the listing's order");
    for (name, ..) in TABLE {
        assert!(names.iter().any(|n| n == name), "preset {name} is shipped");
    }
    for r in &rows {
        let f = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{}: {k} is a number", r["machine"]));
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        assert!(f("local_miss_cycles") > 0.0);
        assert!(close(f("bisection_bytes_per_local_miss"), f("bisection_bytes_per_cycle") * f("local_miss_cycles")));
        assert!(close(f("net_latency_local_misses"), f("net_latency_cycles") / f("local_miss_cycles")));
        assert!(close(f("remote_miss_cycles"), (f("remote_miss_best_cycles") + f("remote_miss_worst_cycles")) / 2.0));
        assert!(f("remote_miss_best_cycles") <= f("remote_miss_worst_cycles"));
    }
    // The text table: a header with units, then one row per preset with right-aligned numbers.
    let out = commlab().args(["machines", "--table"]).output().expect("run commlab");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 + rows.len());
    for unit in ["(MHz)", "(B/cycle)", "(cycles)", "(B/local miss)", "(local misses)"] {
        assert!(lines[1].contains(unit), "header names the unit {unit}: {}", lines[1]);
    }
    let width = lines[1].len();
    assert!(lines[2..].iter().all(|l| l.len() == width), "numbers right-aligned to the header:\n{text}");
}

#[test]
fn table_machines_match_the_published_figures() {
    let rows = table_rows();
    let mut failures = Vec::new();
    for &(name, bisection, latency, remote, local) in TABLE {
        let r = row(&rows, name);
        let checks = [
            ("bisection_bytes_per_cycle", bisection, 0.10),
            ("net_latency_cycles", latency, 0.10),
            ("remote_miss_cycles", remote, 0.25),
            ("local_miss_cycles", Some(local), 0.25),
        ];
        for (key, published, tol) in checks {
            let Some(published) = published else { continue };
            let measured = r[key].as_f64().expect("a number");
            let err = (measured - published) / published;
            let unmet = KNOWN_UNMET.iter().find(|(m, k, _)| *m == name && *k == key);
            match unmet {
                Some((.., why)) => assert!(
                    err.abs() > tol,
                    "{name} {key} is now within {:.0}% ({measured:.1} vs {published}); remove it from KNOWN_UNMET ({why})",
                    100.0 * tol
                ),
                None if err.abs() > tol => failures
                    .push(format!("{name} {key}: {measured:.1} vs published {published} ({:+.1}%)", 100.0 * err)),
                None => {}
            }
        }
    }
    assert!(failures.is_empty(), "out of tolerance:\n{}", failures.join("\n"));
}

/// Every preset defines every cost entry any preset defines, so an app that runs on one runs
/// on all (dec8400 lacked fft_butterfly: the fft2d branch and the dec8400 branch were made
/// side by side).
#[test]
fn every_preset_has_every_cost_entry() {
    let out = commlab().args(["machines"]).output().expect("runs");
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(names.len() >= 19, "{names:?}");
    let costs = |name: &str| -> Vec<String> {
        let out = commlab().args(["machine", "show", name, "--json"]).output().expect("runs");
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        v["spec"]["costs"].as_object().expect("costs").keys().cloned().collect()
    };
    let all: std::collections::BTreeSet<String> = names.iter().flat_map(|n| costs(n)).collect();
    for n in &names {
        let have: std::collections::BTreeSet<String> = costs(n).into_iter().collect();
        let missing: Vec<_> = all.difference(&have).collect();
        assert!(missing.is_empty(), "{n} lacks costs {missing:?}");
    }
}

#[test]
fn a_machine_file_starts_from_a_preset_and_machine_diff_shows_the_difference() {
    // Issue 36: a one-key variation needed the whole 130-line dump, and there was no way to
    // see how two machines differ.
    let d = common::TempDir::new("base");
    std::fs::create_dir_all(d.path()).unwrap();
    let file = d.file("slow-router.toml");
    std::fs::write(&file, "base = \"alewife\"\n[network]\nrouter_latency_ns = 80\n").unwrap();
    let path = file.to_str().unwrap();
    let by_file = common::ok(&["run", "am-latency", "--machine", path, "--variant", "mp-int", "--json"]);
    let by_set =
        common::ok(&["run", "am-latency", "--variant", "mp-int", "--json", "--set", "network.router_latency_ns=80"]);
    let cycles = |s: &str| serde_json::from_str::<Value>(s.trim()).unwrap()["cycles"].as_f64().unwrap();
    assert_eq!(cycles(&by_file), cycles(&by_set), "the file is alewife with one key changed");
    let diff = common::ok(&["machine", "diff", "alewife", path]);
    let lines: Vec<&str> = diff.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines,
        ["name [text]: \"alewife\" | \"slow-router\"", "network.router_latency_ns [ns]: 40.0 | 80.0"],
        "{diff}"
    );
    assert!(common::ok(&["machine", "diff", "alewife", "alewife"]).contains("no differences"));
    std::fs::write(&file, "base = \"nosuch\"\n").unwrap();
    common::bad_input(&["machine", "show", path], &["machine key `base`", "`nosuch` is not a preset", "alewife"]);
    std::fs::write(&file, "base = \"alewife\"\n[network]\nrouter_latency = 80\n").unwrap();
    common::bad_input(&["machine", "show", path], &["unknown field `router_latency`"]);
}
